"""Joins nobody declared: inclusion dependencies found in the data.

Many real databases declare few foreign keys, yet retrieval, join hints and
join repair all walk the join graph. ``discover_joins`` proposes
``A -> B`` when

* ``B`` is a unique column (a one-column primary key, or a column whose
  values are all distinct and not null),
* (almost) every distinct value of ``A`` is a value of ``B`` (``coverage``,
  over at most ``max_values`` sampled values of ``A``; ``B`` is read much
  deeper, so a large table stays cheap), and
* the names agree (:func:`name_score`: ``singer_id`` -> ``singer.id``,
  ``stuid`` -> ``Student.StuID``, ``campus`` -> ``campuses.id``); containment
  alone is weak evidence (small integers are contained in every id column), so
  an unrelated name needs full coverage of many values, an id-like name and
  the same type.

Multi-column keys are matched column by column under the same names, with
the tuples contained. Where a table is empty the data cannot decide; a strong
name match to a primary key is then taken alone (coverage ``None``). Each
source column gets at most one target; of two keys holding the same values
(1:1) the one pointing at a declared key wins, and a join to a 1:1
extension's key is pointed on at the key it extends.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from kgsql.db.connect import Connection
from kgsql.db.engine import engine_named
from kgsql.ingest.reader import quote_identifier
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table

#: Distinct values read per column (the first ones SQLite returns).
DEFAULT_MAX_VALUES = 5000
#: Share of a column's distinct values that must be values of the target.
DEFAULT_MIN_COVERAGE = 0.95
#: Targets (unique columns) are read this many times deeper than sources, so a sampled
#: source is compared with (nearly) all of a key's values.
TARGET_FACTOR = 40
#: Without a name match, this many distinct values, all contained, make a join.
UNNAMED_MIN_VALUES = 20


@dataclass(frozen=True)
class DiscoveredJoin:
    """``table.column`` holds values of the unique ``ref_table.ref_column``."""

    table: str
    column: str
    ref_table: str
    ref_column: str
    coverage: float | None  # None: an empty table, matched by name alone
    name_score: float
    ref_is_key: bool = False  # the target is its table's declared primary key

    def as_foreign_key(self) -> ForeignKey:
        return ForeignKey(self.table, self.column, self.ref_table, self.ref_column, "discovered", self.coverage)

    def to_dict(self) -> dict[str, Any]:
        cov = None if self.coverage is None else round(self.coverage, 4)
        return {"from": f"{self.table}.{self.column}", "to": f"{self.ref_table}.{self.ref_column}", "coverage": cov}


def type_class(declared: str) -> str:
    """SQLite's type affinity of a declared type, with numbers merged: number | text | blob | other."""
    t = declared.upper()
    if "INT" in t:
        return "number"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in t:
        return "blob"
    if not t:
        return "other"  # no declared type: anything
    if any(k in t for k in ("REAL", "FLOA", "DOUB", "NUM", "DEC", "BOOL", "BIT")):
        return "number"
    if any(k in t for k in ("DATE", "TIME", "YEAR")):
        return "other"
    return "other"


def _compatible(a: str, b: str) -> bool:
    return a == b or "other" in (a, b)


_SPLIT = re.compile(r"[^a-z0-9]+|(?<=[a-z])(?=[0-9])")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name)
    return [w for w in _SPLIT.split(spaced.lower()) if w]


def _forms(word: str) -> set[str]:
    """The word and what it may be the plural of (``campuses`` -> campus, ``courses`` -> course)."""
    out = {word}
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        out.add(word[:-1])
        if word.endswith("es"):
            out.add(word[:-2])
        if word.endswith("ies"):
            out.add(word[:-3] + "y")
    return out


def _same(xs: list[str], ys: list[str]) -> bool:
    """Word lists equal up to plurals."""
    return len(xs) == len(ys) and all(_forms(x) & _forms(y) for x, y in zip(xs, ys))


def _squashed(words: list[str]) -> set[str]:
    """The words run together, with the last one in each of its forms."""
    if not words:
        return {""}
    return {"".join(words[:-1]) + f for f in _forms(words[-1])}


_ID_WORDS = frozenset({"id", "code", "key", "no", "num", "number"})


def name_score(column: str, ref_table: str, ref_column: str, *, ref_is_key: bool = True) -> float:
    """How much the names say ``column`` refers to ``ref_table.ref_column`` (0: nothing).

    ``ref_is_key``: the target is its table's declared one-column primary key, so
    naming the table is enough (``physician`` -> ``physician.EmployeeID``)."""
    a, b, table = _words(column), _words(ref_column), _words(ref_table)
    if not a or not b or not table:
        return 0.0
    bare_id = len(b) == 1 and b[0] in _ID_WORDS
    n = len(table)
    if (_same(a, b) or "".join(a) == "".join(b)) and not bare_id:
        return 3.0  # Singer_ID -> singer.Singer_ID, stuid -> Student.StuID (a bare "id" names nothing)
    if (_same(a[:n], table) and _same(a[n:], b)) or \
            _squashed(a) & {t + "".join(b) for t in _squashed(table)}:
        return 3.0  # singer_id -> singer.id ; student_name -> students.name ; makeid -> make.id
    if ref_is_key and _same(a, table):
        return 2.5  # physician -> physician.EmployeeID ; campus -> campuses.id
    if (len(b) > 1 or not bare_id) and len(a) > len(b) and _same(a[-len(b):], b):
        return 2.0  # manager_employee_id -> employee.employee_id ; dst_apid -> airports.apid
    named = all(any(_forms(w) & _forms(x) for x in a) for w in table)
    if named and (set(a) & _ID_WORDS or (ref_is_key and _same(a[-n:], table))):
        return 2.0  # home_team_id -> team.id ; host_city -> city.City_ID (not product_quantity -> product.id)
    if ref_is_key and bare_id and n > 1 and _same(a[: len(a) - (a[-1] in _ID_WORDS)], table[-1:]):
        return 2.0  # channel -> tv_channel.id ; maker -> car_makers.id
    if a[-1] == b[-1] and a[-1] in _ID_WORDS and len(b) > 1 and set(a[:-1]) & set(b[:-1]):
        return 1.0  # partly shared words of an id
    return 0.0


def _distinct(conn: Connection, table_sql: str, column: str, limit: int) -> tuple[set[str], bool]:
    """Up to ``limit`` distinct non-null values (as canonical text) and whether that is all of them."""
    col = quote_identifier(column)
    q = f"SELECT DISTINCT {col} FROM {table_sql} WHERE {col} IS NOT NULL LIMIT {limit + 1}"
    try:
        rows = conn.execute(q).fetchall()
    except Exception:  # noqa: BLE001 - an unreadable column is just not a candidate
        return set(), False
    values = {_canonical(r[0]) for r in rows[:limit]}
    return values, len(rows) <= limit


def _canonical(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bytes):
        return value.hex()
    return str(value).strip() if isinstance(value, str) else str(value)


def _row_count(conn: Connection, table: Table, table_sql: str) -> int:
    if table.row_count is not None:
        return table.row_count
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table_sql}").fetchone()[0])
    except Exception:  # noqa: BLE001
        return 0


def _single_pk(table: Table) -> Column | None:
    keys = [c for c in table.columns if c.is_primary_key]
    return keys[0] if len(keys) == 1 else None


class _Discovery:
    """One database's candidate keys, sampled values and proposals (see :func:`discover_joins`)."""

    def __init__(self, conn: Connection, schema: DatabaseSchema, max_values: int, min_coverage: float) -> None:
        self.conn = conn
        self.schema = schema
        self.max_values = max_values
        self.min_coverage = min_coverage
        self.table_sql = engine_named(schema.dialect).quote_table  # a PostgreSQL schema.table is two names
        self.rows = {t.name: _row_count(conn, t, self.table_sql(t.name)) for t in schema.tables}
        self.keys = {t.name: _single_pk(t) for t in schema.tables}  # each table's one-column primary key
        self._values: dict[tuple[str, str, int], tuple[set[str], bool]] = {}

    def values(self, t: Table, c: Column, deep: bool = False) -> tuple[set[str], bool]:
        """Distinct values of ``t.c`` (sources sampled; ``deep`` targets read much further)."""
        limit = self.max_values * TARGET_FACTOR if deep else self.max_values
        key = (t.name, c.name, limit)
        if key not in self._values:
            self._values[key] = (_distinct(self.conn, self.table_sql(t.name), c.name, limit) if self.rows[t.name]
                                 else (set(), True))
        return self._values[key]

    def coverage(self, t: Table, c: Column, rt: Table, rc: Column) -> float | None:
        mine, _ = self.values(t, c)
        if not mine:
            return None
        theirs, _ = self.values(rt, rc, deep=True)
        return len(mine & theirs) / len(mine)

    def targets(self) -> list[tuple[Table, Column, bool]]:
        """Unique columns: (table, column, is the table's declared one-column key)."""
        out = []
        for t in self.schema.tables:
            pk = self.keys[t.name]
            for c in t.columns:
                if c.is_spatial or type_class(c.type) == "blob":
                    continue
                if c is pk:
                    out.append((t, c, True))
                elif self.rows[t.name] >= 2 and not c.is_primary_key:
                    got, complete = self.values(t, c, deep=True)
                    if complete and len(got) == self.rows[t.name] and _not_null(self.conn, self.table_sql(t.name), c):
                        out.append((t, c, False))
        return out

    def judge(self, t: Table, c: Column, rt: Table, rc: Column, declared: bool) -> DiscoveredJoin | None:
        """``t.c -> rt.rc`` if names and values agree enough (module doc)."""
        score = name_score(c.name, rt.name, rc.name, ref_is_key=declared)
        if rt is t and score < 3.0:
            return None  # a self-reference needs the key's own name (parent_id -> id does not qualify)
        if c is self.keys[t.name] and (score < 2.5 or not declared):
            return None  # a table's own key refers only to another table's key (1:1), named so
        if not declared and 0 < score < 3.0:
            return None  # a column that merely happens to be unique: only its exact name refers to it
        if score == 0 and not _compatible(type_class(c.type), type_class(rc.type)):
            return None  # values alone, across types, say little
        if not self.rows[t.name] or not self.rows[rt.name]:  # nothing to compare: names alone
            return DiscoveredJoin(t.name, c.name, rt.name, rc.name, None, score, declared) \
                if score >= 2.5 and declared else None
        cov = self.coverage(t, c, rt, rc)
        if cov is None or cov < self.min_coverage:
            return None
        if score > 0 or (cov == 1.0 and len(self.values(t, c)[0]) >= UNNAMED_MIN_VALUES
                         and any(w in _ID_WORDS for w in _words(c.name))):
            return DiscoveredJoin(t.name, c.name, rt.name, rc.name, cov, score, declared)
        return None

    def composite(self, known: set[tuple[str, str]]) -> list[DiscoveredJoin]:
        """Multi-column keys referenced column by column under the same names, tuples contained."""
        out = []
        for rt in self.schema.tables:
            key = [c for c in rt.columns if c.is_primary_key]
            if not 2 <= len(key) <= 4:
                continue
            for t in self.schema.tables:
                if t is rt:
                    continue
                mine = {"".join(_words(c.name)): c for c in t.columns}
                cols = [mine.get("".join(_words(k.name))) for k in key]
                if any(c is None for c in cols) or len([c for c in t.columns if c.is_primary_key]) == len(key) \
                        or (len(key) < 3 and not all(c.is_primary_key for c in cols if c)):
                    continue  # a two-column key only within a key that extends it (a 1:1 table: never)
                if any((t.name.lower(), c.name.lower()) in known for c in cols if c):
                    continue
                cov = self._tuple_coverage(t, cols, rt, key)  # type: ignore[arg-type]
                if cov is None and (self.rows[t.name] and self.rows[rt.name]):
                    continue
                if cov is not None and cov < self.min_coverage:
                    continue
                out += [DiscoveredJoin(t.name, c.name, rt.name, k.name, cov, 3.0, True)
                        for c, k in zip(cols, key) if c is not None]
        return out

    def _tuple_coverage(self, t: Table, cols: list[Column], rt: Table, key: list[Column]) -> float | None:
        if not self.rows[t.name] or not self.rows[rt.name]:
            return None

        def tuples(table: Table, columns: list[Column], limit: int) -> set[tuple[str, ...]]:
            names = ", ".join(quote_identifier(c.name) for c in columns)
            q = f"SELECT DISTINCT {names} FROM {self.table_sql(table.name)} LIMIT {limit}"
            try:
                return {tuple(_canonical(v) for v in r) for r in self.conn.execute(q).fetchall()}
            except Exception:  # noqa: BLE001
                return set()

        mine = tuples(t, cols, self.max_values)
        if not mine:
            return None
        return len(mine & tuples(rt, key, self.max_values * TARGET_FACTOR)) / len(mine)


def discover_joins(conn: Connection, schema: DatabaseSchema, *, max_values: int = DEFAULT_MAX_VALUES,
                   min_coverage: float = DEFAULT_MIN_COVERAGE,
                   skip: Iterable[ForeignKey] = ()) -> list[DiscoveredJoin]:
    """Inclusion dependencies of ``schema``'s tables read through ``conn`` (see module doc).

    ``skip``: joins already known (declared foreign keys); their columns are not proposed again."""
    d = _Discovery(conn, schema, max_values, min_coverage)
    known = {(f.table.lower(), f.column.lower()) for f in skip}
    found = d.composite(known)
    known |= {(j.table.lower(), j.column.lower()) for j in found}
    targets = d.targets()
    for t in schema.tables:
        for c in t.columns:
            if c.is_spatial or (t.name.lower(), c.name.lower()) in known or type_class(c.type) == "blob":
                continue
            best: tuple[tuple[int, float, float], DiscoveredJoin] | None = None
            for rt, rc, declared in targets:
                if rt is t and rc is c:
                    continue
                join = d.judge(t, c, rt, rc, declared)
                if join is None:
                    continue
                rank = (int(declared and join.name_score >= 2.0), join.name_score, join.coverage or 0.0)
                if best is None or rank > best[0]:
                    best = (rank, join)
            if best is not None:
                found.append(best[1])
    return _to_roots(d, _drop_reverse_duplicates(found))


def _to_roots(d: _Discovery, joins: list[DiscoveredJoin]) -> list[DiscoveredJoin]:
    """``A -> B`` where ``B`` is a 1:1 extension's key that itself refers to ``C``: point ``A`` at ``C``
    (``degrees.campus -> csu_fees.campus -> campuses.id`` becomes ``degrees.campus -> campuses.id``)."""
    onward = {(j.table, j.column): j for j in joins if j.ref_is_key}
    tables = {t.name: t for t in d.schema.tables}
    out = []
    for j in joins:
        nxt = onward.get((j.ref_table, j.ref_column))
        if nxt is not None and (nxt.ref_table, nxt.ref_column) != (j.table, j.column) and \
                j.ref_column == getattr(d.keys[j.ref_table], "name", None):
            t, rt = tables[j.table], tables[nxt.ref_table]
            c, rc = t.column(j.column), rt.column(nxt.ref_column)
            cov = d.coverage(t, c, rt, rc)
            if cov is None or cov >= d.min_coverage:
                j = DiscoveredJoin(j.table, j.column, rt.name, rc.name, cov,
                                   name_score(c.name, rt.name, rc.name), True)
        out.append(j)
    return out


def _not_null(conn: Connection, table_sql: str, c: Column) -> bool:
    q = f"SELECT 1 FROM {table_sql} WHERE {quote_identifier(c.name)} IS NULL LIMIT 1"
    try:
        return conn.execute(q).fetchone() is None
    except Exception:  # noqa: BLE001
        return False


def _drop_reverse_duplicates(joins: list[DiscoveredJoin]) -> list[DiscoveredJoin]:
    """Of ``A -> B`` and ``B -> A`` (two unique columns with the same values) keep the one that
    points at a declared primary key, else the better-named, else the first found."""
    def rank(j: DiscoveredJoin) -> tuple[int, float, float, int]:
        # school_details.school_id -> school.school_id: the longer table name extends the other
        extends = set(_words(j.ref_table)) < set(_words(j.table))
        return (int(j.ref_is_key), j.name_score, j.coverage or 0.0, int(extends))

    by_pair = {(j.table, j.column, j.ref_table, j.ref_column): j for j in joins}
    out = []
    for i, j in enumerate(joins):
        rev = by_pair.get((j.ref_table, j.ref_column, j.table, j.column))
        if rev is not None and (rank(rev) > rank(j) or (rank(rev) == rank(j) and joins.index(rev) < i)):
            continue
        out.append(j)
    return out


def discover_in_file(path: str | Path, schema: DatabaseSchema, **options: Any) -> list[DiscoveredJoin]:
    """:func:`discover_joins` over the database at ``path`` (a SQLite file opened read-only, or a URL)."""
    from kgsql.db.connect import open_database
    from kgsql.db.engines import catalog_connection
    from kgsql.db.target import engine_class

    if not engine_class(path).in_process:
        return discover_joins(catalog_connection(path), schema, **options)

    conn = open_database(path)
    try:
        return discover_joins(conn, schema, **options)
    finally:
        conn.close()


#: ``--discover-joins`` values: always, never, or when the declared keys cannot connect the tables.
DISCOVER_MODES = ("auto", "on", "off")
#: ``auto`` leaves databases wider than this alone (every column is a candidate source).
AUTO_MAX_COLUMNS = 2000


def few_declared(schema: DatabaseSchema) -> bool:
    """Fewer declared foreign keys than it takes to connect the tables (n tables need n - 1)."""
    declared = [f for f in schema.foreign_keys if f.origin == "declared"]
    return len(declared) < len(schema.tables) - 1


def add_discovered_joins(schema: DatabaseSchema, path: str | Path, mode: str = "auto") -> list[DiscoveredJoin]:
    """Discover joins in the file at ``path`` and append them to ``schema.foreign_keys``
    (``origin="discovered"``); ``mode`` is one of :data:`DISCOVER_MODES`."""
    if mode not in DISCOVER_MODES:
        from kgsql.errors import InputError

        raise InputError(f"discover-joins '{mode}': expected one of {', '.join(DISCOVER_MODES)}")
    if mode == "off" or (mode == "auto" and (not few_declared(schema)
                                             or sum(len(t.columns) for t in schema.tables) > AUTO_MAX_COLUMNS)):
        return []
    joins = discover_in_file(path, schema, skip=schema.foreign_keys)
    schema.foreign_keys.extend(j.as_foreign_key() for j in joins)
    return joins
