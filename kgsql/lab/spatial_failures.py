"""Why spatial answers are wrong: each miss of a run put in the first class it fits, with counts.

Issue 29 asks for a failure table before any fix, so the counts order the work.
The classes are read from the predicted and gold SQL, not by hand, in this order
(the first that fits wins, so the counts add up to the misses):

1. ``does not run``         the prediction failed (its error kind is kept as the detail);
2. ``no spatial relation``  the gold relates two tables by location (Within, Intersects,
                            Distance...) and the prediction by no spatial function at all;
3. ``units``                the gold measures in metres (``GLength(g, 1)``, ``::geography``)
                            and the prediction in degrees, or the reverse;
4. ``value not linked``     a text literal of the gold (a stored name, often Chinese) is
                            missing from the prediction;
5. ``wrong function``       the gold uses a spatial function the prediction does not;
6. ``other tables``         the prediction reads other tables than every gold reading;
7. ``aggregation / other``  the rest: grouping, ordering, columns shown, gold ambiguity.

Usage::

    python -m kgsql.lab.spatial_failures RUN/.../records.jsonl [more.jsonl] [--metric spider_ex] [--out table.md]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CLASSES: tuple[str, ...] = ("does not run", "no spatial relation", "units", "value not linked", "wrong function",
                            "other tables", "aggregation / other")

#: Spatial predicates and measures of SpatiaLite and PostGIS (lower case, ``st_`` folded away).
RELATIONS = frozenset({"within", "contains", "intersects", "touches", "crosses", "overlaps", "disjoint", "equals",
                       "covers", "coveredby", "distance", "ptdistwithin", "dwithin", "mbrwithin", "mbrcontains",
                       "mbrintersects"})
SPATIAL = RELATIONS | frozenset({"glength", "length", "area", "perimeter", "centroid", "x", "y", "buffer",
                                 "transform", "st_length", "astext", "makepoint", "geomfromtext", "envelope"})
_CALL = re.compile(r"\b(?:st_)?([a-z_]+)\s*\(", re.I)
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_TABLE = re.compile(r"\b(?:from|join)\s+[`\"\[]?([a-z_][\w]*)", re.I)
_METRES = re.compile(r"(?:glength|area|distance|perimeter)\s*\([^()]*(?:\([^()]*\)[^()]*)*,\s*1\s*\)|::geography", re.I)


def calls(sql: str) -> set[str]:
    """Function names called in ``sql``, lower case, PostGIS's ``ST_`` prefix dropped."""
    return {m.group(1).lower() for m in _CALL.finditer(sql or "")}


def literals(sql: str) -> set[str]:
    return {m.group(1).replace("''", "'") for m in _LITERAL.finditer(sql or "")}


def tables(sql: str) -> set[str]:
    return {m.group(1).lower() for m in _TABLE.finditer(sql or "")}


def in_metres(sql: str) -> bool:
    return bool(_METRES.search(sql or ""))


def classify(pred: str, gold: list[str], error: str | None) -> str:
    """The first class of :data:`CLASSES` that fits one miss (see the module docstring)."""
    if error or not pred:
        return "does not run"
    first = gold[0] if gold else ""
    pred_calls, gold_calls = calls(pred), calls(first)
    if gold_calls & RELATIONS and len(tables(first)) > 1 and not pred_calls & SPATIAL:
        return "no spatial relation"
    measures = {"glength", "area", "distance", "perimeter"}
    if pred_calls & gold_calls & measures and in_metres(first) != in_metres(pred):
        return "units"
    if any(lit.strip() and lit not in pred for lit in literals(first)):
        return "value not linked"
    if (gold_calls - pred_calls) & SPATIAL:
        return "wrong function"
    if all(tables(g) != tables(pred) for g in gold if g):
        return "other tables"
    return "aggregation / other"


@dataclass
class FailureTable:
    """Counts of each class over the misses, per run label."""

    counts: dict[str, Counter[str]]
    misses: dict[str, int]
    questions: dict[str, int]

    def markdown(self) -> str:
        labels = list(self.counts)
        lines = ["| class | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
        for name in CLASSES:
            lines.append(f"| {name} | " + " | ".join(str(self.counts[lab][name]) for lab in labels) + " |")
        lines.append("| **misses / questions** | " + " | ".join(
            f"**{self.misses[lab]} / {self.questions[lab]}**" for lab in labels) + " |")
        return "\n".join(lines)


def read_records(paths: Iterable[Path]) -> list[dict]:
    return [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def failure_table(runs: dict[str, list[dict]], metric: str = "spider_ex") -> FailureTable:
    counts: dict[str, Counter[str]] = {}
    misses: dict[str, int] = {}
    for label, records in runs.items():
        wrong = [r for r in records if not r.get(metric)]
        counts[label] = Counter(classify(r.get("pred") or "", list(r.get("gold") or []), r.get("error"))
                                for r in wrong)
        misses[label] = len(wrong)
    return FailureTable(counts, misses, {label: len(records) for label, records in runs.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgsql.lab.spatial_failures", description=__doc__.split("\n")[0])
    parser.add_argument("records", nargs="+", help="records.jsonl files; LABEL=PATH to name a column "
                        "(files with one label are pooled)")
    parser.add_argument("--metric", default="spider_ex", help="the record field that is 1 for a right answer")
    parser.add_argument("--out", type=Path, help="also write the markdown table here")
    args = parser.parse_args(argv)
    runs: dict[str, list[Path]] = {}
    for item in args.records:
        label, _, path = item.rpartition("=") if "=" in item else ("run", "", item)
        if not Path(path).is_file():
            print(f"error: no records file at {path}", file=sys.stderr)
            return 2
        runs.setdefault(label, []).append(Path(path))
    table = failure_table({label: read_records(paths) for label, paths in runs.items()}, args.metric)
    text = table.markdown()
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
