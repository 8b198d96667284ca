"""The hardening probe's runaway queries, rerun by ``python -m kgsql.lab.hostile``: each within its bounds."""
from __future__ import annotations

import json
from pathlib import Path

from kgsql.lab import hostile


def test_every_runaway_query_ends_within_its_bounds(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "hostile.json"
    assert hostile.main(["--timeout", "2", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert {r["label"].split(":")[0] for r in rows} >= {"sqlite", "duckdb"}
    assert all(r["within"] and r["seconds"] <= 2 * r["limit_s"] and r["error"] for r in rows)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(rows) and all(line.startswith("ok ") for line in printed)


def test_service_and_db_go_together(capsys) -> None:  # type: ignore[no-untyped-def]
    import pytest

    with pytest.raises(SystemExit) as stop:
        hostile.main(["--service", "http://127.0.0.1:1"])
    assert stop.value.code == 2 and "--service and --db go together" in capsys.readouterr().err
