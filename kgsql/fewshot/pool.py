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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from kgsql.errors import InputError
from kgsql.ingest.sources import SqliteSchemas
from kgsql.schema.sources import FirstOf, GraphSchemas, SchemaSource, no_schemas
from kgsql.schema.model import DatabaseSchema

__all__ = ["ExamplePool", "FirstOf", "GraphSchemas", "PoolExample", "SchemaSource", "SqliteSchemas"]


@dataclass(frozen=True)
class PoolExample:
    """One candidate example. ``id`` is unique within its pool."""

    question: str
    sql: str
    db_id: str
    id: str = ""


@dataclass
class ExamplePool:
    """Examples plus where their schemas come from."""

    examples: list[PoolExample]
    name: str = "pool"
    schemas: SchemaSource = field(default=no_schemas, repr=False)

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
        return cls(examples, name=name, schemas=schemas or no_schemas)

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
        """Examples from the questions of a loaded ``kgsql.eval.datasets.Dataset`` (first gold SQL each),
        leaving out ``exclude_dbs`` (the test databases of a cross-fold split)."""
        drop = set(exclude_dbs)
        examples = [PoolExample(" ".join(e.question.split()), e.gold[0].strip(), e.db_id, f"{e.db_id}:{e.id}")
                    for e in dataset.questions if e.db_id not in drop and e.gold]
        if schemas is None:
            schemas = SqliteSchemas(files=dataset.db_files)
        label = name or f"{dataset.name}-{dataset.split}" + (f"-without-{'-'.join(sorted(drop))}" if drop else "")
        return cls(examples, name=label, schemas=schemas)
