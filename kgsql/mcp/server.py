"""The schema graph's tools over the Model Context Protocol, on the official ``mcp`` SDK.

    python -m kgsql.mcp                          # stdio: what desktop and IDE agents start
    python -m kgsql.mcp --http --port 8765       # streamable HTTP on 127.0.0.1:8765/mcp

The agent's lookup tools of :mod:`kgsql.agent.tools` (each with a ``db`` argument,
since one server serves every ingested database; ``Done`` stays the agent's),
``ListDatabases``, ``ListTables``, ``DescribeTable``, ``ExecuteSQL`` with a row
``limit`` and the rows as structured content, and ``ask(question, db,
conversation?, reset?)`` (the default method; calls with the same conversation
id over the same database are one conversation, the last 32 kept). Each
database's schema, as the default method writes it for the model, is the
resource ``kgsql://{db}/schema``; the prompt ``explore`` starts a
conversation about one database. Read-only by construction: SQL runs only
through the guard (one read-only statement, row cap, timeout), and no tool
writes to the graph. Tools that search or ask are served one at a
time (the encoder, the value indexes and the local model are shared); SQL
tools need only the schema and run in the killable SQL worker, so a slow
query holds one worker, not the server. A failed call comes back with
``isError`` set and an ``Error: ...`` text.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Annotated, Any, Callable

from pydantic import WithJsonSchema  # a dependency of openai's client, so always installed

from kgsql.agent.tools import TOOL_SPECS, DatabaseTools, list_databases, rows_text
from kgsql.conversation.store import ConversationStore
from kgsql.errors import InputError, KgsqlError
from kgsql.schema.sources import GraphSchemas
from kgsql.retrieve.lazy import lazy_retriever

MCP_TOOLS = ("ListDatabases", "ListTables", "DescribeTable", "SearchColumn", "SearchValue", "FindShortestPath",
             "ExecuteSQL", "ask")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Tools that only read the schema and run SQL in a worker process: served outside the model's lock.
SQL_TOOLS = frozenset({"ExecuteSQL"})
#: Conversations of ``ask`` kept at once (least recently used forgotten first).
MAX_CONVERSATIONS = 32
#: ExecuteSQL's rows: by default, and at most.
DEFAULT_LIMIT, MAX_LIMIT = 50, 1000
#: ExecuteSQL's ``limit``: the schema says integer, but any value reaches ``row_limit``, whose error is one
#: line (the SDK's own validation message is several).
LimitArgument = Annotated[Any, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT})]


def row_limit(value: Any) -> int:
    """ExecuteSQL's row limit: a whole number 1-MAX_LIMIT (a digit string too), DEFAULT_LIMIT when absent."""
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"limit must be a whole number 1-{MAX_LIMIT}, not {value!r}")
    if not 1 <= value <= MAX_LIMIT:
        raise InputError(f"limit must be 1-{MAX_LIMIT}, got {value}")
    return value

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolReply:
    """A tool's text for the client, and whether it reports a failure (MCP's ``isError``)."""

    text: str
    error: bool = False
    structured: dict[str, Any] | None = None  # MCP's structuredContent (ExecuteSQL's columns and rows)


class GraphTools:
    """What the server's tools call: one graph, one retriever, tools per database, the method for ``ask``."""

    def __init__(self, open_graph: Callable[[], Any], make_lm: Callable[[], Any] | None = None, *,
                 method: str = "kgsql", overrides: dict[str, Any] | None = None) -> None:
        self._open_graph = open_graph
        self._make_lm = make_lm
        self.method = method
        self.overrides = dict(overrides or {})  # the ask tool's method options (``kgsql mcp --set``)
        self._graph: Any = None
        # one for every database, built on the first search (with the graph's vector index where it has one)
        self.retriever = lazy_retriever(first_stage=lambda: getattr(self.graph, "vector_stage", None))
        self._schemas: GraphSchemas | None = None
        self._asker: Any = None
        self._router: Any = None  # kgsql.route.graph_router.GraphRouter, made on the first ask without a db
        self.conversations = ConversationStore(MAX_CONVERSATIONS)  # ask's conversations, by (db, id), LRU
        self._lock = threading.Lock()  # one search or ask at a time: shared encoder, indexes, model
        self._load = threading.Lock()  # opening the graph and the schema cache, once

    @property
    def graph(self) -> Any:
        with self._load:
            if self._graph is None:
                self._graph = self._open_graph()
            return self._graph

    def tools(self, db: str) -> DatabaseTools:
        """The tools of ``db`` over its schema as last ingested (unknown database: one clear error)."""
        graph = self.graph
        with self._load:
            if self._schemas is None:
                self._schemas = GraphSchemas(graph, follow_ingest=True)
        return DatabaseTools(graph, db, retriever=self.retriever, schema=self._schemas(db))

    def run(self, name: str, db: str | None = None, **arguments: Any) -> ToolReply:
        """Tool ``name``'s reply; every failure is an ``Error: ...`` reply for the client, never a crash."""
        try:
            if name in SQL_TOOLS:
                return self._sql(name, str(db), arguments)
            with self._lock:
                if name == "ListDatabases":
                    return ToolReply(list_databases(self.graph))
                if name == "ListTables":
                    return ToolReply(self._tables(str(db)))
                if name == "ask":
                    return self._ask(None if db is None else str(db), **arguments)
                observation = self.tools(str(db)).call(name, TOOL_SPECS[name].bind((), arguments))
                return ToolReply(observation.text, observation.error is not None)
        except KgsqlError as exc:
            return ToolReply(f"Error: {exc}", error=True)
        except Exception as exc:  # noqa: BLE001 - a bug must cost one call, not the connection
            log.warning("tool %s failed: %s: %s", name, type(exc).__name__, exc)
            return ToolReply(f"Error: the tool failed unexpectedly ({type(exc).__name__})", error=True)

    def _sql(self, name: str, db: str, arguments: dict[str, Any]) -> ToolReply:
        """ExecuteSQL outside the lock (the query runs in the killable SQL worker): the first ``limit`` rows
        as text and as structured content."""
        limit = row_limit(arguments.pop("limit", None))
        observation = self.tools(db).execute_sql(TOOL_SPECS[name].bind((), arguments)["sql"])
        result = observation.result
        if observation.error is not None or result is None:
            return ToolReply(observation.text, error=True)
        rows = [list(r) for r in result.rows[:limit]]
        structured = {"columns": list(result.columns), "rows": rows,
                      "truncated": bool(result.truncated or result.row_count > limit)}
        return ToolReply(rows_text(result, limit), structured=structured)

    def _tables(self, db: str) -> str:
        """ListTables(db): each table with its row count and description, one per line."""
        schema = self.tools(db).schema
        lines = []
        for t in schema.tables:
            rows = f" ({t.row_count} rows)" if t.row_count is not None else ""
            about = t.description or t.geo_description
            lines.append(f"{t.name}{rows}: {len(t.columns)} columns" + (f"; {about}" if about else ""))
        return "\n".join(lines) or f"Database {db} has no tables."

    def schema_text(self, db: str) -> str:
        """The schema of ``db`` as the default method writes it for the model (its schema style: descriptions,
        value meanings). Rendering needs neither the encoder nor the model, so no lock is taken."""
        from kgsql.generate.styles import render_schema
        from kgsql.stages.method import OneCallOptions

        return render_schema(OneCallOptions().schema_style, self.tools(db).schema)

    def _ask(self, db: str | None, question: str, conversation: str | None = None, reset: bool = False) -> ToolReply:
        """The default method's answer; with ``conversation``, read in the context of that id's earlier
        questions over ``db`` (``reset``: forget them first), and kept as its latest turn. No ``db``: the
        question is routed to the likeliest database, and the reply's first line names it (and a close second)."""
        routing = self._route(question) if db is None else None
        db = db if routing is None else routing.db
        self.tools(db)
        if not isinstance(reset, bool):
            raise InputError(f"reset must be true or false, not {reset!r}")
        thread = self.conversations.get(db, conversation, reset=reset) if conversation is not None else None
        if self._asker is None:
            from kgsql.methods import build

            if self._make_lm is None:
                from kgsql.llm.factory import default_lm

                self._make_lm = default_lm
            self._asker = build(self.method, self.graph, self._make_lm(), retriever=self.retriever(), follow_ingest=True,
                                **self.overrides)
        earlier = thread.history if thread is not None else []
        context = thread.context_for(self._asker) if thread is not None else {"history": None}
        asker = self._asker

        def ask_on(name: str) -> Any:
            return asker.ask(question, db=name, **context)

        from kgsql.route.fallback import answer_turn

        answer, routing = answer_turn(routing, db, earlier, ask_on)  # the next database if this one says nothing
        if thread is not None and routing is not None and routing.db != db:  # a new thread: kept where answered
            thread = self.conversations.get(routing.db, conversation, reset=reset)
        if thread is not None:
            thread.record(question, answer)
        if answer.error and not answer.sql:
            return ToolReply(f"Error: {answer.error}", error=True)
        lines = [f"Database: {routing.note()}"] if routing is not None else []
        lines += [f"Understood as: {answer.standalone}"] if earlier and answer.standalone else []
        if answer.refusal:  # the database lacks what the question needs: no SQL, no rows
            lines.append(answer.refusal[:1].upper() + answer.refusal[1:])
            return ToolReply("\n".join(lines), structured={"sql": "", "refusal": answer.refusal,
                                                           "warnings": [], "explanation": {}})
        lines.append(f"SQL: {answer.sql}")
        if answer.error:
            lines.append(f"Error: {answer.error}")
        else:
            from kgsql.db.guard import QueryResult

            lines.append(rows_text(QueryResult(answer.columns, answer.rows[:20], answer.truncated), 20))
        lines += [f"Warning [{f['code']}]: {f['text']}" for f in answer.warnings]
        lines += ["Explanation:", *(f"- {line}" for line in answer.explanation.get("lines", []))] \
            if answer.explanation else []
        structured = {"sql": answer.sql, "refusal": "", "warnings": answer.warnings,
                      "explanation": answer.explanation, "opinions": answer.opinions}  # readings: --set opinions=N
        return ToolReply("\n".join(lines), error=bool(answer.error), structured=structured)

    def _route(self, question: str) -> Any:
        """The databases ranked for ``question`` (a ``kgsql.route.router.Routing``); follows new ingests."""
        from kgsql.generate.answer import check_question
        from kgsql.route.graph_router import GraphRouter

        if self._router is None:
            self._router = GraphRouter(self.graph, self.retriever().encoder)
        return self._router.route(check_question(question))

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()


def build_server(tools: GraphTools) -> Any:
    """An ``MCPServer`` exposing :data:`MCP_TOOLS`, every one marked read-only."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import CallToolResult, TextContent, ToolAnnotations

        from kgsql.mcp.wire import without_surrogates
    except ImportError as exc:
        raise InputError("the MCP server needs the mcp package (mcp>=2): pip install 'kgsql[mcp]'") from exc

    from kgsql import __version__

    server = MCPServer("kgsql", version=__version__, log_level="WARNING", instructions=(
        "Read-only tools over databases described by a schema knowledge graph: list the databases, "
        "search columns and cell values, find join paths, run read-only SQL, or ask a question in words."))
    import logging

    for handler in logging.getLogger().handlers:  # libraries that log at DEBUG (bm25s) stay off stderr
        handler.setLevel(logging.WARNING)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    def reply(answer: ToolReply) -> Any:
        """The SDK's result for a tool's reply: its text without lone surrogates, ``isError`` on failure,
        and the structured content when the tool has one."""
        structured = json.loads(without_surrogates(json.dumps(answer.structured, default=str))) \
            if answer.structured is not None else None
        return CallToolResult(content=[TextContent(type="text", text=without_surrogates(answer.text))],
                              structured_content=structured, is_error=answer.error)

    tool_fns = _tool_functions(tools, reply)
    _add_lookup_tools(server, tool_fns, read_only)
    _add_schema_resource_and_prompt(server, tools)
    server.add_tool(tool_fns["ask"], name="ask", annotations=read_only, structured_output=False,
                    description="Answer a question about database `db` in words: kgsql's default method writes "
                                "the SQL with the local or configured LLM and runs it read-only. Without `db` the "
                                "question goes to the likeliest database; the first line names it, and a close "
                                "second when there is one. Follow-ups: pass "
                                "the same `conversation` id (any name you choose); `reset`: start it over. "
                                "The result warns where the answer may be wrong (flags) and explains the query.")
    return server


def _tool_functions(tools: GraphTools, reply: Callable[[ToolReply], Any]) -> dict[str, Callable[..., Any]]:
    """The tool functions by name: their signatures are what the SDK turns into each tool's input schema."""
    # Return annotations stay ``Any``: the SDK evaluates them in this module's globals.
    def ListDatabases() -> Any:  # noqa: N802 - tool names are the paper's
        return reply(tools.run("ListDatabases"))

    def ListTables(db: str) -> Any:  # noqa: N802
        return reply(tools.run("ListTables", db))

    def DescribeTable(db: str, table: str) -> Any:  # noqa: N802
        return reply(tools.run("DescribeTable", db, table=table))

    def SearchColumn(db: str, semantic: str) -> Any:  # noqa: N802
        return reply(tools.run("SearchColumn", db, semantic=semantic))

    def SearchValue(db: str, value: str, table: str | None = None, column: str | None = None) -> Any:  # noqa: N802
        return reply(tools.run("SearchValue", db, value=value, table=table, column=column))

    def FindShortestPath(db: str, start: str, end: str) -> Any:  # noqa: N802
        return reply(tools.run("FindShortestPath", db, start=start, end=end))

    def ExecuteSQL(db: str, sql: str, limit: LimitArgument = DEFAULT_LIMIT) -> Any:  # noqa: N802
        return reply(tools.run("ExecuteSQL", db, sql=sql, limit=limit))

    def ask(question: str, db: str | None = None, conversation: str | None = None, reset: bool = False) -> Any:
        return reply(tools.run("ask", db, question=question, conversation=conversation, reset=reset))

    fns = (ListDatabases, ListTables, DescribeTable, SearchColumn, SearchValue, FindShortestPath, ExecuteSQL, ask)
    return {fn.__name__: fn for fn in fns}


def _add_lookup_tools(server: Any, tool_fns: dict[str, Callable[..., Any]], read_only: Any) -> None:
    """Register every tool but ``ask``: the agent's lookups with their own descriptions, ListTables, ExecuteSQL."""
    for tool in ("ListDatabases", "DescribeTable", "SearchColumn", "SearchValue", "FindShortestPath"):
        spec = TOOL_SPECS[tool]
        where = "" if tool == "ListDatabases" else " `db`: a database name from ListDatabases."
        server.add_tool(tool_fns[tool], name=spec.name, description=spec.description + where, annotations=read_only,
                        structured_output=False)
    server.add_tool(tool_fns["ListTables"], name="ListTables", annotations=read_only, structured_output=False,
                    description="The tables of database `db` with their row counts and descriptions.")
    server.add_tool(tool_fns["ExecuteSQL"], name="ExecuteSQL", annotations=read_only, structured_output=False,
                    description=f"{TOOL_SPECS['ExecuteSQL'].description} Returns the first `limit` rows "
                                f"(default {DEFAULT_LIMIT}, at most {MAX_LIMIT}) as text and as structured content "
                                f"{{columns, rows, truncated}}. `db`: a database name from ListDatabases.")


def _add_schema_resource_and_prompt(server: Any, tools: GraphTools) -> None:
    """Register the resource ``kgsql://{db}/schema`` and the prompt ``explore``, both over the schema text."""
    @server.resource("kgsql://{db}/schema", name="schema", mime_type="text/plain",
                     description="A database's schema as kgsql writes it for a model: CREATE TABLE statements "
                                 "with each column's description, value meanings and values.")
    def schema(db: str) -> str:
        try:
            return tools.schema_text(db)
        except KgsqlError as exc:
            raise ValueError(str(exc)) from None  # the SDK answers a resource error as a protocol error

    @server.prompt(name="explore", description="Start a conversation about one database with its schema.")
    def explore(db: str, question: str = "") -> str:
        ask_line = f" Then answer: {question}" if question else ""
        return (f"You can query the database '{db}' with the kgsql tools (read-only). Its schema:\n\n"
                f"{tools.schema_text(db)}\n\nLook up what you need with SearchColumn, SearchValue and "
                f"FindShortestPath, check queries with ExecuteSQL.{ask_line}")
