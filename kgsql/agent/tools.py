"""The graph's tools for an LLM agent (Interactive-T2S), one registry for every transport.

    tools = DatabaseTools(graph, "concert_singer")
    tools.call("SearchColumn", {"semantic": "age of a singer"}).text
    TOOL_SPECS["FindShortestPath"].signature        # 'FindShortestPath(start, end)'

Every tool answers with a short text observation, bounded in rows and
characters, so an agent's prompt grows by a fixed amount per round however
wide the database is. The text ReAct loop, OpenAI function calling and the
MCP server all call tools through :meth:`DatabaseTools.call` with the
arguments bound by :meth:`ToolSpec.bind`, so they cannot drift apart.
What backs each tool: the late-interaction retriever (SearchColumn), the
value index (SearchValue), the foreign-key and mined/discovered join edges of
the graph (FindShortestPath), the read-only guard in a killable worker process
(ExecuteSQL, :func:`kgsql.db.isolate.execute_isolated`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kgsql.db.cells import shown
from kgsql.db.guard import QueryResult
from kgsql.db.isolate import execute_isolated
from kgsql.db.target import available
from kgsql.errors import InputError, KgsqlError, UnknownNameError
from kgsql.schema.joins import join_path
from kgsql.retrieve.lazy import lazy_retriever
from kgsql.schema.model import Column, DatabaseSchema, Table

MAX_OBSERVATION_CHARS = 1500
MAX_CELL_CHARS = 60


class ToolArgumentError(InputError):
    """A tool was called with arguments its signature does not take; the message says how to call it."""


@dataclass(frozen=True)
class Param:
    """One argument of a tool."""

    name: str
    description: str
    required: bool = True
    type: str = "string"  # JSON-schema type


@dataclass(frozen=True)
class ToolSpec:
    """A tool's name, arguments and what it is for: the single source of every transport's description."""

    name: str
    params: tuple[Param, ...]
    description: str

    @property
    def signature(self) -> str:
        """``SearchValue(value, table=None, column=None)``."""
        return f"{self.name}(" + ", ".join(p.name if p.required else f"{p.name}=None" for p in self.params) + ")"

    def json_schema(self) -> dict[str, Any]:
        """The arguments as a JSON schema (OpenAI ``tools`` and MCP ``inputSchema``)."""
        return {"type": "object",
                "properties": {p.name: {"type": p.type, "description": p.description} for p in self.params},
                "required": [p.name for p in self.params if p.required],
                "additionalProperties": False}

    def function(self) -> dict[str, Any]:
        """The tool as an OpenAI ``tools`` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.json_schema()}}

    def bind(self, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
        """Positional and keyword arguments as ``{param: value}``; wrong calls raise ToolArgumentError."""
        kwargs = dict(kwargs or {})
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise ToolArgumentError(f"{self.name} takes at most {len(names)} argument(s): {self.signature}")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise ToolArgumentError(f"{self.name} has no argument '{key}': {self.signature}")
            if key in bound:
                raise ToolArgumentError(f"{self.name} got '{key}' twice: {self.signature}")
            bound[key] = value
        for p in self.params:
            value = bound.get(p.name)
            if value is None:
                if p.required:
                    raise ToolArgumentError(f"{self.name} needs '{p.name}': {self.signature}")
                bound.pop(p.name, None)
                continue
            if p.type == "string" and not isinstance(value, str):
                value = str(value)
            if p.type == "string" and not value.strip():
                raise ToolArgumentError(f"{self.name}: '{p.name}' is empty: {self.signature}")
            bound[p.name] = value
        return bound


TOOL_SPECS: dict[str, ToolSpec] = {s.name: s for s in (
    ToolSpec("SearchColumn", (Param("semantic", "what the column holds, in words, e.g. 'age of a singer'"),),
             "Rank the database's columns by relevance to a description; each with its table, type, "
             "description and statistics (a few sample values, or min/max for numbers and dates)."),
    ToolSpec("SearchValue", (Param("value", "the cell value to look for, e.g. 'France'"),
                             Param("table", "only this table", required=False),
                             Param("column", "only this column (with table)", required=False)),
             "Find the cell values like a given value (exact or fuzzy), with the columns that hold them."),
    ToolSpec("FindShortestPath", (Param("start", "a column as table.column (or a table)"),
                                  Param("end", "a column as table.column (or a table)")),
             "The shortest join path between two columns over the foreign keys and other join edges, "
             "as join conditions."),
    ToolSpec("ExecuteSQL", (Param("sql", "one read-only SELECT statement"),),
             "Run a read-only SQL query; returns the first rows."),
    ToolSpec("Done", (Param("sql", "the final SQL query that answers the question"),),
             "Finish with the SQL query that answers the question."),
    ToolSpec("ListDatabases", (), "The databases in the schema graph, with their table counts."),
    ToolSpec("DescribeTable", (Param("table", "a table name"),),
             "A table's columns with types, keys, descriptions and sample values, and its foreign keys."),
)}

#: The tools of the agent loop (Interactive-T2S's four plus Done); MCP serves all of TOOL_SPECS.
AGENT_TOOLS = ("SearchColumn", "SearchValue", "FindShortestPath", "ExecuteSQL", "Done")


@dataclass
class Observation:
    """What a tool answered: the text the model reads, and the rows when it ran SQL."""

    text: str
    sql: str = ""
    result: QueryResult | None = None
    error: str | None = None


def bounded(text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[: limit - 20].rstrip() + "\n... (cut)"


def _cell(value: Any) -> str:
    text = shown(value)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 3] + "..."


def rows_text(result: QueryResult, shown: int) -> str:
    """A small pipe table of the first ``shown`` rows and how many there were."""
    lines = [" | ".join(result.columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in result.rows[:shown]]
    n = result.row_count
    more = result.truncated or n > shown
    count = f"more than {n}" if result.truncated else str(n)
    lines.append(f"({count} row{'s' if n != 1 else ''}{f', first {min(n, shown)} shown' if more else ''})")
    return "\n".join(lines)


def list_databases(graph: Any) -> str:
    """ListDatabases(): every database of the graph with its table count."""
    names = graph.databases()
    if not names:
        return "The schema graph holds no databases yet (python -m kgsql.ingest FILE)."
    lines = []
    for name in names:
        try:
            lines.append(f"{name} ({len(graph.tables(name))} tables)")
        except KgsqlError:
            lines.append(name)
    return bounded("\n".join(lines))


class DatabaseTools:
    """The tools over one database of the graph; every answer is a bounded :class:`Observation`.

    ``retriever``: a ``SchemaRetriever``, or a function returning one (``retrieve.lazy_retriever``:
    built on the first SearchColumn/SearchValue, so agents that never search load no encoder)."""

    def __init__(self, graph: Any, database: str, *, retriever: Any = None, schema: DatabaseSchema | None = None,
                 top_k: int = 5, max_rows: int = 10, timeout_s: float = 10.0,
                 max_chars: int = MAX_OBSERVATION_CHARS) -> None:
        self.graph = graph
        self.database = database
        self._schema = schema
        if retriever is None or hasattr(retriever, "prepare"):
            retriever = lazy_retriever(retriever)
        self.retriever: Callable[[], Any] = retriever
        self.top_k = top_k
        self.max_rows = max_rows
        self.timeout_s = timeout_s
        self.max_chars = max_chars

    # ------------------------------------------------------------------ plumbing

    @property
    def schema(self) -> DatabaseSchema:
        if self._schema is None:
            self._schema = self.graph.schema(self.database)
        return self._schema

    @property
    def db_path(self) -> str | None:
        return available(self.schema.path)

    def call(self, name: str, arguments: dict[str, Any]) -> Observation:
        """Run tool ``name`` with bound ``arguments``; tool trouble becomes an observation, not an exception."""
        handlers: dict[str, Callable[..., Observation]] = {
            "SearchColumn": self.search_column, "SearchValue": self.search_value,
            "FindShortestPath": self.find_shortest_path, "ExecuteSQL": self.execute_sql,
            "DescribeTable": self.describe_table,
            "ListDatabases": lambda: Observation(list_databases(self.graph)),
        }
        if name not in handlers:
            known = ", ".join(TOOL_SPECS[n].signature for n in AGENT_TOOLS)
            return Observation(f"Error: there is no tool '{name}'. The tools are: {known}", error="unknown tool")
        try:
            observation = handlers[name](**arguments)
        except KgsqlError as exc:
            observation = Observation(f"Error: {exc}", error=str(exc))
        observation.text = bounded(observation.text, self.max_chars)
        return observation

    # ------------------------------------------------------------------ tools

    def search_column(self, semantic: str) -> Observation:
        """SearchColumn(semantic): the top columns by the retriever's column probability."""
        schema = self.schema
        retriever = self.retriever()
        prepared = retriever.prepare(schema, db_path=self.db_path)
        if prepared.n_columns == 0:
            return Observation("The database has no columns.")
        scores = retriever.scores(schema, semantic, prepared=prepared)
        keys = prepared.facts.column_keys
        ranked = sorted(range(len(keys)), key=lambda i: -float(scores.p_column[i]))[: self.top_k]
        lines = []
        for rank, i in enumerate(ranked, 1):
            table_name, column_name = keys[i]
            table = schema.table(table_name)
            lines.append(f"{rank}. {column_line(table, table.column(column_name))}")
        return Observation("\n".join(lines))

    def search_value(self, value: str, table: str | None = None, column: str | None = None) -> Observation:
        """SearchValue(value, table=None, column=None): value-index hits, then a LIKE scan of a named column."""
        if column is not None and table is None:
            owners = [t for t in self.schema.tables if any(c.name.lower() == column.lower() for c in t.columns)]
            if len(owners) != 1:
                raise ToolArgumentError(f"SearchValue: give the table of column '{column}' "
                                        f"({', '.join(t.name for t in owners) or 'no table has it'})")
            table = owners[0].name
        target_table = self.schema.table(table) if table is not None else None
        target_column = target_table.column(column) if (target_table is not None and column is not None) else None
        path = self.db_path
        if path is None:
            return self._no_file("search values")
        hits: list[tuple[str, str, str, str]] = []  # (table, column, value, kind)
        index = self.retriever().prepare(self.schema, db_path=path).values
        for m in index.search(value, top_k=50, min_score=0.6) if index is not None else []:
            if target_table is not None and m.table.lower() != target_table.name.lower():
                continue
            if target_column is not None and m.column.lower() != target_column.name.lower():
                continue
            hits.append((m.table, m.column, m.value, m.kind))
        if target_column is not None and len(hits) < self.top_k:
            hits += [h for h in self._like(target_table, target_column, value, path) if h not in hits]
        if not hits:
            where = f" in {target_table.name}{'.' + target_column.name if target_column else ''}" if target_table else ""
            return Observation(f"No value like '{value}' found{where}.")
        lines = [f"'{v}' in {t}.{c} ({kind})" for t, c, v, kind in hits[: self.top_k * 2]]
        return Observation("\n".join(lines))

    def _like(self, table: Table, column: Column, value: str, path: str) -> list[tuple[str, str, str, str]]:
        """Distinct values of one column containing ``value`` (case-insensitive), through the guard."""
        pattern = "%" + value.replace("'", "''") + "%"
        sql = (f'SELECT DISTINCT "{column.name}" FROM "{table.name}" '
               f"WHERE CAST(\"{column.name}\" AS TEXT) LIKE '{pattern}' LIMIT {self.top_k}")
        try:
            result = execute_isolated(path, sql, timeout_s=self.timeout_s, max_rows=self.top_k)
        except KgsqlError:
            return []
        return [(table.name, column.name, str(row[0]), "contains") for row in result.rows if row[0] is not None]

    def find_shortest_path(self, start: str, end: str) -> Observation:
        """FindShortestPath(start, end): the join path between the two columns' tables, as conditions."""
        a, b = self._table_of(start), self._table_of(end)
        if a.name == b.name:
            return Observation(f"{start} and {end} are both in table {a.name}: no join needed.")
        path = join_path(self.schema, a.name, b.name)
        if path is None:
            return Observation(f"No join path between {a.name} and {b.name} in the foreign keys or join edges.")
        conditions = [" AND ".join(hop) for hop in path.conditions]
        return Observation(f"Path: {' -> '.join(path.tables)}\nJoin on: " + " AND ".join(conditions))

    def _table_of(self, name: str) -> Table:
        """The table of ``table.column`` or ``table`` (unknown names raise with a suggestion)."""
        text = name.strip().strip("`\"'[]")
        table_name, _, column_name = text.partition(".")
        if not column_name:
            try:
                return self.schema.table(table_name)
            except UnknownNameError:
                owners = [t for t in self.schema.tables if any(c.name.lower() == text.lower() for c in t.columns)]
                if len(owners) == 1:
                    return owners[0]
                raise
        table = self.schema.table(table_name.strip("`\"'[]"))
        try:
            table.column(column_name.strip("`\"'[]"))  # must exist
        except UnknownNameError as exc:
            names = ", ".join(c.name for c in table.columns[:20])
            raise UnknownNameError(f"{exc} (its columns: {names})") from None
        return table

    def execute_sql(self, sql: str) -> Observation:
        """ExecuteSQL(sql): the guarded read-only run; the first rows as a small table, or the error."""
        path = self.db_path
        if path is None:
            return self._no_file("run SQL", sql)
        try:
            result = execute_isolated(path, sql, timeout_s=self.timeout_s, max_rows=1000)
        except KgsqlError as exc:
            return Observation("\n".join([f"Error: {exc}", *self._tips(exc, sql)]), sql=sql, error=str(exc))
        return Observation(rows_text(result, self.max_rows), sql=sql, result=result)

    def _no_file(self, what: str, sql: str = "") -> Observation:
        return Observation(f"Error: the file of database '{self.database}' is not available to {what}.", sql=sql,
                           error="no database file")

    def _tips(self, error: KgsqlError, sql: str) -> list[str]:
        """The correction rules' sentences for a failed query (which table holds a column, ...)."""
        from kgsql.correct import render_tips, tips_from_error

        try:
            text = render_tips(tips_from_error(error, sql, self.schema))
        except Exception:  # noqa: BLE001 - a tip is a bonus; the error itself is already said
            return []
        return [f"Tip: {line}" for line in text.splitlines()[:3] if line.strip()]

    def describe_table(self, table: str) -> Observation:
        """DescribeTable(table): columns with types, keys, descriptions, samples; foreign keys."""
        t = self.schema.table(table.strip().strip("`\"'[]"))
        lines = [f"Table {t.name}" + (f" ({t.row_count} rows)" if t.row_count is not None else "")
                 + (f": {t.description}" if t.description else "")]
        lines += ["- " + column_line(t, c, qualified=False) for c in t.columns]
        for fk in self.schema.foreign_keys:
            if t.name in (fk.table, fk.ref_table):
                lines.append(f"Join: {fk.table}.{fk.column} = {fk.ref_table}.{fk.ref_column}")
        return Observation("\n".join(lines))


def column_line(table: Table, column: Column, *, qualified: bool = True) -> str:
    """``singer.Age (INTEGER, primary key): description; min 25, max 52`` in one line."""
    name = f"{table.name}.{column.name}" if qualified else column.name
    kind = column.type or "ANY"
    if column.is_primary_key:
        kind += ", primary key"
    if column.spatial is not None:
        geometry = column.spatial.geometry_type
        kind += ("" if geometry.upper() == (column.type or "").upper() else f", {geometry}") + \
            f", SRID {column.spatial.srid}"
    parts = []
    if column.description:
        parts.append(column.description)
    stats = column.stats
    if stats.min is not None and stats.max is not None:
        parts.append(f"min {_cell(stats.min)}, max {_cell(stats.max)}")
    samples = column.value_examples or stats.sample
    if samples and column.spatial is None and not (stats.min is not None and stats.max is not None):
        parts.append("values " + ", ".join(repr(_cell(v)) for v in samples[:3]))
    return f"{name} ({kind})" + (": " + "; ".join(parts) if parts else "")
