"""``python -m kgsql VERB``: one command for every verb, one line for every error."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from kgsql.__main__ import VERBS, main


def test_every_verb_names_a_module_with_main() -> None:
    for verb, (module, _help) in VERBS.items():
        assert callable(importlib.import_module(module).main), verb


def test_help_lists_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {verb} " in out for verb in VERBS)
    assert main([]) == 2  # no verb: the usage, and a non-zero status


def test_unknown_verb_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["injest"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kgsql: unknown verb 'injest'") and "\n" not in err


def test_a_verb_gets_its_arguments_and_its_errors_stay_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["eval", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    err = capsys.readouterr().err.strip()
    assert status != 0 and "a.jsonl" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_module_entry_point_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "kgsql", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "verbs:" in done.stdout
