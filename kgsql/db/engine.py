"""A database engine is one class: what kgsql must know of it, registered once.

Modelled on sqlglot's dialects. Everything that differs between engines and
is not a driver call is a class attribute of one :class:`Engine` subclass:
the names a user writes a database by (URL schemes, file suffixes, a file
header), the label a user reads, how identifiers are quoted, the functions
generated SQL may not call, how the engine's error messages read as the kinds
self-correction acts on, the forms of its spatial SQL, the functions it lacks,
and a few facts of its SQL (NULL ordering, integer division). The class
registers itself with :func:`register_engine`; code that used to compare
engine names (``== "sqlite"``) asks the class instead, so adding an engine is
one module (``kgsql/db/engines/<name>.py``, imported by
``kgsql/db/engines/__init__.py``) plus its tests.

An instance is one open database (``kgsql.db.engines.base.OneConnection``
for engines behind a driver). SQLite's class is ``in_process``: kgsql opens
a SQLite file itself for each use (the guard's authorizer, the ingest
reader), so it describes SQLite but is never opened as an object.

:class:`Target`, a parsed database reference, lives here too because an
engine class makes them (:meth:`Engine.target_for_path`,
:meth:`Engine.target_for_url`); :mod:`kgsql.db.target` is the edge that
parses what a user typed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, TypeVar
from urllib.parse import unquote

from kgsql.db.result import QueryResult
from kgsql.db.sql_errors import ErrorKind, Pattern, classify_message
from kgsql.errors import InputError
from kgsql.registry import Registry
from kgsql.schema.model import DatabaseSchema
from kgsql.schema.spatial_forms import SpatialForms
from kgsql.secrets import redact_uri

__all__ = ["ENGINES", "Engine", "Target", "default_engine", "engine_for_dialect", "engine_for_header",
           "engine_for_path", "engine_for_scheme", "engine_named", "file_suffixes", "register_engine",
           "unregister_engine", "url_path"]

#: A bare identifier most engines read as written (SQLite, DuckDB: case-insensitively).
PLAIN_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

E = TypeVar("E", bound="type[Engine]")


@dataclass(frozen=True)
class Target:
    """One database: which engine, how to reach it, and how to show it.

    ``engine`` is the engine's registered name (``engine_class`` its class).
    ``url`` holds the password when one was given (never print it);
    ``display`` masks it. ``path`` is the file of file engines (SQLite,
    DuckDB). ``name`` is the database's default name in the graph: the file
    stem, or PostgreSQL's database name.
    """

    engine: str
    url: str = field(repr=False)
    display: str
    name: str
    path: Path | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def engine_class(self) -> type[Engine]:
        return engine_named(self.engine)

    @property
    def is_file(self) -> bool:
        return bool(self.engine_class.suffixes)

    @property
    def label(self) -> str:
        return self.engine_class.label

    def __str__(self) -> str:  # never the password
        return self.display


class Engine:
    """One database engine. Class attributes describe it; an instance is one open database.

    A subclass sets ``name`` (kgsql's name, which is also sqlglot's dialect
    name) and what applies of the rest, then registers with
    :func:`register_engine`.
    """

    name: ClassVar[str] = ""
    #: What a user reads ("PostgreSQL").
    label: ClassVar[str] = ""
    #: The dialect name and label when the database has geometry ("postgis", "PostGIS"); "" when none.
    spatial_name: ClassVar[str] = ""
    spatial_label: ClassVar[str] = ""
    #: The spatial function knowledge base of the spatial dialect (:mod:`kgsql.sql.spatialite`).
    function_kb: ClassVar[str] = ""
    #: How its spatial flavour writes a relation or a measure in metres; None: no spatial flavour.
    spatial_forms: ClassVar[SpatialForms | None] = None
    #: URL schemes, lower case; the first is the one kgsql writes (``duckdb://...``).
    schemes: ClassVar[tuple[str, ...]] = ()
    #: File suffixes, lower case; the first is the one a rename hint suggests. Empty: not a file engine.
    suffixes: ClassVar[tuple[str, ...]] = ()
    #: A path with no other engine's suffix is this engine's (SQLite: ``x.db``, ``x``).
    default_for_paths: ClassVar[bool] = False
    #: Code-fence languages a model labels this engine's SQL with (```postgresql).
    fence_names: ClassVar[frozenset[str]] = frozenset()
    #: How a user names one, for the "unsupported scheme" message ("duckdb:///path.duckdb").
    example: ClassVar[str] = ""
    #: Opened by kgsql itself for each use (SQLite), not kept open as an instance.
    in_process: ClassVar[bool] = False
    #: The URL may carry a password (kept out of the graph: :mod:`kgsql.db.credentials`).
    takes_password: ClassVar[bool] = False
    quote_char: ClassVar[str] = '"'
    #: Identifiers written bare; others are quoted.
    plain_identifier: ClassVar[re.Pattern[str]] = PLAIN_IDENTIFIER
    #: Function-name prefixes refused on this engine, on top of the list every engine refuses
    #: (:func:`kgsql.db.functions.is_denied_function`).
    denied_prefixes: ClassVar[tuple[str, ...]] = ()
    #: The engine's error messages as kinds, first match wins.
    error_patterns: ClassVar[tuple[Pattern, ...]] = ()
    #: Functions of other dialects the engine lacks -> what to write instead (a correction tip's advice).
    function_equivalents: ClassVar[Mapping[str, str]] = {}
    #: Core functions' signatures, for a wrong-argument-count tip.
    function_signatures: ClassVar[Mapping[str, str]] = {}
    #: Does an ascending ORDER BY put NULLs first? None: NULLs last either way.
    nulls_first_when_ascending: ClassVar[bool | None] = None
    #: Does ``/`` of two integers truncate?
    integer_division: ClassVar[bool] = False

    # ------------------------------------------------------------------ what the class says

    @classmethod
    def quote(cls, identifier: str) -> str:
        """``identifier`` quoted, embedded quote characters doubled."""
        q = cls.quote_char
        return q + identifier.replace(q, q + q) + q

    @classmethod
    def ref(cls, identifier: str) -> str:
        """``identifier`` as written in SQL: bare when plain, quoted otherwise."""
        return identifier if cls.plain_identifier.match(identifier) else cls.quote(identifier)

    @classmethod
    def quote_table(cls, name: str) -> str:
        """A table of this engine's schema graph, quoted for SQL (one identifier, where tables have no schema)."""
        return cls.quote(name)

    @classmethod
    def table_ref(cls, name: str) -> str:
        """A table of this engine's schema graph as written in SQL: bare when plain, quoted otherwise."""
        return cls.ref(name)

    @classmethod
    def classify_error(cls, message: str) -> tuple[ErrorKind, str | None]:
        """The kind of one of the engine's error messages, and the name it mentions."""
        return classify_message(message.strip(), cls.error_patterns)

    @classmethod
    def matches_header(cls, header: bytes) -> bool:
        """True when a file's first 16 bytes say it is this engine's format."""
        return False

    @classmethod
    def display_for(cls, path: Path) -> str:
        """How a file of this engine is shown and stored: its URL."""
        return f"{cls.schemes[0]}://{path}"

    @classmethod
    def rename_hint(cls, path: Path) -> str:
        """How to name ``path`` (this engine's file, misnamed) so kgsql opens it with this engine."""
        return f"ingest it as {cls.display_for(path.resolve())} or rename it to {path.stem}{cls.suffixes[0]}"

    @classmethod
    def target_for_path(cls, path: Path) -> Target:
        """The target of a file of this engine (not checked for existence)."""
        resolved = path.expanduser()
        try:
            resolved = resolved.resolve()
        except OSError:  # pragma: no cover - a path resolve() cannot follow
            pass
        display = cls.display_for(resolved)
        return Target(engine=cls.name, url=display, display=display, name=resolved.stem, path=resolved)

    @classmethod
    def target_for_url(cls, text: str) -> Target:
        """The target of a URL with one of :attr:`schemes`; file engines read the path after the scheme."""
        return cls.target_for_path(url_path(text))

    # ------------------------------------------------------------------ one open database

    def __init__(self, target: Target) -> None:
        self.target = target

    @property
    def dialect(self) -> str:
        """sqlglot's dialect name: the engine's name."""
        return self.name

    def execute(self, statement: str, *, timeout_s: float, max_rows: int, max_bytes: int) -> QueryResult:
        """Run one already-validated query read-only under the caps; raise the guard's errors."""
        raise NotImplementedError

    def read_schema(self, name: str, *, sample_rows: int, value_examples: int, with_stats: bool) -> DatabaseSchema:
        """Tables, columns, types, keys, foreign keys, row counts, statistics and geometry columns."""
        raise NotImplementedError

    def run(self, sql: str) -> list[tuple[Any, ...]]:
        """One of kgsql's own statements (catalog, statistics), all rows; DatabaseFileError when it fails."""
        raise NotImplementedError

    def text_values(self, table: str, column: str, *, scan_rows: int, max_chars: int, limit: int) -> list[str]:
        """The most frequent short values of one text column (the value index's input)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the connection (reopened on next use)."""


def url_path(text: str) -> Path:
    """The file of a file engine's URL: ``scheme:///abs`` is ``/abs``, ``scheme:x.duckdb`` relative."""
    rest = text.split(":", 1)[1]
    if rest.startswith("//"):
        rest = rest[2:]  # the empty authority
        if rest and not rest.startswith("/"):
            raise InputError(f"{redact_uri(text)}: a file URL has no host; "
                             f"write three slashes before an absolute path (duckdb:///data/x.duckdb)")
    path = unquote(rest.split("?", 1)[0])
    if not path:
        raise InputError(f"{redact_uri(text)}: the URL names no file")
    return Path(path)


# --------------------------------------------------------------------------- the registry

#: Every engine kgsql knows, by name, in registration order (built-in ones: :mod:`kgsql.db.engines`).
ENGINES: Registry[type[Engine]] = Registry("database engine", error=InputError)


def register_engine(cls: E) -> E:
    """Make ``cls`` known under its ``name`` (a class decorator); a later class of the same name replaces it."""
    if not cls.name or not cls.label:
        raise ValueError(f"{cls.__name__}: an engine needs a name and a label")
    return ENGINES.register(cls.name, cls)  # type: ignore[return-value]


def unregister_engine(name: str) -> None:
    """Forget an engine (tests register their own and remove them)."""
    ENGINES.unregister(name)


def engine_named(name: str) -> type[Engine]:
    """The engine registered as ``name``; InputError with the closest name otherwise."""
    return ENGINES.get(name)


def default_engine() -> type[Engine]:
    """The engine of a path no suffix claims, and of an open DB-API connection: SQLite."""
    return next(e for e in ENGINES.values() if e.default_for_paths)


def engine_for_dialect(dialect: str) -> type[Engine] | None:
    """The engine a dialect name belongs to: its name, spatial name or a URL scheme ("postgis" -> PostgreSQL)."""
    low = dialect.lower()
    if not low:
        return None
    return next((e for e in ENGINES.values() if low in (e.name, e.spatial_name) or low in e.schemes), None)


def engine_for_scheme(scheme: str) -> type[Engine] | None:
    """The engine of a URL scheme, or None."""
    low = scheme.lower()
    return next((e for e in ENGINES.values() if low in e.schemes), None)


def engine_for_path(path: str | Path) -> type[Engine]:
    """The engine of a file path, from its suffix alone (no file access)."""
    suffix = Path(path).suffix.lower()
    return next((e for e in ENGINES.values() if suffix in e.suffixes), None) or default_engine()


def engine_for_header(header: bytes) -> type[Engine] | None:
    """The engine whose file format begins with ``header`` (a file's first 16 bytes), or None."""
    return next((e for e in ENGINES.values() if e.matches_header(header)), None)


def file_suffixes() -> frozenset[str]:
    """Every file engine's suffixes: what a folder search picks up."""
    return frozenset(s for e in ENGINES.values() for s in e.suffixes)
