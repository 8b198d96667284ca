"""BIRD dev (and Mini-Dev): ``dev.json`` with evidence, ``dev_databases/``, description CSVs."""
from __future__ import annotations

from pathlib import Path

from kgsql.eval.datasets.base import (
    Benchmark, Dataset, GoldQuestion, db_map, first_dir, first_existing, first_file, read_json_list, require_dir, row_db_id,
)

NAME = "bird"


def load_bird(
    data_dir: str | Path,
    split: str = "dev",
    *,
    questions_file: str | Path | None = None,
    db_dir: str | Path | None = None,
    tables_file: str | Path | None = None,
) -> Dataset:
    """BIRD ``dev.json`` (or Mini-Dev ``mini_dev_sqlite.json`` with ``split="mini_dev"``).

    Databases are looked up in ``dev_databases/<db>/<db>.sqlite`` (or
    ``<split>_databases``); ids are BIRD's ``question_id`` when present.
    """
    root = require_dir(data_dir)
    names = [f"{split}.json"] + (["mini_dev_sqlite.json"] if split.startswith("mini") else [])
    qfile = Path(questions_file) if questions_file else first_existing(root, names, "BIRD questions file")
    rows = read_json_list(qfile)
    db_root = Path(db_dir) if db_dir else _databases_dir(root, split)
    tfile = Path(tables_file) if tables_file else first_file(
        root, [f"{split}_tables.json", "dev_tables.json", "tables.json"])
    questions = []
    for i, row in enumerate(rows):
        gold = row.get("SQL") or row.get("query") or ""
        qid = row.get("question_id", i)
        questions.append(GoldQuestion(
            id=str(qid), db_id=row_db_id(row, qfile, i), question=row.get("question", ""),
            gold=[gold],
            evidence=row.get("evidence") or "", difficulty=row.get("difficulty"),
            extra={k: v for k, v in row.items()
                   if k not in ("db_id", "question", "SQL", "evidence", "difficulty")},
        ))
    return Dataset(NAME, split, root, questions, db_map(db_root, [e.db_id for e in questions]), tfile)


def _databases_dir(root: Path, split: str) -> Path | None:
    """``<split>_databases/`` in the questions' folder or beside it (the release's ``dev_20240627/``
    holds both; a shared data folder keeps ``dev_2024/`` and ``dev_databases/`` side by side)."""
    names = [f"{split}_databases", "dev_databases", "databases"]
    return first_dir(root, names) or first_dir(root.parent, names)


def description_folder(root: Path, split: str, db_id: str) -> Path | None:
    """``<db>/database_description/`` of one database in the descriptions folder, if there is one."""
    base = descriptions_dir(root, split)
    candidate = base / db_id / "database_description" if base is not None else None
    return candidate if candidate is not None and candidate.is_dir() else None


def descriptions_dir(root: Path, split: str) -> Path | None:
    """The folder of BIRD's ``database_description/*.csv`` files (beside or above the questions)."""
    for cand in (root / f"{split}_databases_descriptions", root.parent / f"{split}_databases_descriptions",
                 root / "dev_databases_descriptions", root.parent / "dev_databases_descriptions",
                 root / f"{split}_databases", root / "dev_databases"):
        if cand.is_dir():
            return cand
    return None


BENCHMARK = Benchmark(
    NAME, load_bird, "BIRD dev / Mini-Dev: questions with evidence; schemas from dev_tables.json + descriptions",
    splits=("dev", "mini_dev"), default_split="dev",
    metric="bird_ex", timeout_s=30.0,
    descriptions_dir=descriptions_dir,
    description_folder=description_folder,
    skip_missing_db=True,
)
