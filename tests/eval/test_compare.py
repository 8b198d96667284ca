"""``python -m kgsql.eval compare``: wins, losses and coverage between two runs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgsql.eval.__main__ import main
from kgsql.eval.compare import compare_runs, load_run, mcnemar_p
from kgsql.eval.records import Record, RecordLog


def rec(qid: str, ex: int | None, f1: float | None = None) -> Record:
    return Record(id=qid, db_id="db", question=f"question {qid}", scores={
        "spider_ex": ex, "bird_ex": ex, "soft_f1": f1 if f1 is not None else (None if ex is None else float(ex))})


def write_jsonl(path: Path, records: list[Record]) -> Path:
    log = RecordLog(path)
    for r in records:
        log.append(r)
    return path


def test_compare_counts_wins_losses_ties_and_coverage() -> None:
    a = [rec("1", 1), rec("2", 0), rec("3", 1), rec("4", 0), rec("5", None), rec("6", 1)]
    b = [rec("1", 0), rec("2", 1), rec("3", 1), rec("4", 0), rec("5", None), rec("7", 1)]
    out = compare_runs(a, b)
    assert out["wins"] == ["1"] and out["losses"] == ["2"]
    assert out["ties_correct"] == ["3"] and out["ties_wrong"] == ["4"]
    assert out["unscored"] == ["5"] and out["only_a"] == ["6"] and out["only_b"] == ["7"]
    assert out["n_compared"] == 4 and out["delta"] == 0.0
    assert out["mcnemar_p"] == 1.0


def test_compare_soft_f1_uses_the_continuous_value() -> None:
    out = compare_runs([rec("1", 0, 0.6)], [rec("1", 0, 0.4)], "soft_f1")
    assert out["wins"] == ["1"] and out["mcnemar_p"] is None
    assert out["delta"] == pytest.approx(0.2)


def test_mcnemar_exact() -> None:
    assert mcnemar_p(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_p(0, 0) is None
    assert mcnemar_p(3, 3) == 1.0


def test_cli_reads_jsonl_and_score_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [rec("1", 1), rec("2", 1), rec("3", 0)])
    score = {"n": 3, "records": [r.to_dict() for r in (rec("1", 0), rec("2", 1), rec("3", 0))]}
    b = tmp_path / "b.json"
    b.write_text(json.dumps(score), encoding="utf-8")
    assert [r.id for r in load_run(b)] == ["1", "2", "3"]
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "wins of A (1):" in printed and "question 1" in printed
    assert "wins: 1   losses: 0" in printed
    assert json.loads(out.read_text())["wins"] == ["1"]


def test_cli_rejects_a_json_without_records(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"n": 1}', encoding="utf-8")
    assert main(["compare", str(bad), str(bad)]) == 1
    assert "records" in capsys.readouterr().err


# ---------------------------------------------------------------- issue 35: files that are not runs


def _compare_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kgsql", "eval", "compare", *args], capture_output=True,
                          text=True, timeout=120)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_cli_names_a_binary_file_in_one_line(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "a.jsonl", [rec("1", 1)])
    binary = tmp_path / "photo.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xb9\xff\x00" * 50)
    line = _one_line(_compare_cli(str(binary), str(good)))
    assert line.startswith("error:") and str(binary) in line and "not UTF-8" in line


@pytest.mark.parametrize("content", ['"just a string"\n{"id": "1"}\n', '{"records": 5}', '{"records": [1, 2]}',
                                     '{"id": "1", "spider_ex": "yes"}\n{"id": "2"}\n'])
def test_cli_refuses_json_that_is_not_a_run_in_one_line(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    line = _one_line(_compare_cli(str(bad), str(bad)))
    assert str(bad) in line or "not a number" in line


def test_cli_json_output_needs_an_existing_folder(tmp_path: Path) -> None:
    run = write_jsonl(tmp_path / "a.jsonl", [rec("1", 1)])
    line = _one_line(_compare_cli(str(run), str(run), "--json", str(tmp_path / "no" / "such" / "cmp.json")))
    assert "does not exist" in line and not (tmp_path / "no").exists()
