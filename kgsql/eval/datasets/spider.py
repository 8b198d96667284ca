"""Spider and its variants (Spider-Syn, Spider-DK, Spider-Realistic): ``dev.json`` + ``database/``."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.datasets.base import (
    Benchmark, Dataset, GoldQuestion, db_map, first_dir, first_existing, first_file, read_json_list, require_dir, row_db_id,
)
from kgsql.eval.datasets.spider_hardness import spider_hardness

NAME = "spider"
#: The few-shot pool beside dev: the first of these that exists.
POOL_FILES = ("train_7000.json", "train_spider.json")


def load_spider(
    data_dir: str | Path,
    split: str = "dev",
    *,
    question_field: str = "question",
    questions_file: str | Path | None = None,
    db_dir: str | Path | None = None,
    tables_file: str | Path | None = None,
) -> Dataset:
    """Spider-format questions (``dev.json``) with databases under ``database/``.

    Variants reuse the format: Spider-Syn (``question_field="SpiderSynQuestion"``),
    Spider-DK and Spider-Realistic (their own JSON file via ``questions_file``,
    the Spider ``database/`` folder via ``db_dir``). Ids are the 0-based
    positions in the file; hardness is computed from the gold SQL.
    """
    root = require_dir(data_dir)
    qfile = Path(questions_file) if questions_file else first_existing(
        root, [f"{split}.json", f"{split}_spider.json"], "Spider questions file"
    )
    rows = read_json_list(qfile)
    db_root = Path(db_dir) if db_dir else first_dir(root, [f"{split}_database", "database"])
    tfile = Path(tables_file) if tables_file else first_file(root, [f"{split}_tables.json", "tables.json"])
    questions = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or question_field not in row:
            raise InputError(f"{qfile}: question {i} has no field {question_field!r}")
        gold = row.get("query") or row.get("SQL") or ""
        questions.append(GoldQuestion(
            id=str(i), db_id=row_db_id(row, qfile, i), question=row[question_field], gold=[gold],
            difficulty=spider_hardness(gold),
            extra={k: v for k, v in row.items()
                   if k not in ("sql", "query_toks", "query_toks_no_value", "question_toks")},
        ))
    return Dataset(NAME, split, root, questions, db_map(db_root, [e.db_id for e in questions]), tfile)


def training_pool(data_dir: Path) -> Any:
    """Spider's training questions beside dev (``POOL_FILES``) as an example pool, or None."""
    from kgsql.fewshot.pool import ExamplePool

    for name in POOL_FILES:
        if (data_dir / name).is_file():
            return ExamplePool.from_spider(data_dir / name, db_dir=data_dir / "database")
    return None


BENCHMARK = Benchmark(
    NAME, load_spider, "Spider-format questions (and variants) with SQLite databases under database/",
    splits=("dev", "train_7000", "train_spider"), default_split="dev",
    metric="spider_ex", timeout_s=30.0,
    pool=training_pool, pool_note=f"{POOL_FILES[0]} (else {POOL_FILES[1]}) beside dev",
    train_split="train_7000",
)
