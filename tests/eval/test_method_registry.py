"""No silent fallback (issue 31): when the method registry does not import, every run fails with one line.

Before, a registry that failed to import left a warning on stderr and ran the classic pipeline as
``kgsql``, so a run could measure another method than the one it named.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Any

import pytest

import kgsql
from kgsql.errors import KgsqlError
from kgsql.eval import method as eval_method


class _Failing(importlib.abc.MetaPathFinder):
    """Makes ``import kgsql.methods`` raise ``error``, as a registry half-changed by its owner would."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "kgsql.methods":
            raise self.error


def _break_registry(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    monkeypatch.delitem(sys.modules, "kgsql.methods", raising=False)
    monkeypatch.delattr(kgsql, "methods", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_Failing(error), *sys.meta_path])


@pytest.mark.parametrize("error", [ModuleNotFoundError("No module named 'kgsql.methods'", name="kgsql.methods"),
                                   RuntimeError("half-finished registry")], ids=["missing", "broken"])
def test_a_registry_that_does_not_import_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    _break_registry(monkeypatch, error)
    with pytest.raises(KgsqlError, match="kgsql.methods does not import") as raised:
        eval_method.make_method("kgsql", graph=None, lm=None)
    assert "\n" not in str(raised.value) and str(error) in str(raised.value)
    for call in (eval_method.available_methods, lambda: eval_method.default_shots("kgsql"),
                 lambda: eval_method.parse_sets(["tips=false"])):
        with pytest.raises(KgsqlError, match="kgsql.methods does not import"):
            call()


def test_the_eval_cli_says_one_line_and_runs_nothing(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kgsql.eval.__main__ import main

    _break_registry(monkeypatch, RuntimeError("half-finished registry"))
    code = main(["run", "--dataset", "spider", "--data-dir", str(tmp_path), "--method", "kgsql",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 1 and err.startswith("error: the method registry kgsql.methods does not import")
    assert len(err.splitlines()) == 1 and "warning" not in err
    assert not (tmp_path / "out").exists()


def test_there_is_no_classic_pipeline_to_fall_back_to() -> None:
    assert importlib.util.find_spec("kgsql.generate.pipeline") is None
    assert not hasattr(eval_method, "FALLBACK_METHODS")
