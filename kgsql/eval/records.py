"""Per-question evaluation records and their append-only JSONL log.

A run appends one line per finished question and flushes it, so a crash
loses at most the question in flight; reopening the log reports which ids
are done so the run resumes where it stopped.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.metric_registry import METRICS, ScoresByName


@dataclass
class Record(ScoresByName):
    """Everything known about one question of one run.

    ``scores`` holds each registered metric's value by name (read one as
    ``record.value("bird_ex")`` or ``record.bird_ex``); a value is None when
    the question could not be scored (``error_kind="missing_db"``; ``error``
    says why). A record line keeps each value at the top level under the
    metric's name, as every earlier ``records.jsonl`` does.
    """

    id: str
    db_id: str
    question: str = ""
    gold: list[str] = field(default_factory=list)
    pred: str | None = None
    scores: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_kind: str | None = None
    matched_gold: int | None = None
    difficulty: str | None = None
    label: str | None = None
    method: str | None = None
    shots: int | None = None
    tokens: int | None = None
    latency_s: float | None = None
    rounds: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def value(self, metric: str) -> float | int | None:
        """The value of ``metric`` (None: unscored, or not scored on that metric)."""
        return self.scores.get(metric)

    @property
    def verdicts(self) -> dict[str, float | int | None]:
        """Every registered metric's value (None where there is none), then any other kept."""
        return {**{name: self.scores.get(name) for name in METRICS}, **self.scores}

    @property
    def scored(self) -> bool:
        return any(v is not None for v in self.scores.values())

    def to_dict(self) -> dict[str, Any]:
        """The record line: each metric's value at the top level, after ``pred`` (the format of every run)."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if key == "scores":
                out.update(self.verdicts)
            else:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """Build from a dict; a registered metric's name is its value, unknown keys go to ``extra``,
        a nested ``verdicts`` is flattened."""
        data = dict(data)
        data.update(data.pop("verdicts", None) or {})
        scores = {k: data.pop(k) for k in list(data) if k in METRICS}
        scores.update(data.pop("scores", None) or {})
        scores = {k: v for k, v in scores.items() if v is not None}  # a None is what to_dict writes for none
        names = {f.name for f in fields(cls)}
        known = {k: v for k, v in data.items() if k in names}
        known["scores"] = scores
        extra = dict(known.pop("extra", None) or {})
        extra.update({k: v for k, v in data.items() if k not in names})
        if "id" not in known:
            raise InputError(f"record without an id: {str(data)[:200]}")
        known["id"] = str(known["id"])
        known.setdefault("db_id", "")
        return cls(**known, extra=extra)


def read_records(path: str | Path) -> list[Record]:
    """Records of a JSONL log; the last line for an (id, method, shots) wins.

    A truncated last line (a run killed mid-write) is skipped with a warning;
    a malformed line elsewhere is an error, since it means the file is not a log.
    """
    p = Path(path)
    if not p.exists():
        return []
    lines = p.read_text(encoding="utf-8").splitlines()
    by_id: dict[tuple[str, str | None, int | None], Record] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = Record.from_dict(json.loads(line))
        except (json.JSONDecodeError, TypeError) as exc:
            if n == len(lines):
                print(f"warning: {p}:{n}: skipping incomplete last line", file=sys.stderr)
                continue
            raise InputError(f"{p}:{n}: not a record: {exc}") from exc
        key = (rec.id, rec.method, rec.shots)
        by_id.pop(key, None)  # re-insert so the file order of the latest line is kept
        by_id[key] = rec
    return list(by_id.values())


class RecordLog:
    """Append-only JSONL of records; ``done`` holds ids already in the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.done: set[str] = {r.id for r in read_records(self.path)}
        self._repair_tail()

    def _repair_tail(self) -> None:
        # A killed run can leave a last line without its newline: a complete
        # record gets its newline, a partial one is cut off (it was never
        # counted as done), so appended records stay parseable.
        if not self.path.exists() or not self.path.stat().st_size:
            return
        data = self.path.read_bytes()
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        try:
            json.loads(data[cut:])
            complete = True
        except ValueError:
            complete = False
        with open(self.path, "r+b") as fh:
            if complete:
                fh.seek(0, 2)
                fh.write(b"\n")
            else:
                fh.truncate(cut)

    def append(self, record: Record) -> None:
        """Write one record and flush, so it survives a crash of the run."""
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
            fh.flush()
        self.done.add(record.id)

    def records(self) -> list[Record]:
        return read_records(self.path)
