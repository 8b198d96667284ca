"""Issue 31's ceilings, kept: no source file of kgsql/ over 450 lines, no function over 80 (one idea each)."""
from __future__ import annotations

import ast
from pathlib import Path

import kgsql

ROOT = Path(kgsql.__file__).parent
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 80


def test_no_source_file_over_the_ceiling() -> None:
    long = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES}
    assert long == {}


def test_no_function_over_the_ceiling() -> None:
    long = {}
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert long == {}
