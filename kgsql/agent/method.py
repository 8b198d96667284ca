"""``agent``: the model works the database through the graph's tools (Interactive-T2S).

    method = AgentMethod(graph, lm)                     # also: kgsql.methods.build("agent", graph, lm)
    answer = method.ask("How many singers are from France?", "concert_singer")
    answer.steps                                        # every thought, action and observation

The prompt stays the same size however wide the schema is: the model sees
the table names only and looks everything else up (``schema=table-column``
shows each table's columns too, while they fit ``schema_tokens``: a small
model that sees the columns invents fewer of them). Each round is one model
call; a malformed action is answered with a one-line correction; ``Done``
runs the final query (a failing one gets one chance to be fixed). Small
models loop, so a step that repeats an earlier one is not run again (the
model is told to use what it found; a third repeat in a row ends the
episode), and the last round asks for ``Done``.
After ``max_rounds`` the best query the agent executed is returned (rows
beat an empty result, later beats earlier).
"""
from __future__ import annotations

import functools
import importlib.resources
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kgsql.agent.actions import ActionError
from kgsql.agent.tools import AGENT_TOOLS, TOOL_SPECS, DatabaseTools, Observation
from kgsql.agent.transports import TRANSPORTS, Transport
from kgsql.sql.dialects import dialect_of, label
from kgsql.errors import InputError, KgsqlError
from kgsql.generate.answer import Answer, Candidate, check_question
from kgsql.generate.styles import available_styles, render_schema
from kgsql.generate.review import review
from kgsql.llm.trace import Trace
from kgsql.schema.sources import GraphSchemas
from kgsql.prompts.templates import fill
from kgsql.retrieve.lazy import lazy_retriever
from kgsql.stages.schema import CHARS_PER_TOKEN

MAX_REPEATS = 3  # refused repeats in a row that end an episode
DEMOS = ("company", "library", "clinic")  # one table, a 4-table join, a value + evidence


@dataclass(frozen=True)
class AgentOptions:
    """The agent method's settings (``--set key=value`` in ask and eval)."""

    max_rounds: int = 12            # model calls at most; then the best executed query is returned
    transport: str = "text"         # text: ReAct in plain text (any endpoint); functions: OpenAI tools
    demos: tuple[str, ...] = DEMOS  # demonstration episodes (kgsql/agent/demos/<name>.txt)
    shots: int = 0                  # the demos are fixed; no examples from a pool
    top_k: int = 5                  # columns / values per search
    max_rows: int = 10              # rows shown per ExecuteSQL
    tables_shown: int = 40          # table names in the question turn (the rest are counted)
    schema: str = "names"           # names: table names only (the paper's); or a schema style shown in the question
                                    # turn ("table-column": each table with its columns) while it fits schema_tokens
    schema_tokens: int = 1500       # the most a shown schema may take; a bigger one: table names only
    draft: bool = True              # the default method's query and its result open the episode (one more call;
                                    # measured: 66 vs 30 % on 50 Spider questions, docs/agent.md); False: the paper's
    max_tokens: int = 256
    temperature: float = 0.0
    timeout_s: float = 30.0
    max_rows_answer: int = 1000     # rows kept in the answer

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise InputError(f"transport '{self.transport}': expected one of {', '.join(TRANSPORTS)}")
        if self.max_rounds < 1:
            raise InputError(f"max_rounds must be at least 1, not {self.max_rounds}")
        if not 0 < self.timeout_s < float("inf"):
            raise InputError(f"timeout_s must be a positive number of seconds, not {self.timeout_s}")
        if self.schema != "names" and self.schema not in available_styles():
            raise InputError(f"schema '{self.schema}': expected names or a schema style "
                             f"({', '.join(available_styles())})")
        for name in ("top_k", "max_rows", "tables_shown", "max_tokens", "max_rows_answer", "schema_tokens"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1, not {getattr(self, name)}")
        unknown = [d for d in self.demos if d not in available_demos()]
        if unknown:
            raise InputError(f"no demonstration episode '{unknown[0]}' (known: {', '.join(available_demos())})")


@functools.cache
def available_demos() -> tuple[str, ...]:
    folder = importlib.resources.files("kgsql.agent") / "demos"
    return tuple(sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt")))


@functools.cache
def demo_text(name: str) -> str:
    return (importlib.resources.files("kgsql.agent") / "demos" / f"{name}.txt").read_text(encoding="utf-8").strip()


def instruction(options: AgentOptions, dialect: str = "SQLite") -> str:
    """The system turn: the same for every question, so the server caches it."""
    tools = "\n".join(f"- {TOOL_SPECS[n].signature}: {TOOL_SPECS[n].description}" for n in AGENT_TOOLS)
    demos = "\n\n".join(f"Example {i}:\n{demo_text(d)}" for i, d in enumerate(options.demos, 1))
    return fill("agent_instruction", dialect=dialect, tools=tools, demos=demos)


def question_turn(question: str, database: str, tables: Sequence[str], evidence: str = "", limit: int = 40,
                  schema_text: str = "") -> str:
    """``Question: ...`` (+ ``Evidence:``) and the database with its table names (at most ``limit``), or with
    ``schema_text`` (its tables and columns) when given."""
    lines = [f"Question: {question}"]
    if evidence.strip():
        lines.append(f"Evidence: {evidence.strip()}")
    if schema_text:
        lines.append(f"Database: {database}, tables and columns:\n{schema_text}")
    else:
        shown = ", ".join(tables[:limit]) + (f", ... ({len(tables)} tables)" if len(tables) > limit else "")
        lines.append(f"Database: {database} (tables: {shown})")
    return "\n".join(lines)


def draft_note(draft: Observation) -> str:
    """What the question turn says of the default method's query: the query, its result, what to do."""
    return (f"\nA first query, written from the schema:\n{draft.sql}\nIts result:\n{draft.text}\n"
            "Check it with the tools where you doubt it, fix it if it is wrong, and finish with Done(sql) "
            "(the same query if it is right).")


def shown_schema(options: AgentOptions, schema: Any) -> str:
    """The schema text for the question turn: "" with ``schema=names`` or when it would exceed the budget
    (a wide database keeps the table-names prompt, whose size does not grow with the schema)."""
    if options.schema == "names":
        return ""
    text = render_schema(options.schema, schema).strip()
    return text if len(text) / CHARS_PER_TOKEN <= options.schema_tokens else ""


class AgentMethod:
    """Answers a question by letting the model call the graph's tools, one per round."""

    def __init__(self, graph: Any, lm: Any, options: AgentOptions = AgentOptions(), *, retriever: Any = None,
                 encoder: Any = None, follow_ingest: bool = False,
                 drafter: Callable[..., Answer] | None = None) -> None:
        self.graph = graph
        self.lm = lm
        self.options = options
        self.drafter = drafter  # ``draft``: asks the default method first (``drafter(question, db, evidence=)``)
        # each database read from the graph once (again after a re-ingest with follow_ingest), not per question
        self.schemas = GraphSchemas(graph, follow_ingest=follow_ingest)
        # one for every question, built on the first search
        self.retriever = lazy_retriever(retriever, encoder, getattr(graph, "vector_stage", None))

    def tools(self, db: str) -> DatabaseTools:
        o = self.options
        return DatabaseTools(self.graph, db, retriever=self.retriever, schema=self.schemas(db), top_k=o.top_k,
                             max_rows=o.max_rows, timeout_s=o.timeout_s)

    def ask(self, question: str, db: str, evidence: str | None = None,
            history: Sequence[str] | None = None) -> Answer:
        """Run one episode; model and tool trouble end up in ``answer.error``, never raised."""
        question = check_question(" ".join([*(history or []), question]))
        t0 = time.perf_counter()
        answer = Answer(question=question, db=db, evidence=evidence or "",
                        evidence_source="user" if evidence else "none")
        trace = Trace()
        try:
            tools = self.tools(db)
            tables = [t.name for t in tools.schema.tables]
            transport: Transport = TRANSPORTS[self.options.transport](
                self.lm, max_tokens=self.options.max_tokens, temperature=self.options.temperature)
            dialect = {"spatialite": "SpatiaLite (SQLite)", "postgis": "PostGIS (PostgreSQL)"}.get(
                dialect_of(tools.schema), label(dialect_of(tools.schema)))
            draft = self._draft(question, db, evidence, tools)
            turn = question_turn(question, db, tables, evidence or "", self.options.tables_shown,
                                 shown_schema(self.options, tools.schema))
            transport.begin(instruction(self.options, dialect), turn + (draft_note(draft[1]) if draft else ""))
            self._episode(transport, tools, trace, answer, draft[1] if draft else None)
            review(answer, tools.schema)  # explanation and flags, from the SQL and the graph: no model call
        except KgsqlError as exc:
            answer.error = str(exc)
            draft = None
        answer.finish(trace, t0)
        if draft is not None:  # the draft's calls are part of this answer's cost
            answer.prompts = draft[0].prompts + answer.prompts
            answer.tokens = {k: answer.tokens.get(k, 0) + draft[0].tokens.get(k, 0) for k in answer.tokens}
        return answer

    def _draft(self, question: str, db: str, evidence: str | None,
               tools: DatabaseTools) -> tuple[Answer, Observation] | None:
        """The default method's answer and the agent's own run of its query, when ``draft`` is on."""
        if not self.options.draft or self.drafter is None:
            return None
        drafted = self.drafter(question, db, evidence=evidence)
        if not drafted.sql:
            return None
        return drafted, tools.execute_sql(drafted.sql)

    def _episode(self, transport: Transport, tools: DatabaseTools, trace: Trace, answer: Answer,
                 draft: Observation | None = None) -> None:
        executed: list[Candidate] = [] if draft is None else [Candidate(draft.sql, draft.result, draft.error)]
        final: Observation | None = None
        fixed_done = False
        model_error: str | None = None
        seen: dict[tuple[str, str], int] = {}  # (tool, arguments) -> round first run
        repeats = 0  # refused repeats in a row
        last = self.options.max_rounds

        def observe(text: str, round_no: int) -> None:
            if round_no == last - 1:
                text += "\nOne step left: finish now with Done(sql)."
            transport.observe(text)

        for round_no in range(1, last + 1):
            answer.rounds = round_no
            try:
                step = transport.next(trace)
            except KgsqlError as exc:  # the model failed mid-episode: keep what the agent already ran
                answer.steps.append({"round": round_no, "error": f"model: {exc}", "observation": ""})
                model_error = str(exc)
                break
            if isinstance(step, ActionError):
                text = f"Error: {step}"
                answer.steps.append({"round": round_no, "error": str(step), "observation": text})
                observe(text, round_no)
                continue
            key = (step.tool, repr(sorted(step.arguments.items())))
            if step.tool != "Done" and key in seen:
                repeats += 1
                if repeats >= MAX_REPEATS:
                    answer.steps.append({"round": round_no, "thought": step.thought, "action": step.action,
                                         "observation": "(stopped: the model repeats itself)", "repeated": seen[key]})
                    break
                text = (f"You already did this in round {seen[key]}; its observation is above. Do not repeat a "
                        f"step: use what you found, run a different query, or finish with Done(sql).")
                answer.steps.append({"round": round_no, "thought": step.thought, "action": step.action,
                                     "observation": text, "repeated": seen[key]})
                observe(text, round_no)
                continue
            seen.setdefault(key, round_no)
            repeats = 0
            if step.tool == "Done":
                observation = tools.execute_sql(step.arguments["sql"])
                record = {"round": round_no, "thought": step.thought, "action": step.action,
                          "observation": observation.text}
                answer.steps.append(record)
                if observation.error is not None and not fixed_done and round_no < self.options.max_rounds:
                    fixed_done = True  # one chance to fix a final query that does not run
                    observe(f"{observation.text}\nThe final query failed; fix it and call Done again.", round_no)
                    executed.append(Candidate(observation.sql, None, observation.error))
                    continue
                final = observation
                break
            observation = tools.call(step.tool, step.arguments)
            answer.steps.append({"round": round_no, "thought": step.thought, "action": step.action,
                                 "observation": observation.text})
            if step.tool == "ExecuteSQL":
                executed.append(Candidate(observation.sql, observation.result, observation.error))
            observe(observation.text, round_no)
        answer.candidates = [c.sql for c in executed]
        if final is None:  # round limit: the best query it ran (rows > empty > failed; later wins ties)
            best = max(reversed(executed), key=lambda c: c.rank, default=None)
            if best is None or best.rank == 0:
                answer.error = model_error or f"no working query after {answer.rounds} rounds"
                answer.sql = best.sql if best is not None else ""
                return
            final = Observation("", sql=best.sql, result=best.result)
        answer.sql = final.sql
        if final.error is not None:
            answer.error = final.error
        elif final.result is not None:
            answer.columns = list(final.result.columns)
            answer.rows = list(final.result.rows[: self.options.max_rows_answer])
            answer.truncated = final.result.truncated or final.result.row_count > self.options.max_rows_answer
