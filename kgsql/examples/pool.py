"""Few-shot example pools: (question, SQL, database) triples to pick examples from.

Three sources, one shape:

* ``ExamplePool.from_spider("train_7000.json", db_dir=...)``: Spider's training
  questions (DAIL-SQL and ACT-SQL select from these for Spider dev);
* ``ExamplePool.from_jsonl("log.jsonl", schemas=...)``: a user's own query log,
  one ``{"question": ..., "sql": ..., "db_id": ...}`` object per line;
* ``ExamplePool.from_dataset(ds, exclude_dbs={"traffic"})``: the other databases
  of a cross-fold split (SSpa trains on two databases, tests on the others).

A pool also knows how to get each example's database schema (``schema(db_id)``)
because masking, auto-CoT and ACT-SQL's example rendering need it. The pool's
``fingerprint`` hashes its contents and keys every on-disk cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from kgsql.errors import InputError, UnknownNameError
from kgsql.schema.model import DatabaseSchema

SchemaSource = Callable[[str], DatabaseSchema]
"""``db_id -> DatabaseSchema``; raises UnknownNameError for an unknown database."""


@dataclass(frozen=True)
class PoolExample:
    """One candidate example. ``id`` is unique within its pool."""

    question: str
    sql: str
    db_id: str
    id: str = ""


class SqliteSchemas:
    """Schemas read straight from ``<db_dir>/<db_id>/<db_id>.sqlite`` (or ``<db_dir>/<db_id>.sqlite``).

    The same reader ingest uses, without statistics, so example schemas look
    like graph schemas without ingesting a whole training set into the graph.
    """

    def __init__(self, db_dir: str | os.PathLike[str]) -> None:
        self.db_dir = Path(db_dir)
        self._cache: dict[str, DatabaseSchema] = {}
        self._lock = threading.Lock()

    def path(self, db_id: str) -> Path | None:
        for p in (self.db_dir / db_id / f"{db_id}.sqlite", self.db_dir / f"{db_id}.sqlite"):
            if p.is_file():
                return p
        return None

    def __call__(self, db_id: str) -> DatabaseSchema:
        with self._lock:
            if db_id in self._cache:
                return self._cache[db_id]
        p = self.path(db_id)
        if p is None:
            raise UnknownNameError(f"no SQLite file for database '{db_id}' under {self.db_dir}")
        from kgsql.ingest.reader import read_database

        schema = read_database(p, name=db_id, with_stats=False)
        with self._lock:
            self._cache[db_id] = schema
        return schema


class GraphSchemas:
    """Schemas of databases ingested into a SchemaGraph."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self._cache: dict[str, DatabaseSchema] = {}

    def __call__(self, db_id: str) -> DatabaseSchema:
        if db_id not in self._cache:
            self._cache[db_id] = self.graph.schema(db_id)
        return self._cache[db_id]


class FirstOf:
    """Try several schema sources in order (e.g. the graph, then SQLite files)."""

    def __init__(self, *sources: SchemaSource) -> None:
        self.sources = [s for s in sources if s is not None]

    def __call__(self, db_id: str) -> DatabaseSchema:
        errors = []
        for source in self.sources:
            try:
                return source(db_id)
            except Exception as exc:  # noqa: BLE001 - any source may fail its own way
                errors.append(str(exc))
        raise UnknownNameError(f"no schema for database '{db_id}': " + "; ".join(errors or ["no sources"]))


def _no_schemas(db_id: str) -> DatabaseSchema:
    raise UnknownNameError(f"this example pool has no schema source (asked for '{db_id}')")


@dataclass
class ExamplePool:
    """Examples plus where their schemas come from."""

    examples: list[PoolExample]
    name: str = "pool"
    schemas: SchemaSource = field(default=_no_schemas, repr=False)

    def __post_init__(self) -> None:
        ids = [e.id for e in self.examples]
        if len(set(ids)) != len(ids) or any(not i for i in ids):
            self.examples = [e if e.id else PoolExample(e.question, e.sql, e.db_id, str(i))
                             for i, e in enumerate(self.examples)]
            if len({e.id for e in self.examples}) != len(self.examples):
                raise InputError(f"example pool '{self.name}' has duplicate example ids")
        self._by_id = {e.id: e for e in self.examples}

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.examples)

    def __getitem__(self, i: int) -> PoolExample:
        return self.examples[i]

    def get(self, example_id: str) -> PoolExample:
        return self._by_id[example_id]

    def schema(self, db_id: str) -> DatabaseSchema:
        return self.schemas(db_id)

    @property
    def fingerprint(self) -> str:
        """Content hash (questions, SQL, databases, ids): keys the embedding and CoT caches."""
        h = hashlib.sha256()
        for e in self.examples:
            h.update("\x1f".join((e.id, e.db_id, e.question, e.sql)).encode("utf-8"))
            h.update(b"\x1e")
        return h.hexdigest()[:16]

    def filter(self, keep: Callable[[PoolExample], bool], *, name: str | None = None) -> "ExamplePool":
        return ExamplePool([e for e in self.examples if keep(e)], name=name or self.name, schemas=self.schemas)

    def without_dbs(self, db_ids: Iterable[str]) -> "ExamplePool":
        """The cross-fold view: examples of every other database."""
        drop = set(db_ids)
        return self.filter(lambda e: e.db_id not in drop, name=f"{self.name}-without-{'-'.join(sorted(drop))}")

    # -- loaders ------------------------------------------------------------
    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, name: str = "pool",
                     schemas: SchemaSource | None = None, origin: str = "records") -> "ExamplePool":
        """From dicts with ``question``, ``sql``/``query``/``SQL`` and ``db_id``/``db``."""
        examples = []
        for i, r in enumerate(records):
            question = r.get("question")
            sql = r.get("sql") or r.get("query") or r.get("SQL")
            db_id = r.get("db_id") or r.get("db")
            if not (isinstance(question, str) and isinstance(sql, str) and isinstance(db_id, str)):
                raise InputError(f"{origin}: example {i} needs string fields question, sql (or query) and db_id")
            examples.append(PoolExample(" ".join(question.split()), sql.strip(), db_id, str(r.get("id", i))))
        return cls(examples, name=name, schemas=schemas or _no_schemas)

    @classmethod
    def from_spider(cls, path: str | os.PathLike[str], *, db_dir: str | os.PathLike[str] | None = None,
                    schemas: SchemaSource | None = None, name: str | None = None) -> "ExamplePool":
        """Spider-format training questions; schemas from ``db_dir`` (default: ``database/`` beside the file)."""
        p = Path(path)
        try:
            rows = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read Spider examples {p}: {exc}") from exc
        if schemas is None:
            folder = Path(db_dir) if db_dir else p.parent / "database"
            schemas = SqliteSchemas(folder)
        return cls.from_records(rows, name=name or p.stem, schemas=schemas, origin=str(p))

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], *, schemas: SchemaSource | None = None,
                   name: str | None = None) -> "ExamplePool":
        """A query log: one JSON object per line (blank lines and ``#`` lines skipped)."""
        p = Path(path)
        records = []
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                records.append(json.loads(line))
            except ValueError as exc:
                raise InputError(f"{p}:{n}: not a JSON object: {exc}") from exc
        return cls.from_records(records, name=name or p.stem, schemas=schemas, origin=str(p))

    @classmethod
    def from_dataset(cls, dataset: Any, *, exclude_dbs: Sequence[str] = (),
                     schemas: SchemaSource | None = None, name: str | None = None) -> "ExamplePool":
        """Examples of a loaded ``kgsql.eval.datasets.Dataset`` (first gold SQL each),
        leaving out ``exclude_dbs`` (the test databases of a cross-fold split)."""
        drop = set(exclude_dbs)
        examples = [PoolExample(" ".join(e.question.split()), e.gold[0].strip(), e.db_id, f"{e.db_id}:{e.id}")
                    for e in dataset.examples if e.db_id not in drop and e.gold]
        if schemas is None:
            from kgsql.ingest.reader import read_database

            files = {k: v for k, v in dataset.db_files.items() if v is not None}
            cache: dict[str, DatabaseSchema] = {}

            def from_files(db_id: str) -> DatabaseSchema:
                if db_id not in files:
                    raise UnknownNameError(f"dataset has no SQLite file for '{db_id}'")
                if db_id not in cache:
                    cache[db_id] = read_database(files[db_id], name=db_id, with_stats=False)
                return cache[db_id]

            schemas = from_files
        label = name or f"{dataset.name}-{dataset.split}" + (f"-without-{'-'.join(sorted(drop))}" if drop else "")
        return cls(examples, name=label, schemas=schemas)
