"""The plan of a copy: target names and types, converted values, and the keys the target can hold.

Why: SQLite accepts data its own declarations do not describe (duplicate
keys once types convert, foreign keys to missing rows or to non-key
columns, text joined to integers), while PostgreSQL and DuckDB refuse it.
The plan decides, before anything is written, what each target gets:

* names folded to lower case for PostgreSQL by default (as it folds unquoted
  names, so SQL written for SQLite finds them), with collisions and
  PostgreSQL's 63-byte limit refused up front;
* primary keys and UNIQUE constraints declared when the converted data
  satisfies them;
* a foreign key is skipped when its target is not a primary key or unique
  column set, its column types differ, or it references a missing table.
  PostgreSQL gets a foreign key the rows violate as ``NOT VALID`` (declared,
  not checked); DuckDB checks every row and cannot defer, so it skips it,
  and a table is created after the tables it references there (rows of a
  self-referencing table go in waves, parents first).

Everything skipped is added to the :class:`~kgsql.ingest.copy.report.LoadReport` with its reason.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kgsql.ingest.copy.report import LoadReport
from kgsql.ingest.copy.source import LoadError, SourceTable
from kgsql.ingest.copy.types import Logical, geometry_logical, plan_type
from kgsql.ingest.copy.values import convert

__all__ = ["PG_MAX_IDENTIFIER", "ColumnPlan", "ForeignKeyPlan", "TablePlan", "combined_waves", "plan_foreign_keys",
           "plan_tables"]

#: PostgreSQL truncates longer identifiers (in bytes).
PG_MAX_IDENTIFIER: Final = 63


@dataclass
class ColumnPlan:
    source: str
    name: str
    declared: str
    logical: Logical
    not_null: bool
    reason: str = ""


@dataclass
class TablePlan:
    source: SourceTable
    name: str
    columns: list[ColumnPlan]
    values: list[list[Any]]  # converted, column by column
    primary_key: list[str] = field(default_factory=list)  # source names
    unique: list[list[str]] = field(default_factory=list)
    foreign_keys: list[ForeignKeyPlan] = field(default_factory=list)

    def target_names(self, source_names: Iterable[str]) -> list[str]:
        by = {c.source.lower(): c.name for c in self.columns}
        return [by[s.lower()] for s in source_names]

    def logical(self, source_name: str) -> Logical:
        return next(c.logical for c in self.columns if c.source.lower() == source_name.lower())

    def keys(self, source_names: Sequence[str]) -> list[tuple[Any, ...]]:
        idx = [next(i for i, c in enumerate(self.columns) if c.source.lower() == s.lower()) for s in source_names]
        return list(zip(*(self.values[i] for i in idx))) if self.values and self.values[0] else []


@dataclass
class ForeignKeyPlan:
    table: str
    columns: list[str]
    ref_table: str
    ref_columns: list[str]
    not_valid: bool = False

    def __str__(self) -> str:
        return f"{self.table}({', '.join(self.columns)}) -> {self.ref_table}({', '.join(self.ref_columns)})"


def plan_tables(tables: list[SourceTable], engine: str, *, fold: bool, text_dates: bool,
                report: LoadReport) -> list[TablePlan]:
    """Target names and types, converted values, and the keys the data satisfies."""
    plans: list[TablePlan] = []
    seen_tables: dict[str, str] = {}
    for st in tables:
        tname = st.name.lower() if fold else st.name
        _check_name(tname, engine, seen_tables, f"table {st.name!r}")
        columns: list[ColumnPlan] = []
        values: list[list[Any]] = []
        seen_cols: dict[str, str] = {}
        nuls = [0]
        for k, sc in enumerate(st.columns):
            cname = sc.name.lower() if fold else sc.name
            _check_name(cname, engine, seen_cols, f"column {st.name}.{sc.name!r}")
            raw = [row[k] for row in st.rows]
            if sc.geometry is not None:
                logical, reason = geometry_logical(sc.geometry, st.geometry_rows.get(k, []))
                converted = [None if wkb is None else (bytes(wkb), srid)
                             for wkb, srid, _t in st.geometry_rows.get(k, [])]
                if reason:
                    report.notes.append(f"{st.name}.{sc.name}: {reason}")
            else:
                logical, reason = plan_type(sc.declared, raw, text_dates=text_dates)
                converted = [convert(v, logical, nuls) for v in raw]
            columns.append(ColumnPlan(sc.name, cname, sc.declared, logical, sc.not_null, reason))
            values.append(converted)
            if reason and sc.geometry is None:
                report.fallbacks.append({"table": st.name, "column": sc.name, "declared": sc.declared,
                                         "type": logical.pg() if engine == "postgres" else logical.duckdb(),
                                         "reason": reason})
        for cname, n in st.unreadable.items():
            report.notes.append(f"{st.name}.{cname}: {n} values are no geometry SpatiaLite reads; loaded as NULL")
        if nuls[0]:
            report.notes.append(f"{st.name}: removed NUL characters from {nuls[0]} text values")
        plan = TablePlan(st, tname, columns, values)
        for cols, what in [(st.primary_key, "primary key")] + [(u, "unique") for u in st.unique]:
            if not cols:
                continue
            problem = _key_problem(plan, cols, primary=what == "primary key")
            if problem:
                report.skipped_keys.append({"table": st.name, "columns": ", ".join(cols), "kind": what,
                                            "reason": problem})
            elif what == "primary key":
                plan.primary_key = cols
            else:
                plan.unique.append(cols)
        plans.append(plan)
    return plans


def _check_name(name: str, engine: str, seen: dict[str, str], what: str) -> None:
    key = name.lower() if engine == "duckdb" else name
    if key in seen:
        raise LoadError(f"{what} collides with {seen[key]!r} in the target"
                        + ("" if engine == "duckdb" else "; --keep-case keeps SQLite's spelling"))
    seen[key] = name
    if engine == "postgres" and len(name.encode("utf-8")) > PG_MAX_IDENTIFIER:
        raise LoadError(f"{what} is longer than PostgreSQL's {PG_MAX_IDENTIFIER}-byte identifiers")


def _key_problem(plan: TablePlan, cols: list[str], *, primary: bool) -> str:
    keys = plan.keys(cols)
    if primary and any(v is None for key in keys for v in key):
        return "has NULL values"
    keys = [k for k in keys if None not in k]  # UNIQUE lets NULLs repeat
    if len(set(keys)) != len(keys):
        return "has duplicate values after the type conversion"
    if any(plan.logical(c).kind == "geometry" for c in cols):
        return "is a geometry column"
    return ""


def plan_foreign_keys(plans: list[TablePlan], engine: str, report: LoadReport) -> list[TablePlan]:
    """Each table's foreign keys that the target can hold; the tables in creation order (DuckDB: parents first)."""
    by_name = {p.source.name.lower(): p for p in plans}
    edges: dict[str, set[str]] = {p.source.name.lower(): set() for p in plans}
    for plan in plans:
        for ref_table, pairs in plan.source.foreign_keys:
            label = (f"{plan.source.name}({', '.join(a for a, _ in pairs)}) -> "
                     f"{ref_table}({', '.join(str(b) for _, b in pairs)})")
            fk, reason = _resolve_fk(plan, by_name.get(ref_table.lower()), pairs, engine)
            if fk is None:
                report.skipped_foreign_keys.append({"fk": label, "reason": reason})
                continue
            parent = by_name[fk.ref_table.lower()]
            label = str(fk)
            missing = _violations(plan, fk.columns, parent, fk.ref_columns)
            if missing and engine == "duckdb":
                report.skipped_foreign_keys.append(
                    {"fk": label, "reason": f"{missing} rows reference no row of {fk.ref_table} "
                                            f"(DuckDB checks every row)"})
                continue
            if engine == "duckdb":
                child, ref = plan.source.name.lower(), parent.source.name.lower()
                if child != ref and _reaches(edges, ref, child):
                    report.skipped_foreign_keys.append(
                        {"fk": label, "reason": "closes a cycle of foreign keys (DuckDB creates parents first)"})
                    continue
                if child == ref and combined_waves(
                        plan, [f for f in plan.foreign_keys if f.ref_table == f.table] + [fk]) is None:
                    report.skipped_foreign_keys.append(
                        {"fk": label, "reason": "rows reference each other in a cycle (DuckDB inserts parents first)"})
                    continue
                if child != ref:
                    edges[child].add(ref)
            fk.not_valid = bool(missing)
            plan.foreign_keys.append(fk)
            (report.foreign_keys_not_valid if missing else report.foreign_keys).append(
                label + (f" [NOT VALID: {missing} rows without a match]" if missing else ""))
    if engine != "duckdb":
        return plans
    ordered: list[TablePlan] = []
    done: set[str] = set()
    while len(ordered) < len(plans):
        for plan in plans:
            name = plan.source.name.lower()
            if name not in done and edges[name] <= done:
                ordered.append(plan)
                done.add(name)
                break
    moved = [p.source.name for p, q in zip(ordered, plans) if p is not q]
    if moved:
        report.notes.append("DuckDB creation order puts referenced tables first: "
                            + ", ".join(p.source.name for p in ordered))
    return ordered


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def _resolve_fk(plan: TablePlan, parent: TablePlan | None, pairs: list[tuple[str, str | None]],
                engine: str) -> tuple[ForeignKeyPlan | None, str]:
    if parent is None:
        return None, "references a table that does not exist"
    ref_cols: list[str | None] = [b for _, b in pairs]
    if all(b is None for b in ref_cols):
        pk = parent.source.primary_key
        if len(pk) != len(pairs):
            return None, f"references {parent.source.name}'s primary key, which has {len(pk)} columns"
        ref_cols = list(pk)
    cols: list[str] = []
    refs: list[str] = []
    for (a, _), b in zip(pairs, ref_cols):
        child_col, parent_col = plan.source.column(a), parent.source.column(b)
        if child_col is None or parent_col is None:
            return None, f"column {a if child_col is None else b!r} does not exist"
        cols.append(child_col.name)
        refs.append(parent_col.name)
    keys = [parent.primary_key] + parent.unique
    match = next((k for k in keys if k and {c.lower() for c in k} == {r.lower() for r in refs}), None)
    if match is None:
        why = "is not a primary key or unique column set"
        if any({c.lower() for c in k} == {r.lower() for r in refs} for k in
               [parent.source.primary_key] + parent.source.unique):
            why = "is a key whose data the target cannot hold as one (see skipped keys)"
        return None, f"{parent.source.name}({', '.join(refs)}) {why}"
    for c, r in zip(cols, refs):
        if plan.logical(c).family(engine) != parent.logical(r).family(engine):
            a, b = plan.logical(c), parent.logical(r)
            shown = (a.pg(), b.pg()) if engine == "postgres" else (a.duckdb(), b.duckdb())
            return None, f"types differ: {plan.source.name}.{c} {shown[0]} vs {parent.source.name}.{r} {shown[1]}"
    # the referenced key's own column order (DuckDB requires it)
    order = {r.lower(): i for i, r in enumerate(match)}
    pairs_sorted = sorted(zip(cols, refs), key=lambda cr: order[cr[1].lower()])
    return ForeignKeyPlan(plan.source.name, [c for c, _ in pairs_sorted], parent.source.name,
                          [r for _, r in pairs_sorted]), ""


def _violations(child: TablePlan, cols: list[str], parent: TablePlan, refs: list[str]) -> int:
    targets = set(parent.keys(refs))
    return sum(1 for key in child.keys(cols) if None not in key and key not in targets)


def combined_waves(plan: TablePlan, fks: list[ForeignKeyPlan]) -> list[list[int]] | None:
    """Row indexes in batches where every self-reference of a row points into earlier batches; None on a cycle."""
    refs = [plan.keys(fk.columns) for fk in fks]
    keys = [plan.keys(fk.ref_columns) for fk in fks]
    pending = list(range(len(keys[0])))
    inserted: list[set[tuple[Any, ...]]] = [set() for _ in fks]
    waves: list[list[int]] = []
    while pending:
        wave = [i for i in pending if all(None in r[i] or r[i] in s for r, s in zip(refs, inserted))]
        if not wave:
            return None
        waves.append(wave)
        for k, s in zip(keys, inserted):
            s.update(k[i] for i in wave)
        chosen = set(wave)
        pending = [i for i in pending if i not in chosen]
    return waves
