"""Query logs to learn from: Spider/BIRD JSON or JSONL, with an explicit split.

    pairs = load_history("train_7000.json")                 # Spider: db_id, question, query
    pairs = load_history("dev.json")                        # BIRD: db_id, question, SQL, evidence
    pairs = load_history("log.jsonl")                       # {"question", "sql", "db_id"[, "evidence"]}
    learn, test = split_halves(pairs, seed=0)               # per database, half to mine, half to test

A pair's ``id`` hashes its database, question and SQL, so mining the same log
again skips what is already mined, and a test question can be checked against
what was learnt (no leakage: mine one half, test on the other).
"""
from __future__ import annotations

import hashlib
import json
import os
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from kgsql.errors import InputError
from kgsql.mining.rules import Pair

HALVES = ("first", "second")


def pair_id(db_id: str, question: str, sql: str) -> str:
    return hashlib.sha1(f"{db_id}\x00{' '.join(question.split())}\x00{sql.strip()}".encode()).hexdigest()[:16]


def _pair(row: Any, where: str) -> Pair:
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected an object with db_id, question and sql (or query / SQL)")
    # Spider's files carry "sql" as a parsed tree beside the "query" string: take the first string
    sql = next((v for v in (row.get("sql"), row.get("query"), row.get("SQL")) if isinstance(v, str)), None)
    db_id, question = row.get("db_id"), row.get("question")
    if not all(isinstance(v, str) and v.strip() for v in (sql, db_id, question)):
        raise InputError(f"{where}: needs string fields db_id, question and sql (or query / SQL)")
    evidence = row.get("evidence") if isinstance(row.get("evidence"), str) else ""
    return Pair(pair_id(db_id, question, sql), db_id, " ".join(question.split()), sql.strip(), evidence)


def load_history(path: str | os.PathLike[str]) -> list[Pair]:
    """Every pair of a Spider/BIRD JSON list or a JSONL log; one clear error for anything else."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"history file not found: {p}")
    text = p.read_text(encoding="utf-8", errors="replace")
    if p.suffix == ".jsonl":
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((json.loads(line), f"{p}:{n}"))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{p}:{n}: not JSON ({exc.msg})") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, list):
            raise InputError(f"{p}: expected a JSON list of question/SQL objects (or a .jsonl file)")
        rows = [(row, f"{p}: item {i}") for i, row in enumerate(data)]
    pairs = [_pair(row, where) for row, where in rows]
    if not pairs:
        raise InputError(f"{p}: no question/SQL pairs")
    return pairs


def split_halves(pairs: Sequence[Pair], seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """Per database, a fixed random half (the first, to learn from) and the rest (to test on)."""
    by_db: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_db[pair.db_id].append(pair)
    first: list[Pair] = []
    second: list[Pair] = []
    for db in sorted(by_db):
        items = sorted(by_db[db], key=lambda x: x.id)
        random.Random(f"{seed}:{db}").shuffle(items)
        half = (len(items) + 1) // 2
        first += items[:half]
        second += items[half:]
    return first, second


def split_examples(examples: Sequence[Any], half: str, seed: int = 0) -> tuple[list[Any], list[Any]]:
    """(the examples to test: ``half``, the examples to learn from: the other half).

    Benchmark examples (``db_id``, ``question``, ``gold``) split as :func:`split_halves` splits the
    same questions read as a history file, so ``ingest --history-half first`` and ``eval run --half
    second`` never meet. A tested question whose pair is also learnt (a benchmark's duplicates) is
    left out; examples without gold SQL are in neither half."""
    if half not in HALVES:
        raise InputError(f"half '{half}': expected one of {', '.join(HALVES)}")
    pairs: list[Pair] = []
    owner: dict[int, Any] = {}
    for e in examples:
        if e.gold:
            pair = Pair(pair_id(e.db_id, e.question, e.gold[0]), e.db_id, " ".join(e.question.split()), e.gold[0])
            owner[id(pair)] = e
            pairs.append(pair)
    halves = split_halves(pairs, seed)
    tested, learnt = halves[HALVES.index(half)], halves[1 - HALVES.index(half)]
    learnt_ids = {p.id for p in learnt}
    return [owner[id(p)] for p in tested if p.id not in learnt_ids], [owner[id(p)] for p in learnt]


def select_half(pairs: Sequence[Pair], half: str | None, seed: int = 0) -> list[Pair]:
    """``half`` None: all pairs; "first"/"second": that half of :func:`split_halves`."""
    if half is None:
        return list(pairs)
    if half not in HALVES:
        raise InputError(f"history half '{half}': expected one of {', '.join(HALVES)}")
    return split_halves(pairs, seed)[HALVES.index(half)]
