"""Ingest one SQLite file or a folder of them into the schema graph.

Two phases so bad input never half-writes the graph: first every database
is read and its knowledge merged (any missing, corrupt or non-SQLite file,
or malformed description/profile, fails here before a single write); then
each database is written atomically (``kgsql.graph.writer``).

A database name must be one something can address later (:func:`check_name`),
and a database already in the graph under the same name but read from another
engine (a SQLite file where a PostgreSQL database is now ingested) is not
replaced unless ``replace=True`` says so (:func:`refuse_other_engine`); a
re-ingest from the same engine updates it as always.

``keep_going=True`` (the CLI's folder ingest) instead records a database that
cannot be read, or whose ingest lock another ingest holds, as an entry of
``IngestReport.errors`` and goes on with the others; the caller reports the
entries and exits non-zero. Warnings (a shipped profile that does not match
its database) land in ``IngestReport.warnings``.
"""
from __future__ import annotations

import os
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, TypeVar

from kgsql.db.credentials import remember
from kgsql.db.engine import engine_for_dialect
from kgsql.db.target import Target, is_url, parse_target
from kgsql.errors import IngestInProgressError, InputError, KgsqlError
from kgsql.graph.store import GraphStore
from kgsql.graph.writer import WriteResult, write_schema
from kgsql.ingest.discover import add_discovered_joins
from kgsql.ingest.knowledge import enrich
from kgsql.ingest.reader import DEFAULT_SAMPLE_ROWS, read_database, require_databases
from kgsql.schema.model import DatabaseSchema

T = TypeVar("T")


@dataclass
class IngestReport:
    """What an ingest did, as printed by ``--json``."""

    databases: int = 0
    tables: int = 0
    columns: int = 0
    foreign_keys: int = 0
    spatial_columns: int = 0
    changed: int = 0
    unchanged: int = 0
    dangling_foreign_keys: dict[str, list[str]] = field(default_factory=dict)
    #: joins found in the data: ``{db: [{"from": "t.c", "to": "t.c", "coverage": 0.98}]}``
    discovered_joins: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    read_seconds: float = 0.0
    write_seconds: float = 0.0
    seconds: float = 0.0
    per_database: list[dict[str, Any]] = field(default_factory=list)
    #: databases not ingested: ``{"database", "path", "error"}`` (``keep_going`` only)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, result: WriteResult, schema: DatabaseSchema) -> None:
        self.databases += 1
        self.tables += result.tables
        self.columns += result.columns
        self.foreign_keys += result.foreign_keys
        self.spatial_columns += result.spatial_columns
        self.changed += int(result.changed)
        self.unchanged += int(not result.changed)
        if schema.dangling_foreign_keys:
            self.dangling_foreign_keys[schema.name] = [
                f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}"
                for fk in schema.dangling_foreign_keys
            ]
        self.per_database.append(asdict(result))

    def fail(self, database: str, path: str | os.PathLike[str] | None, exc: KgsqlError) -> None:
        where = str(path) if path else database
        text = str(exc) if where in str(exc) else f"{where}: {exc}"
        self.errors.append({"database": database, "path": str(path or ""), "error": text})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_sources(
    source: str | os.PathLike[str],
    *,
    name: str | None = None,
    descriptions_dir: Path | None = None,
    region_csv: Path | None = None,
    profile_path: Path | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    progress: bool = False,
    report: IngestReport | None = None,
    keep_going: bool = False,
    discover_joins: str = "auto",
    shipped_profiles: bool = True,
) -> list[DatabaseSchema]:
    """Phase one: read and enrich every database under ``source`` (no graph writes).

    Warnings go to ``report.warnings`` (to the ``kgsql.ingest`` logger without
    a report). With ``keep_going`` and a ``report``, a database that cannot be
    read is recorded there (``report.fail``) and skipped; otherwise the first
    error is raised. ``discover_joins`` (auto | on | off): add the joins found in
    the data (``kgsql.ingest.discover``); auto where the declared keys are too few
    to connect the tables. ``shipped_profiles``: False reads the database and the files beside it
    only, never a profile shipped with kgsql (what a user's own database gets; issue 29).
    ``region_csv``: a ``<db>.table.csv`` of region descriptions for the one database (``--regions``).
    """
    if sample_rows < 1:
        raise InputError(f"sample_rows must be a positive number of rows, not {sample_rows}")
    if name is not None:
        check_name(name)
    root: Path | Target = Path(source) if not is_url(os.fspath(source)) else parse_target(os.fspath(source))
    paths: list[Path] | list[Target] = [root] if isinstance(root, Target) else require_databases(root)  # type: ignore[list-item]
    if name and len(paths) > 1:
        raise InputError(f"--name applies to one database but {root} holds {len(paths)}")
    for option, given in (("--profile", profile_path), ("--regions", region_csv)):
        if given is not None and len(paths) > 1:
            raise InputError(f"{option} applies to one database but {root} holds {len(paths)}")
    schemas: list[DatabaseSchema] = []
    seen: dict[str, Target] = {}
    warn = report.warnings.append if report is not None else None
    for path in _progress(paths, progress, "read"):
        target = path if isinstance(path, Target) else parse_target(path)
        try:
            schema = read_database(target, name, sample_rows=sample_rows)
            enriched = enrich(schema, target.path, descriptions_dir=descriptions_dir, region_csv=region_csv,
                              profile_path=profile_path,
                              warn=warn, source_name=target.name, use_shipped_profiles=shipped_profiles)
            found = add_discovered_joins(enriched, target.path if target.engine_class.in_process else target.url,
                                         discover_joins)
        except KgsqlError as exc:
            if report is None or not keep_going:
                raise
            report.fail(name or target.name, target.display, exc)
            continue
        remember(target)  # a URL's password, kept out of the graph (kgsql.db.credentials)
        if schema.name in seen:
            raise InputError(
                f"two databases named '{schema.name}': {seen[schema.name]} and {target}; ingest them separately with --name"
            )
        seen[schema.name] = target
        schemas.append(enriched)
        if found and report is not None:
            report.discovered_joins[enriched.name] = [j.to_dict() for j in found]
    return schemas


def ingest(
    store: GraphStore,
    source: str | os.PathLike[str],
    *,
    name: str | None = None,
    descriptions_dir: Path | None = None,
    region_csv: Path | None = None,
    profile_path: Path | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    force: bool = False,
    progress: bool = False,
    keep_going: bool = False,
    discover_joins: str = "auto",
    replace: bool = False,
    shipped_profiles: bool = True,
) -> IngestReport:
    """Read every database under ``source`` then write each into ``store``.

    ``keep_going``: a database that cannot be read, or is being ingested by
    someone else, or whose name is taken by another engine's database,
    becomes an entry of ``report.errors`` instead of an error. ``replace``:
    replace a database of another engine with the same name (a warning says so).
    """
    report = IngestReport()
    t0 = time.perf_counter()
    schemas = read_sources(
        source,
        name=name,
        descriptions_dir=descriptions_dir,
        region_csv=region_csv,
        profile_path=profile_path,
        sample_rows=sample_rows,
        progress=progress,
        report=report,
        keep_going=keep_going,
        discover_joins=discover_joins,
        shipped_profiles=shipped_profiles,
    )
    report.read_seconds = time.perf_counter() - t0
    write_schemas(store, schemas, report, force=force, progress=progress, keep_going=keep_going, replace=replace)
    report.seconds = time.perf_counter() - t0
    return report


def write_schemas(
    store: GraphStore,
    schemas: list[DatabaseSchema],
    report: IngestReport,
    *,
    force: bool = False,
    progress: bool = False,
    keep_going: bool = False,
    replace: bool = False,
) -> IngestReport:
    """Phase two: write each of :func:`read_sources`' schemas into ``store``, into ``report``
    (``keep_going`` and ``replace`` as for :func:`ingest`). Split from phase one so that a caller
    can read, and fail on bad input, before it connects to (or starts) a graph server."""
    t1 = time.perf_counter()
    for schema in _progress(schemas, progress, "write"):
        try:
            replaced = refuse_other_engine(store, schema, replace=replace)
        except InputError as exc:
            if not keep_going:
                raise
            report.fail(schema.name, schema.path, exc)
            continue
        if replaced:
            report.warnings.append(f"replaced '{schema.name}' ({replaced}) with {schema.path}")
        try:
            report.add(write_schema(store, schema, force=force), schema)
        except IngestInProgressError as exc:
            if not keep_going:
                raise type(exc)(f"{schema.name}: {exc}") from exc
            report.fail(schema.name, schema.path, exc)
        except KgsqlError as exc:
            raise type(exc)(f"{schema.name}: {exc}") from exc
    report.write_seconds += time.perf_counter() - t1
    return report


def check_name(name: str) -> str:
    """``name`` if a later ``--db NAME`` can address it; InputError otherwise (empty, blank,
    space around it, control characters), before anything is read or written."""
    if not name.strip():
        raise InputError(f"the database name {name!r} is empty; give a name, or leave --name out for the file's own")
    if name != name.strip():
        raise InputError(f"the database name {name!r} starts or ends with spaces; write {name.strip()!r}")
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise InputError(f"the database name {name!r} holds control characters")
    return name


def _engine_label(dialect: str) -> tuple[str, str]:
    """(engine name, label) of a stored dialect ("spatialite" is SQLite's); an unknown one as it is."""
    engine = engine_for_dialect(dialect)
    return (engine.name, engine.label) if engine is not None else (dialect, dialect)


def refuse_other_engine(store: GraphStore, schema: DatabaseSchema, *, replace: bool) -> str | None:
    """Refuse (InputError) to write ``schema`` over a database of the same name that another engine
    holds, unless ``replace``; what is replaced then ("a SQLite database at PATH"), else None.

    Two engines under one name are two different databases, so a silent replacement would lose one;
    the same engine again is the usual re-ingest (an updated file, a moved file) and passes.
    """
    rows = store.run("database_get", name=schema.name)
    if not rows:
        return None
    props = rows[0]["props"]
    old, old_label = _engine_label(str(props.get("dialect") or "sqlite"))
    new, new_label = _engine_label(schema.dialect)
    if old == new:
        return None
    what = f"a {old_label} database at {props.get('path') or '?'}"
    if replace:
        return what
    raise InputError(f"the graph already has a database named '{schema.name}': {what}; ingesting this "
                     f"{new_label} database under that name would replace it: give it "
                     f"another --name, or add --replace to replace it")


def _progress(items: list[T], enabled: bool, stage: str) -> Iterable[T]:
    """A progress bar on stderr for multi-database ingests (plain iteration otherwise)."""
    if not enabled or len(items) <= 1:
        return items
    from tqdm import tqdm

    return tqdm(items, unit="db", desc=f"ingest: {stage}", leave=False)
