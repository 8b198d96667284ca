"""The PostGIS question benchmark's scoring and its bad input (the model run itself is a benchmark)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.lab.postgis_questions import main, same_rows


def test_results_compare_across_engines_to_four_significant_digits() -> None:
    assert same_rows([("874路", 36373.2224)], [("874路", 36373.22238248243)], ordered=True)
    assert not same_rows([("874路", 36.36543)], [("874路", 36373.22)], ordered=True)  # km vs m: wrong
    assert same_rows([(1,), (2,)], [(2.0,), (1,)], ordered=False)
    assert not same_rows([(1,), (2,)], [(2,), (1,)], ordered=True)
    assert same_rows([(None, "a")], [(None, "a")], ordered=True)


def test_a_missing_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kgsql.lab.postgis_questions: error: ") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()
