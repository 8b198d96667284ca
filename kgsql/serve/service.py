"""What the warm service keeps loaded, and each API call as a plain function of it.

One process holds the graph connection, the encoder and value indexes (one
``SchemaRetriever``), the model (the local server stays up) and the built
methods, so a repeated ``ask`` costs only its own work. The HTTP layer
(:mod:`kgsql.serve.http`) only parses requests and calls these methods.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import fields
from typing import Any, Callable

from kgsql.conversation.store import ConversationStore
from kgsql.errors import InputError
from kgsql.generate.geojson import readable
from kgsql.retrieve.lazy import lazy_retriever

MAX_ROWS = 1000  # rows an API answer carries at most
MAX_METHODS = 8  # built methods kept warm (each option set is one)
SQL_TIMEOUT_S = 30.0  # a query of /api/sql or /api/examples runs at most this long (its worker is killed after)


class Service:
    """The loaded parts and the operations of ``/api/``; every method returns JSON-ready data."""

    def __init__(self, open_graph: Callable[[], Any], make_lm: Callable[[], Any] | None = None, *,
                 graph_uri: str | None = None, sql_timeout_s: float = SQL_TIMEOUT_S) -> None:
        self._open_graph = open_graph
        self.sql_timeout_s = sql_timeout_s
        self._graph_uri = graph_uri
        self._make_lm = make_lm
        self._graph: Any = None
        # one for every method and request, built on first use (with the graph's vector index where it has one)
        self.retriever = lazy_retriever(first_stage=lambda: getattr(self.graph, "vector_stage", None))
        self._lm: Any = None
        self._schemas: Any = None
        self._methods: OrderedDict[tuple[str, str], Any] = OrderedDict()  # LRU of built methods
        self._load = threading.Lock()   # building shared parts
        self.model_lock = threading.Lock()  # one question at a time reaches the model
        self.conversations = ConversationStore()  # threads of follow-up questions, by (db, id), LRU
        self._router: Any = None  # kgsql.route.graph_router.GraphRouter, made on the first unrouted ask

    # ------------------------------------------------------------------ loaded parts

    @property
    def graph(self) -> Any:
        with self._load:
            if self._graph is None:
                self._graph = self._open_graph()
            return self._graph

    def schema(self, db: str) -> Any:
        """``db``'s schema as last ingested, the same object until then (what the retriever prepared
        for it stays warm; unknown database: one clear error)."""
        graph = self.graph
        with self._load:
            if self._schemas is None:
                from kgsql.schema.sources import GraphSchemas

                self._schemas = GraphSchemas(graph, follow_ingest=True)
        return self._schemas(db)

    def lm(self) -> Any:
        with self._load:
            if self._lm is None:
                if self._make_lm is None:
                    from kgsql.llm.factory import default_lm

                    self._make_lm = default_lm
                self._lm = self._make_lm()
            return self._lm

    def method(self, name: str, overrides: dict[str, Any]) -> Any:
        """The built method (cached by name and options, so its indexes stay warm; ``build`` refuses
        options the method does not have)."""
        from kgsql.methods import build

        key = (name, repr(sorted(overrides.items())))
        if key not in self._methods:
            self._methods[key] = build(name, self.graph, self.lm(), retriever=self.retriever(), follow_ingest=True,
                                       **overrides)
            while len(self._methods) > MAX_METHODS:
                self._methods.popitem(last=False)
        self._methods.move_to_end(key)
        return self._methods[key]

    def describe(self) -> dict[str, Any]:
        """Which graph and model this service answers with (``ask`` uses it only when they are the caller's)."""
        import os

        from kgsql.llm.config import ENV_BASE_URL, ENV_LOCAL_MODEL, ENV_MODEL
        from kgsql.secrets import redact_uri

        from kgsql.db.privilege import privileged_allowed

        return {"graph": redact_uri(self._graph_uri) if self._graph_uri else "",
                "llm": {k: os.environ.get(k, "") for k in (ENV_BASE_URL, ENV_MODEL, ENV_LOCAL_MODEL)},
                "privileged": privileged_allowed()}

    def warm(self) -> None:
        """Load everything a first question needs now (encoder, model), not on that question."""
        self.graph  # noqa: B018 - connect
        self.retriever().encode_question("warm up")
        self.lm()

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()

    # ------------------------------------------------------------------ operations

    def databases(self) -> list[dict[str, Any]]:
        out = []
        for name in self.graph.databases():
            info = self.graph.database_info(name)
            out.append({"name": name, "tables": len(self.graph.tables(name)),
                        "spatial": bool(info.get("is_spatial", False))})
        return out

    def table(self, db: str, table: str) -> dict[str, Any]:
        schema = self.schema(db)
        t = schema.table(table)
        return {"db": db, "name": t.name, "description": t.description, "row_count": t.row_count,
                "columns": [{"name": c.name, "type": c.type, "primary_key": c.is_primary_key,
                             "description": c.description, "values": list(c.value_examples[:5]),
                             "min": c.stats.min, "max": c.stats.max,
                             "geometry": c.spatial.geometry_type if c.spatial else None} for c in t.columns],
                "foreign_keys": [_join(fk) for fk in schema.foreign_keys if t.name in (fk.table, fk.ref_table)]}

    def picture(self, db: str) -> dict[str, Any]:
        """What the page draws: every table with its columns, and every join edge with its origin."""
        schema = self.schema(db)
        return {"db": db,
                "tables": [{"name": t.name, "row_count": t.row_count, "description": t.description,
                            "columns": [{"name": c.name, "type": c.type, "primary_key": c.is_primary_key}
                                        for c in t.columns]} for t in schema.tables],
                "joins": [_join(fk) for fk in schema.foreign_keys]}

    def teach(self, db: str, question: str, sql: str) -> dict[str, Any]:
        """Keep a right (question, SQL) pair: mined into the graph and stored as the database's example."""
        from kgsql.generate.answer import check_question

        result = self.sql(db, sql)  # only a read-only query that runs (the guard refuses the rest in one line)
        if not result["rows"]:
            raise InputError("a query that returns no rows is not kept as an example: it cannot be checked "
                             "as right, and what it joins would be learnt as knowledge")
        report = self.graph.learn(check_question(question), sql, db=db)
        self._schemas.forget(db)  # (made by sql() above) the mined knowledge is new
        with self.model_lock:
            self._methods.clear()  # built methods read the schema once
        return {"db": db, "examples": len(self.graph.examples(db)), "mining": report}

    def select(self, db: str, question: str) -> dict[str, Any]:
        from kgsql.generate.answer import check_question

        schema = self.schema(db)
        selection = self.retriever().select(schema, check_question(question), db_path=schema.path or None)
        return selection.to_dict()

    def route(self, question: str) -> Any:
        """The databases ranked for ``question`` (a ``Routing``); the router follows new ingests."""
        from kgsql.generate.answer import check_question
        from kgsql.route.graph_router import GraphRouter

        graph, encoder = self.graph, self.retriever().encoder
        with self._load:
            if self._router is None:
                self._router = GraphRouter(graph, encoder)
        return self._router.route(check_question(question))

    def ask(self, db: str | None, question: str, *, method: str = "kgsql", evidence: str | None = None,
            sets: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
            trace: bool = False, history: list[str] | None = None, conversation: str | None = None,
            reset: bool = False, history_sql: list[str] | None = None) -> dict[str, Any]:
        """``sets``: method options (an option the method lacks is an error); ``limits``: options
        applied where the method has them (timeout_s, max_rows, ...), as ``ask``'s flags are.
        A follow-up comes with ``history`` (the earlier questions; ``history_sql``, the SQL answered for
        each) or ``conversation`` (the id of a thread kept here, which keeps each turn's SQL; ``reset``
        starts it over): the answer says which earlier questions it was read with.
        No ``db``: the question is routed first (the answer's ``routing`` names the database and a close second)."""
        from kgsql.methods import RENAMED_OPTIONS, get_method, parse_sets
        from kgsql.route.fallback import answer_turn

        routing = self.route(question) if db is None else None
        db = db if routing is None else routing.db
        self.graph.database_info(db)  # unknown database: one clear error before any model work
        known = {f.name for f in fields(get_method(method).options)}
        unknown = sorted({RENAMED_OPTIONS.get(k, k) for k in sets or {}} - known)  # an earlier name is read too
        if unknown:
            raise InputError(f"unknown option(s) {', '.join(unknown)} for method '{method}'")
        overrides = parse_sets([f"{k}={v}" for k, v in (limits or {}).items() if k in known])
        overrides.update(parse_sets([f"{k}={v}" for k, v in (sets or {}).items()]))
        with self.model_lock:  # one question at a time: a thread is reset, read and written in order too
            thread = self.conversations.get(db, conversation, reset=reset) if conversation is not None else None
            earlier = thread.history if thread is not None else list(history or [])
            sqls = thread.history_sql if thread is not None else list(history_sql or [])
            t2s = self.method(method, overrides)
            more = {"history_sql": sqls} if earlier and getattr(t2s, "wants_history_sql", False) else {}

            def ask_on(name: str) -> Any:
                return t2s.ask(question, db=name, evidence=evidence, history=earlier or None, **more)

            answer, routing = answer_turn(routing, db, earlier, ask_on)  # the next database if this one says nothing
            if thread is not None and routing is not None and routing.db != db:  # a new thread: kept where answered
                thread = self.conversations.get(routing.db, conversation, reset=reset)
            turns = None
            if thread is not None:  # a failed answer is a turn too: its question still sets the context
                thread.record(question, answer)
                turns = [t.to_dict() for t in thread.turns]
        data = answer.to_dict()
        data["history"] = earlier
        data["chart"] = answer.chart  # a Vega-Lite spec when the rows' shape fits one (the page draws it), else None
        if routing is not None:
            data["routing"] = routing.to_dict()
        if turns is not None:
            data["conversation"], data["turns"] = conversation, turns
        if len(data["rows"]) > MAX_ROWS:
            data["rows"], data["truncated"] = data["rows"][:MAX_ROWS], True
        data["rows"] = [[readable(v) for v in row] for row in data["rows"]]  # geometries as GeoJSON text
        if not trace:
            data.pop("prompts", None)
        return data

    def sql(self, db: str, sql: str) -> dict[str, Any]:
        """Rows of a read-only query, run in a killable worker process: a query that crashes or outgrows its
        budget ends there, not in this service (BusyError when every worker is taken)."""
        from kgsql.db import isolate

        result = isolate.execute_on(db, self.schema(db).path, sql, timeout_s=self.sql_timeout_s, max_rows=MAX_ROWS)
        return {"columns": result.columns, "rows": [list(r) for r in result.rows], "truncated": result.truncated,
                "elapsed_s": round(result.elapsed_s, 4)}


def _join(fk: Any) -> dict[str, Any]:
    """A join edge as the API shows it."""
    return {"from": f"{fk.table}.{fk.column}", "to": f"{fk.ref_table}.{fk.ref_column}", "origin": fk.origin}
