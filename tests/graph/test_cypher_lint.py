"""Every Cypher statement kgsql runs parses with Neo4j's own parser."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kgsql.graph import cypher

REPO = Path(__file__).resolve().parents[2]
LINTER = REPO / "tools" / "cypher-lint"


def test_every_statement_file_loads():
    files = cypher.all_files()
    assert {"constraints", "tables_upsert", "columns_upsert", "relates_to_create"} <= set(files)
    for name in files:
        assert cypher.statements(name), name


def test_no_cypher_is_built_in_python_code():
    """All Cypher lives in cypher/*.cypher: Python code holds no query strings of its own."""
    pattern = re.compile(r"""["'](MATCH|MERGE|UNWIND|CREATE|OPTIONAL MATCH)\s*\(""")
    offenders = [
        str(p.relative_to(REPO))
        for p in (REPO / "kgsql").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_cypher_parses_with_neo4j_parser():
    if shutil.which("node") is None or not (LINTER / "node_modules").exists():
        pytest.skip("Neo4j's Cypher parser not installed: run `npm ci --prefix tools/cypher-lint` (.ci/run does)")
    sources = {f"{name}#{i}": stmt for name in cypher.all_files() for i, stmt in enumerate(cypher.statements(name))}
    proc = subprocess.run(["node", str(LINTER / "lint.cjs")], input=json.dumps(sources),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == []


def test_linter_catches_bad_cypher():
    if shutil.which("node") is None or not (LINTER / "node_modules").exists():
        pytest.skip("Neo4j's Cypher parser not installed")
    proc = subprocess.run(["node", str(LINTER / "lint.cjs")], input=json.dumps({"bad": "MATCH (n RETURN n"}),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Invalid input" in proc.stdout
