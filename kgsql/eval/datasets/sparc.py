"""SParC (multi-turn text-to-SQL over Spider's databases): ``dev.json`` interactions, one example per turn.

Each turn is scored on its own (Spider test-suite EX) and asked with the
earlier turns' questions as history; the turns of one interaction share an
``interaction_id`` in ``extra``, from which summaries compute interaction EX
(:mod:`kgsql.eval.interactions`). The databases are Spider's: ``--db-dir``,
else ``database/`` in the SParC folder, else ``../spider/database`` beside it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.datasets.base import (
    HISTORY, HISTORY_SQL, INTERACTION_ID, TURN_INDEX, Benchmark, Dataset, GoldQuestion, db_map, first_dir,
    first_existing, first_file, read_json_list, require_dir,
)
from kgsql.eval.datasets.spider import POOL_FILES
from kgsql.eval.datasets.spider import training_pool as spider_pool

NAME = "sparc"
#: Turn depths of the per-depth table: turn 1, 2, 3, then every later turn together.
DEEPEST = 4


def turn_depth(index: int) -> str:
    """The depth label of the 0-based turn ``index`` (``turn 1`` ... ``turn 4+``)."""
    return f"turn {DEEPEST}+" if index + 1 >= DEEPEST else f"turn {index + 1}"


def load_sparc(
    data_dir: str | Path,
    split: str = "dev",
    *,
    db_dir: str | Path | None = None,
    tables_file: str | Path | None = None,
) -> Dataset:
    """SParC ``<split>.json``: a list of ``{database_id, interaction: [{utterance, query}], final}``.

    Question ids are ``<interaction>-<turn>`` (0-based positions in the file),
    so line ``i`` of a prediction file is still ``questions[i]``; the
    difficulty is the turn depth; ``extra`` holds the interaction id, the turn
    index and the earlier turns' utterances (``history``) and gold SQL
    (``history_sql``).
    """
    root = require_dir(data_dir)
    qfile = first_existing(root, [f"{split}.json"], "SParC interactions file")
    questions: list[GoldQuestion] = []
    for i, row in enumerate(read_json_list(qfile)):
        questions += interaction_turns(row, i, qfile)
    db_root = Path(db_dir) if db_dir else databases_dir(root)
    tfile = Path(tables_file) if tables_file else first_file(root, [f"{split}_tables.json", "tables.json"])
    return Dataset(NAME, split, root, questions, db_map(db_root, [e.db_id for e in questions]), tfile)


def interaction_turns(row: Any, i: int, qfile: Path) -> list[GoldQuestion]:
    """The turns of interaction ``i`` as questions, each carrying the turns before it."""
    if not isinstance(row, dict) or not isinstance(row.get("interaction"), list):
        raise InputError(f"{qfile}: interaction {i} has no list of turns ('interaction')")
    db_id = row.get("database_id") or row.get("db_id")
    if not db_id:
        raise InputError(f"{qfile}: interaction {i} has no database_id")
    questions: list[str] = []
    sqls: list[str] = []
    out = []
    for j, turn in enumerate(row["interaction"]):
        if not isinstance(turn, dict) or not str(turn.get("utterance") or "").strip():
            raise InputError(f"{qfile}: interaction {i} turn {j} has no utterance")
        question, gold = str(turn["utterance"]), str(turn.get("query") or "")
        out.append(GoldQuestion(
            id=f"{i}-{j}", db_id=str(db_id), question=question, gold=[gold], difficulty=turn_depth(j),
            extra={INTERACTION_ID: str(i), TURN_INDEX: j, HISTORY: list(questions), HISTORY_SQL: list(sqls),
                   "final": row.get("final") or {}},
        ))
        questions.append(question)
        sqls.append(gold)
    return out


def spider_dir(root: Path) -> Path | None:
    """The Spider folder whose ``database/`` SParC uses: the SParC folder itself, else ``../spider``."""
    return next((d for d in (root, root.parent / "spider") if (d / "database").is_dir()), None)


def databases_dir(root: Path) -> Path | None:
    """``database/`` in the SParC folder, else the one of the Spider folder beside it."""
    found = spider_dir(root)
    return first_dir(found, ["database"]) if found is not None else None


def training_pool(data_dir: Path) -> Any:
    """Spider's training questions (``train_7000.json``) beside the Spider databases, as the few-shot
    pool: SParC dev's databases are Spider dev's, so none of them is in it."""
    found = spider_dir(data_dir)
    return spider_pool(found) if found is not None else None


BENCHMARK = Benchmark(
    NAME, load_sparc, "SParC multi-turn questions over Spider's databases (database/ or ../spider/database)",
    splits=("dev",), default_split="dev",
    metric="spider_ex", timeout_s=30.0,
    pool=training_pool, pool_note=f"Spider's {POOL_FILES[0]} beside the Spider databases",
)
