"""PostgreSQL (and PostGIS) through psycopg 3: read-only by construction.

Every connection kgsql opens starts its sessions with
``default_transaction_read_only=on``; every generated query then runs

* inside a transaction that is declared ``READ ONLY`` before anything else
  and always rolled back, so no statement in it can write, whatever the
  role may do;
* with ``SET LOCAL statement_timeout``, so the server itself stops it;
* as ``DECLARE ... CURSOR FOR <query>`` (a server-side cursor), which the
  server accepts only for SELECT or VALUES, and which is read in batches,
  so a huge result stops at the row cap without being sent whole.

The lexical and sqlglot layers of :func:`kgsql.db.statement.validate_query`
run before (one statement, a query, no denied function — PostgreSQL's
file/session/administration functions are on the deny list). Then, per
connection and from the database's own catalog, the engine refuses

* to run generated SQL at all when the connected role could do more than
  read (a superuser, a role that can write or reach the server's files:
  :mod:`kgsql.db.engines.pg_role`), unless the user insists with
  ``--allow-privileged`` (:mod:`kgsql.db.privilege`);
* a statement calling a function that runs SQL given as text, or otherwise
  reaches past the query (``ts_stat``, ``query_to_xml``, dblink...:
  :mod:`kgsql.db.engines.pg_functions`), whose SQL no static check sees.

Reading the schema (ingest) runs only kgsql's own catalog and statistics
statements, so a privileged role may still be read, with one warning.
docs/engines.md ("The role kgsql runs as") gives the SELECT-only role recipe.

The catalog (``pg_class``, ``pg_attribute``, ``pg_constraint``, PostGIS's
``geometry_columns``) gives what SQLAlchemy's reflection would and more:
exact keys and foreign keys, and each geometry column's type and SRID.
Tables are those of every schema but the system's that the role may read:
one visible on the connection's ``search_path`` by its own name, any other
as ``schema.table`` (``hr.staff``), as SQL names it (a same-named table in
two schemas is two tables; set the path with
``?options=-csearch_path%3Dmyschema`` in the URL); tables the role cannot
read are left out with one warning, and objects that belong to extensions
(PostGIS's ``spatial_ref_sys``) are left out.
"""
from __future__ import annotations

import logging
import re
import time
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from kgsql.db.credentials import connect_url
from kgsql.db.engine import Target, register_engine
from kgsql.db.engines.base import (
    OneConnection,
    Pattern,
    column_stats,
    fetch_capped,
    first_line,
    plain_value,
    quote_identifier,
)
from kgsql.db.engines.pg_functions import called_names, reaching_functions
from kgsql.db.engines.pg_role import role_problems
from kgsql.db.functions import is_denied_function
from kgsql.db.guard import QueryResult
from kgsql.db.privilege import privileged_allowed
from kgsql.db.sql_errors import QueryResourceError, QueryTimeoutError, SQLQueryError
from kgsql.db.statement import _unsafe
from kgsql.errors import DatabaseFileError, InputError
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, SpatialInfo, Table
from kgsql.schema.spatial_forms import Measured, SpatialForms
from kgsql.secrets import MASK, redact_uri

__all__ = ["POSTGIS_FORMS", "PostgresEngine", "PrivilegedRoleError", "ROLE_RECIPE"]

log = logging.getLogger("kgsql.ingest")

#: Where the SELECT-only role recipe is.
ROLE_RECIPE: Final = 'docs/engines.md, "The role kgsql runs as"'

CONNECT_TIMEOUT_S: Final = 10
#: standard_conforming_strings: a backslash in a plain string is a backslash, as the guard's tokenizers read it.
_SESSION_OPTIONS: Final = ("-c default_transaction_read_only=on -c idle_in_transaction_session_timeout=60000 "
                           "-c standard_conforming_strings=on")

#: SQLSTATE classes and codes -> the error kinds self-correction acts on.
_SQLSTATE_KINDS: Final[dict[str, str]] = {
    "42P01": "no_such_table", "42703": "no_such_column", "42702": "ambiguous_column",
    "42883": "no_such_function", "42601": "syntax", "42P10": "syntax", "42803": "other",
}
_NAME_PATTERNS: Final[tuple[Pattern, ...]] = (
    ("no_such_table", re.compile(r'relation "(?P<name>[^"]+)" does not exist')),
    ("no_such_table", re.compile(r'missing FROM-clause entry for table "(?P<name>[^"]+)"')),
    ("no_such_column", re.compile(r'column "?(?P<name>[^"\s]+)"? does not exist')),
    ("ambiguous_column", re.compile(r'column reference "(?P<name>[^"]+)" is ambiguous')),
    ("no_such_function", re.compile(r"function (?P<name>[\w.]+)\(")),
    ("syntax", re.compile(r'syntax error at or near "(?P<name>[^"]*)"')),
    ("syntax", re.compile(r"syntax error at end of input")),
)
_WRITE_STATES: Final = frozenset({"25006", "0A000"})  # read_only_sql_transaction; DECLARE of a non-query


class PrivilegedRoleError(DatabaseFileError):
    """The connected role could do more than read, so generated SQL is not run on it."""


class _ConnectionFacts:
    """What the catalog says about one connection, read once: its role and the functions to refuse."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.role = ""
        self.role_problems: list[str] | None = None
        self.reaching: dict[str, str] | None = None
        self.warned = False


#: PostGIS's forms: a geography cast measures on the spheroid, in metres.
POSTGIS_FORMS: Final = SpatialForms(
    within="ST_Within({a}, {b})", intersects="ST_Intersects({a}, {b})",
    length=Measured("ST_Length({g}::geography)", "ST_Length({g})"),
    area=Measured("ST_Area({g}::geography)", "ST_Area({g})"),
    distance=Measured("ST_Distance({a}::geography, {b}::geography)", "ST_Distance({a}, {b})"),
    bounds=("ST_XMin({g})", "ST_XMax({g})", "ST_YMin({g})", "ST_YMax({g})"))

#: Function-name prefixes refused on PostgreSQL: files, sessions, other connections, administration,
#: SQL held in a string, sleeping (the read-only transaction already stops writes).
DENIED_PREFIXES: Final = (
    "pg_read_", "pg_ls_", "pg_stat_file", "pg_file_", "lo_", "dblink", "pg_terminate_backend",
    "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote", "set_config", "pg_sleep",
    "pg_advisory", "pg_try_advisory", "pg_notify", "pg_logical_", "pg_switch_wal", "pg_create_",
    "pg_drop_", "pg_replication_", "pg_backup_", "pg_start_backup", "pg_stop_backup", "txid_current",
    "pg_current_xact_id", "nextval", "setval", "query_to_xml", "cursor_to_xml", "table_to_xml",
    "schema_to_xml", "database_to_xml", "pg_import_", "pg_stat_reset", "pg_stat_statements_reset",
    "pg_wal_", "pg_log_", "pg_copy_", "pg_export_snapshot",
)


@register_engine
class PostgresEngine(OneConnection):
    """One PostgreSQL database; one connection, used by one query at a time."""

    name = "postgres"
    label = "PostgreSQL"
    spatial_name = "postgis"
    spatial_label = "PostGIS"
    function_kb = "postgis"
    spatial_forms = POSTGIS_FORMS
    schemes = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2")
    fence_names = frozenset({"postgresql", "postgres", "psql"})
    example = "postgresql://..."
    takes_password = True
    plain_identifier = re.compile(r"^[a-z_][a-z0-9_]*$")  # bare names fold to lower case
    denied_prefixes = DENIED_PREFIXES
    error_patterns = _NAME_PATTERNS
    nulls_first_when_ascending = False
    integer_division = True

    @classmethod
    def quote_table(cls, name: str) -> str:
        """``hr.staff`` -> ``"hr"."staff"``: a table outside the search path is named with its schema
        (:meth:`_tables`), and a schema's name holds no dot, so the first dot splits it."""
        schema, dot, table = name.partition(".")
        return f"{cls.quote(schema)}.{cls.quote(table)}" if dot else cls.quote(name)

    @classmethod
    def table_ref(cls, name: str) -> str:
        schema, dot, table = name.partition(".")
        return f"{cls.ref(schema)}.{cls.ref(table)}" if dot else cls.ref(name)

    @classmethod
    def target_for_url(cls, text: str) -> Target:
        """A ``postgresql://`` target: the database name from the path or ``?dbname=``, the password kept apart."""
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError as exc:
            raise InputError(f"{redact_uri(text)}: not a valid PostgreSQL URL ({exc})") from exc
        dbname = unquote(parts.path.lstrip("/"))
        if not dbname:
            query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
            dbname = unquote(query.get("dbname", ""))
        if not dbname:
            raise InputError(f"{redact_uri(text)}: the URL names no database; write postgresql://user@host/dbname")
        if port is not None and not 0 < port < 65536:
            raise InputError(f"{redact_uri(text)}: port {port} is out of range")
        url = "postgresql" + text[text.index(":"):]  # psycopg's libpq wants the plain scheme
        password = unquote(parts.password) if parts.password else None
        return Target(engine=cls.name, url=url, display=redact_uri(url), name=dbname,
                      password=None if password == MASK else password)

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._facts: _ConnectionFacts | None = None

    # ------------------------------------------------------------------ connection

    def _connection(self) -> Any:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise DatabaseFileError("PostgreSQL needs psycopg: pip install 'kgsql[postgres]'") from exc
        try:
            self._conn = psycopg.connect(connect_url(self.target), autocommit=False, connect_timeout=CONNECT_TIMEOUT_S,
                                         options=_SESSION_OPTIONS, application_name="kgsql")
        except psycopg.Error as exc:
            raise DatabaseFileError(f"cannot connect to {self.target.display}: {first_line(exc)}") from exc
        return self._conn

    # ------------------------------------------------------------------ what the catalog says of this connection

    def _connection_facts(self) -> _ConnectionFacts:
        """This connection's facts (read anew after a reconnect), with the role's problems filled in."""
        conn = self._connection()
        if self._facts is None or self._facts.conn is not conn:
            self._facts = _ConnectionFacts(conn)
        facts = self._facts
        if facts.role_problems is None:
            facts.role = str(self.run("SELECT current_user")[0][0])
            facts.role_problems = role_problems(self.run)
        return facts

    @staticmethod
    def _what_the_role_can_do(facts: _ConnectionFacts) -> str:
        problems = facts.role_problems or []
        more = f" (and {len(problems) - 1} more reasons it can do more than read)" if len(problems) > 1 else ""
        return f"PostgreSQL role '{facts.role}' {problems[0]}{more}"

    def _refuse_privileged_role(self) -> _ConnectionFacts:
        """Raise PrivilegedRoleError unless the role can only read (or the user insisted)."""
        facts = self._connection_facts()
        if facts.role_problems and not privileged_allowed():
            raise PrivilegedRoleError(f"{self._what_the_role_can_do(facts)}: kgsql runs generated SQL only as a "
                                      f"role that can just read; connect as a SELECT-only role ({ROLE_RECIPE}) "
                                      f"or pass --allow-privileged")
        return facts

    def _refuse_reaching_calls(self, facts: _ConnectionFacts, statement: str) -> None:
        """Raise UnsafeSQLError when ``statement`` calls a function that reaches past the query."""
        if facts.reaching is None:
            facts.reaching = reaching_functions(lambda sql: self.run(sql, jit=False))
        for name in sorted(called_names(statement)):
            why = facts.reaching.get(name)
            if why is not None:
                raise _unsafe(f"function '{name}' is not allowed: it {why} (read from the database's catalog)")
            if is_denied_function(name, "postgres"):  # a name the static check saw only after decoding (U&"...")
                raise _unsafe(f"function '{name}' is not allowed")

    # ------------------------------------------------------------------ guarded queries

    def execute(self, statement: str, *, timeout_s: float, max_rows: int, max_bytes: int) -> QueryResult:
        import psycopg

        with self._lock:
            facts = self._refuse_privileged_role()
            self._refuse_reaching_calls(facts, statement)
            conn = self._connection()
            started = time.perf_counter()
            try:
                conn.execute("SET TRANSACTION READ ONLY")
                conn.execute(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
                with conn.cursor(name="kgsql_query") as cursor:  # closed with its transaction: the name is free again
                    cursor.execute(statement)
                    columns = [d.name for d in cursor.description or ()]
                    return fetch_capped(cursor.fetchmany, columns, statement, started,
                                        max_rows=max_rows, max_bytes=max_bytes)
            except psycopg.Error as exc:
                raise _query_error(exc, statement, timeout_s) from exc
            finally:
                _rollback(conn)

    # ------------------------------------------------------------------ catalog

    def run(self, sql: str, *, jit: bool = True) -> list[tuple[Any, ...]]:
        """One catalog/statistics statement in its own read-only transaction; ``jit=False`` for one whose
        cost estimate would start JIT compilation (most of a second) for nothing."""
        import psycopg

        conn = self._connection()
        try:
            if not jit:
                conn.execute("SET LOCAL jit = off")
            return conn.execute(sql).fetchall()
        except psycopg.Error as exc:
            raise DatabaseFileError(f"{self.target.display}: {first_line(exc)}") from exc
        finally:
            _rollback(conn)

    def _tables(self) -> list[tuple[int, str, str, str]]:
        """(oid, name in the graph, schema, table) of every table, view and foreign table the role may read, in
        every schema but the system's: a table visible on the search path by its own name, any other as
        ``schema.table`` (:meth:`quote_table`). Tables of extensions (PostGIS's ``spatial_ref_sys``) are left out.
        Within a schema in the order they were made (oid, kept by the server), as SQLite lists its tables: the
        same database on two engines then gives the same prompt, and the author's order is usually the telling
        one. A restored dump has pg_dump's order, and a table dropped and made again comes last. (DuckDB
        renumbers its oids when a file is opened, so its reader stays alphabetical.)"""
        found: list[tuple[int, str, str, str]] = []
        unreadable: list[str] = []
        for oid, schema, table, visible, readable in self.run(
                "SELECT c.oid, n.nspname, c.relname, pg_table_is_visible(c.oid), "
                "has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition "
                "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp)' "
                "AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass "
                "AND d.objid = c.oid AND d.deptype = 'e') "
                "ORDER BY NOT pg_table_is_visible(c.oid), n.nspname, c.oid"):
            name = str(table) if visible and "." not in str(table) else f"{schema}.{table}"
            if "." in str(schema):
                unreadable.append(f"{name} (a dot in the schema's name)")
            elif not readable:
                unreadable.append(name)
            else:
                found.append((int(oid), name, str(schema), str(table)))
        if unreadable:
            shown = ", ".join(unreadable[:5]) + (f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
            log.warning("warning: %s: %d table(s) left out, which this role cannot read: %s",
                        self.target.display, len(unreadable), shown)
        return found

    def _geometry_columns(self, names: dict[tuple[str, str], str]) -> dict[tuple[str, str], tuple[str, int | None]]:
        """(name in the graph, column) -> (geometry type, SRID) as PostGIS registers them; ``names`` maps
        (schema, table) to the name in the graph."""
        has_postgis = self.run("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'")[0][0]
        if not has_postgis:
            return {}
        rows = self.run("SELECT f_table_schema, f_table_name, f_geometry_column, type, srid FROM geometry_columns")
        return {(names[(str(n), str(t))], str(c)): (str(g).upper(), int(s) if s else None)
                for n, t, c, g, s in rows if (str(n), str(t)) in names}

    def _warn_privileged_read(self) -> None:
        """Once per connection: the schema is read, but generated SQL will be refused on this role."""
        facts = self._connection_facts()
        if facts.role_problems and not facts.warned and not privileged_allowed():
            facts.warned = True
            log.warning("warning: %s: its schema is read (kgsql's own catalog queries only), but questions on it "
                        "will be refused without --allow-privileged; connect as a SELECT-only role (%s)",
                        self._what_the_role_can_do(facts), ROLE_RECIPE)

    def read_schema(self, name: str, *, sample_rows: int, value_examples: int, with_stats: bool) -> DatabaseSchema:
        with self._lock:
            self._warn_privileged_read()
            listed = self._tables()
            geometry = self._geometry_columns({(schema, table): name for _oid, name, schema, table in listed})
            tables: list[Table] = []
            keys: dict[int, Table] = {}
            attnames: dict[tuple[int, int], str] = {}
            for oid, tname, _schema, _table in listed:
                qt = self.quote_table(tname)
                table = Table(name=tname, row_count=int(self.run(f"SELECT count(*) FROM {qt}")[0][0]))
                primary = {int(k) for (k,) in self.run(
                    f"SELECT unnest(indkey) FROM pg_index WHERE indrelid = {oid} AND indisprimary")}
                for attnum, cname, ctype, notnull in self.run(
                        f"SELECT attnum, attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
                        f"WHERE attrelid = {oid} AND attnum > 0 AND NOT attisdropped ORDER BY attnum"):
                    attnames[(oid, int(attnum))] = cname
                    col = Column(name=cname, type=str(ctype), is_primary_key=int(attnum) in primary,
                                 not_null=bool(notnull))
                    if (tname, cname) in geometry or str(ctype).startswith(("geometry", "geography")):
                        col.spatial = self._spatial_info(tname, cname, geometry.get((tname, cname)))
                    elif with_stats and table.row_count:
                        col.stats, col.value_examples = column_stats(
                            self.run, qt, cname, str(ctype), sample_rows=sample_rows, n_examples=value_examples)
                    table.columns.append(col)
                tables.append(table)
                keys[oid] = table
            foreign_keys = self._foreign_keys(keys, attnames)
        return DatabaseSchema(name=name, tables=tables, foreign_keys=foreign_keys, path=self.target.display,
                              dialect="postgres", is_spatial=bool(geometry) or any(
                                  c.spatial for t in tables for c in t.columns))

    def _foreign_keys(self, tables: dict[int, Table], attnames: dict[tuple[int, int], str]) -> list[ForeignKey]:
        found: list[ForeignKey] = []
        if not tables:
            return found
        oids = ", ".join(str(o) for o in tables)
        for conrelid, confrelid, conkey, confkey in self.run(
                f"SELECT conrelid, confrelid, conkey, confkey FROM pg_constraint "
                f"WHERE contype = 'f' AND conrelid IN ({oids}) ORDER BY conrelid, conname"):
            source, target = tables.get(int(conrelid)), tables.get(int(confrelid))
            if source is None or target is None:
                continue
            for a, b in zip(conkey, confkey):
                found.append(ForeignKey(source.name, attnames[(int(conrelid), int(a))],
                                        target.name, attnames.get((int(confrelid), int(b)), str(b))))
        return found

    def _spatial_info(self, table: str, column: str, registered: tuple[str, int | None] | None) -> SpatialInfo:
        qt, qc = self.quote_table(table), quote_identifier(column)
        kinds = self.run(f"SELECT GeometryType({qc}::geometry) AS g, ST_SRID({qc}::geometry) AS s, count(*) "
                          f"FROM {qt} WHERE {qc} IS NOT NULL GROUP BY g, s ORDER BY count(*) DESC LIMIT 5")
        types = sorted({str(k[0]).upper() for k in kinds if k[0]})
        gtype = types[0] if len(types) == 1 else (registered[0] if registered else "GEOMETRY")
        srid = kinds[0][1] if kinds else (registered[1] if registered else None)
        extent = None
        box = self.run(f"SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) "
                        f"FROM (SELECT ST_Extent({qc}::geometry) AS e FROM {qt}) AS x")
        if box and None not in box[0]:
            extent = [float(plain_value(v)) for v in box[0]]
        return SpatialInfo(geometry_type=gtype, srid=int(srid) if srid else None, extent=extent)



def _rollback(conn: Any) -> None:
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001 - a broken connection is reopened on next use
        try:
            conn.close()
        except Exception:  # noqa: BLE001
            pass




def _query_error(exc: Any, statement: str, timeout_s: float) -> Exception:
    """The guard's error for a psycopg error: timeout, refusal, resource, or a kind for the rules."""
    state = getattr(exc, "sqlstate", None) or ""
    message = first_line(exc)
    if state == "57014":  # query_canceled: statement_timeout
        return QueryTimeoutError(timeout_s, sql=statement)
    if state in _WRITE_STATES or state == "25P02":
        return _unsafe(f"PostgreSQL refused the statement: {message}")
    if state.startswith(("53", "54")):  # insufficient resources, program limit exceeded
        return QueryResourceError(message, sql=statement)
    kind, name = PostgresEngine.classify_error(message)
    kind = _SQLSTATE_KINDS.get(state, kind) if "operator does not exist" not in message else "other"  # type: ignore[assignment]
    if state in ("08000", "08003", "08006") or not state:
        return DatabaseFileError(f"lost the connection to the database: {message}")
    return SQLQueryError(kind, message, name=name, sql=statement)  # type: ignore[arg-type]
