"""Records log (append, resume, crash tail) and JSON/Markdown/PNG reports."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgsql.errors import InputError
from kgsql.eval.records import Record, RecordLog, read_records
from kgsql.eval.report import main, summarize, to_markdown, write_report


def run_records() -> list[Record]:
    out = []
    for method, shots, ex, tokens in (("kg", 0, [1, 1, 0], 100), ("kg", 3, [1, 1, 1], 300),
                                      ("plain", 0, [1, 0, 0], 50)):
        for i, v in enumerate(ex):
            out.append(Record(id=str(i), db_id="db", question=f"q{i}", scores={"spider_ex": v, "bird_ex": v,
                              "soft_f1": float(v)}, difficulty=("easy", "hard", "hard")[i],
                              method=method, shots=shots, tokens=tokens, latency_s=0.5,
                              rounds=1))
    out.append(Record(id="9", db_id="gone", error="database file missing",
                      error_kind="missing_db", method="plain", shots=0))
    return out


def test_record_log_appends_resumes_and_repairs_a_partial_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.jsonl"
    log = RecordLog(path)
    log.append(Record(id="1", db_id="a", scores={"spider_ex": 1}, tokens=10))
    log.append(Record(id="2", db_id="a", scores={"spider_ex": 0}))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"id": "3", "db_id": "a", "spi')  # killed mid-write
    assert [r.id for r in read_records(path)] == ["1", "2"]
    assert "incomplete last line" in capsys.readouterr().err
    resumed = RecordLog(path)
    assert resumed.done == {"1", "2"}
    resumed.append(Record(id="3", db_id="a", scores={"spider_ex": 1}))
    assert [r.id for r in read_records(path)] == ["1", "2", "3"]
    assert read_records(path)[0].verdicts == {"spider_ex": 1, "bird_ex": None, "soft_f1": None}


def test_record_from_dict_keeps_unknown_fields_and_flattens_verdicts() -> None:
    r = Record.from_dict({"id": 5, "db_id": "d", "verdicts": {"spider_ex": 1}, "model": "x"})
    assert r.id == "5" and r.spider_ex == 1 and r.extra == {"model": "x"}
    assert Record.from_dict(r.to_dict()) == r
    with pytest.raises(InputError):
        Record.from_dict({"db_id": "d"})


def test_read_records_rejects_garbage_mid_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "db_id": "a"}\nnot json\n{"id": "2", "db_id": "a"}\n')
    with pytest.raises(InputError, match="bad.jsonl:2"):
        read_records(path)


def test_summarize_overall_difficulty_runs_and_costs() -> None:
    s = summarize(run_records())
    assert (s["n"], s["n_scored"], s["n_missing_db"]) == (10, 9, 1)
    assert s["spider_ex"] == pytest.approx(6 / 9)
    assert s["by_difficulty"]["easy"]["spider_ex"] == 1.0
    assert s["tokens_total"] == 3 * 100 + 3 * 300 + 3 * 50
    runs = s["by_run"]
    assert set(runs) == {"kg/0-shot", "kg/3-shot", "plain/0-shot"}
    assert runs["kg/3-shot"]["spider_ex"] == 1.0 and runs["kg/3-shot"]["tokens_mean"] == 300
    assert runs["plain/0-shot"]["n_missing_db"] == 1
    md = to_markdown(s, "Demo")
    assert md.startswith("# Demo") and "| kg/3-shot |" in md and "### By difficulty" in md


def test_write_report_files_and_plots(tmp_path: Path) -> None:
    written = write_report(run_records(), tmp_path / "report", title="Demo")
    assert set(written) == {"json", "markdown", "ex_by_method_shots", "ex_by_difficulty",
                            "tokens_vs_ex"}
    for key in ("ex_by_method_shots", "ex_by_difficulty", "tokens_vs_ex"):
        assert written[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(written["json"].read_text())["n"] == 10


def test_report_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = RecordLog(tmp_path / "run.jsonl")
    for r in run_records()[:3]:
        log.append(r)
    assert main([str(log.path), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "summary.md").exists()
    assert "markdown:" in capsys.readouterr().out
