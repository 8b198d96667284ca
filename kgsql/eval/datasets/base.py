"""What every benchmark shares: ``GoldQuestion``, ``Dataset``, ``Benchmark`` and the file helpers of loaders.

Every loader returns a :class:`Dataset` of :class:`GoldQuestion` records in file
order, so line ``i`` of a prediction file lines up with ``questions[i]``.
Questions whose SQLite file is absent stay in the dataset (``missing_db``
lists them) so scores can say how many were not scored instead of silently
shrinking the denominator.
"""
from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from kgsql.errors import InputError
from kgsql.registry import Registry


#: ``GoldQuestion.extra`` keys of one turn of a conversation (SParC): the turns of an interaction share its id,
#: ``turn_index`` counts from 0, ``history`` / ``history_sql`` are the earlier turns' questions and gold SQL.
INTERACTION_ID = "interaction_id"
TURN_INDEX = "turn_index"
HISTORY = "history"
HISTORY_SQL = "history_sql"


@dataclass
class GoldQuestion:
    """One benchmark question with every gold SQL that counts as correct."""

    id: str
    db_id: str
    question: str
    gold: list[str]
    evidence: str = ""
    difficulty: str | None = None  # Spider hardness or BIRD difficulty
    label: str | None = None  # spatial label, e.g. "G S Region"
    hints: str = ""  # spatial `name` field: literal values used by the question
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tags(self) -> list[str]:
        """Label split into tags ("G S Region" -> ["G", "S", "Region"])."""
        return self.label.split() if self.label else []

    @property
    def history(self) -> list[str]:
        """The questions asked before this one in its conversation: what a method needs to read a follow-up."""
        return [str(q) for q in self.extra.get(HISTORY) or []]

    @property
    def turn(self) -> dict[str, Any]:
        """Interaction id and turn index for the record of a conversation turn (empty for a standalone
        question), so interaction scores can be computed from records alone."""
        if self.extra.get(INTERACTION_ID) is None:
            return {}
        return {INTERACTION_ID: str(self.extra[INTERACTION_ID]), TURN_INDEX: self.extra.get(TURN_INDEX),
                HISTORY: self.history}


@dataclass
class Dataset:
    """Benchmark questions plus where their databases live; ``name`` is the registered benchmark's."""

    name: str
    split: str
    root: Path
    questions: list[GoldQuestion]
    db_files: dict[str, Path | None]
    tables_file: Path | None = None

    def db_path(self, db_id: str) -> Path | None:
        """The SQLite file of ``db_id``, or None when it is not on disk."""
        return self.db_files.get(db_id)

    @property
    def missing_db(self) -> list[GoldQuestion]:
        """Examples that cannot be executed because their database file is absent."""
        return [ex for ex in self.questions if self.db_files.get(ex.db_id) is None]

    @property
    def missing_db_ids(self) -> list[str]:
        return sorted({ex.db_id for ex in self.missing_db})

    @property
    def benchmark(self) -> Benchmark:
        """The registered benchmark named ``name`` (its pool, graph-name and protocol rules)."""
        return BENCHMARKS.get(self.name)

    def __len__(self) -> int:
        return len(self.questions)


SchemaSource = Literal["tables.json", "sqlite"]


@dataclass(frozen=True)
class Benchmark:
    """Everything a command decides per benchmark; one module per benchmark defines one.

    ``loader(data_dir, split, **options) -> Dataset`` reads it; the other
    fields are the defaults and rules ``eval run``/``score``/``linking`` and
    ``lab.calibrate`` read instead of branching on the name."""

    name: str
    loader: Callable[..., Dataset]
    description: str = ""
    #: Splits named in help texts (a loader may accept others); the one used when none is given
    #: (None: the loader decides, e.g. the spatial folder itself).
    splits: tuple[str, ...] = ("dev",)
    default_split: str | None = "dev"
    #: ``eval run`` defaults: headline metric and SQL timeout (scoring and the method's own execution).
    metric: str = "spider_ex"
    timeout_s: float = 30.0
    #: The fixed few-shot pool of a single-protocol run, found in the data folder (None: no pool).
    pool: Callable[[Path], Any] | None = None
    #: No fixed pool: each database's questions learn from the split's *other* databases.
    pool_from_other_databases: bool = False
    pool_note: str = ""  # where the default pool comes from, for help texts
    #: ``--protocol cross-fold`` applies; ``find_splits(data_dir)``: its default, every split present.
    cross_fold: bool = False
    find_splits: Callable[[Path], list[str]] | None = None
    #: Database names repeat across splits with different schemas: the graph name carries the split.
    split_in_graph_name: bool = False
    #: Question languages (the loader takes ``lang`` when there are several).
    languages: tuple[str, ...] = ("en",)
    #: Where lab commands read schemas: the benchmark's tables.json or the SQLite files themselves;
    #: ``descriptions_dir(data_dir, split)``: column description CSVs beside tables.json (BIRD).
    schema_source: SchemaSource = "tables.json"
    descriptions_dir: Callable[[Path, str], Path | None] | None = None
    #: ``description_folder(data_dir, split, db_id)``: one database's description CSVs, given to ingest
    #: when they are not beside its file (a shared data folder keeps them apart from the databases).
    description_folder: Callable[[Path, str, str], Path | None] | None = None
    #: Only some of the benchmark's databases can be had: ``eval run`` samples only questions whose
    #: database file exists (one line says how many were left out), as ``--skip-missing-db`` does.
    skip_missing_db: bool = False
    #: The split learned components train on (``lab.calibrate``); None: the default split.
    train_split: str | None = None

    def load(self, data_dir: str | Path, split: str | None = None, **options: Any) -> Dataset:
        """The benchmark's questions (``split`` or the default); None options are left out."""
        options = {k: v for k, v in options.items() if v is not None}
        return self.loader(data_dir, split or self.default_split, **options)

    def loader_options(self, **given: Any) -> dict[str, Any]:
        """The ``given`` command-line options this benchmark's loader takes (None values dropped)."""
        params = inspect.signature(self.loader).parameters
        return {k: v for k, v in given.items()
                if v is not None and k in params and params[k].kind is inspect.Parameter.KEYWORD_ONLY}


#: Registered benchmarks by name, in registration order (the order of ``--dataset`` choices), filled through
#: :mod:`kgsql.eval.datasets.registry`; kept here so :attr:`Dataset.benchmark` can look a name up without
#: importing the registry, which imports this module.
BENCHMARKS: Registry[Benchmark] = Registry("dataset", error=InputError)


# --------------------------------------------------------------------------- loader helpers


def require_dir(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(f"data directory not found: {p}")
    return p


def first_existing(root: Path, names: list[str], what: str) -> Path:
    for name in names:
        if (root / name).is_file():
            return root / name
    raise InputError(f"no {what} in {root}: looked for {', '.join(names)}")


def first_dir(root: Path, names: list[str]) -> Path | None:
    return next((root / d for d in names if (root / d).is_dir()), None)


def first_file(root: Path, names: list[str]) -> Path | None:
    return next((root / t for t in names if (root / t).is_file()), None)


def read_json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of questions")
    return data


def row_db_id(row: dict[str, Any], qfile: Path, i: int) -> str:
    if not isinstance(row, dict) or not row.get("db_id"):
        raise InputError(f"{qfile}: question {i} has no db_id")
    return str(row["db_id"])


def find_db(db_root: Path | None, db_id: str) -> Path | None:
    """``<root>/<db>/<db>.sqlite`` (Spider/BIRD layout); None when absent."""
    if db_root is None:
        return None
    for candidate in (db_root / db_id / f"{db_id}.sqlite", db_root / f"{db_id}.sqlite"):
        if candidate.is_file():
            return candidate
    return None


def db_map(db_root: Path | None, db_ids: list[str]) -> dict[str, Path | None]:
    return {db_id: find_db(db_root, db_id) for db_id in dict.fromkeys(db_ids)}
