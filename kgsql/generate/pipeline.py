"""``Text2SQL``: answer a question over an ingested database, the KG paper's way.

    from kgsql import SchemaGraph, Text2SQL
    t2s = Text2SQL(SchemaGraph.open(), lm)          # lm: any kgsql.llm.LM
    answer = t2s.ask("Which river is longest?", db="geo")
    answer.sql, answer.rows, answer.evidence, answer.prompts

Steps: knowledge selection (late-interaction retrieval over the graph's
column nodes, value index, join-path completion) -> unified KG-based schema
(with geographic descriptions) and, for spatial databases, SpatiaLite
knowledge with the functions this question needs -> evidence (three LLM
steps) -> least-to-most SQL -> guarded execution with schema-tips
self-correction (up to ``max_rounds`` generations; the last is final).
Every step is a switch in ``MethodOptions`` so ablations are one flag each.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Protocol, Sequence

from kgsql.db.guard import QueryResult, SQLQueryError, execute_query
from kgsql.errors import InputError, KgsqlError, UnsafeSQLError
from kgsql.generate.evidence import Evidence, EvidenceGenerator, ValueHint
from kgsql.generate.render import RenderOptions, render_geo_descriptions, render_kg_schema
from kgsql.generate.sqlgen import SQLGenerator, SQLPrompt
from kgsql.generate.templates import fill, join_sections, section
from kgsql.generate.trace import Trace
from kgsql.llm.base import LM, Message
from kgsql.schema.model import DatabaseSchema

MAX_QUESTION_CHARS = 2000
SQLITE_EXPERT = "You are an expert in SQLite and highly skilled in writing SQL queries."


@dataclass(frozen=True)
class MethodOptions:
    """Method switches (each an ablation flag of ``python -m kgsql.ask``)."""

    kg_schema: bool = True          # unified KG-based schema; False: plain CREATE TABLE of the whole database
    selection: bool = True          # knowledge selection (only with kg_schema)
    evidence: bool = True           # generate evidence
    user_evidence: str = "add"      # user-given evidence: "replace" generation, "add" to it, or "ignore"
    tips: bool = True               # self-correction with schema tips
    sdbms: bool = True              # SpatiaLite knowledge (spatial databases)
    geo: bool = True                # geographic table descriptions
    least_to_most: bool = True      # decompose, then solve in order
    max_rounds: int = 5             # generations at most, the first included
    spatial_functions: int = 6      # functions auto-selected per question
    value_examples: int = 3
    timeout_s: float = 30.0
    max_rows: int = 1000
    max_tokens: int = 512


@dataclass
class Answer:
    """Everything about one answer: the SQL, its rows, and how it was made."""

    question: str
    db: str
    sql: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    evidence: str = ""
    evidence_source: str = "none"
    selected_schema: str = ""
    selection: dict[str, Any] = field(default_factory=dict)
    tips: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    rounds: int = 0
    prompts: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts, ready for ``pandas.DataFrame(answer.records())``."""
        return [dict(zip(self.columns, row)) for row in self.rows]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rows"] = [list(r) for r in self.rows]
        return d


class Retriever(Protocol):
    def select(self, schema: DatabaseSchema, question: str, *, db_path: str | None = None) -> Any: ...


ExampleProvider = Callable[[str, DatabaseSchema], Sequence[tuple[str, str]]]


def check_question(question: str) -> str:
    """Refuse empty and absurdly long questions before any model is asked."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    q = " ".join(question.split())
    if len(q) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(q)} characters long; the limit is {MAX_QUESTION_CHARS}")
    return q


class Text2SQL:
    """Answers questions over databases in a schema graph with an injected LM."""

    def __init__(
        self,
        graph: Any,
        lm: LM,
        *,
        retriever: Retriever | None = None,
        options: MethodOptions | None = None,
        examples: ExampleProvider | None = None,
    ):
        self.graph = graph
        self.lm = lm
        self.options = options or MethodOptions()
        self.examples = examples
        self._retriever = retriever
        self._schemas: dict[str, DatabaseSchema] = {}

    # -- knowledge -----------------------------------------------------------
    def schema(self, db: str) -> DatabaseSchema:
        if db not in self._schemas:
            self._schemas[db] = self.graph.schema(db)
        return self._schemas[db]

    @property
    def retriever(self) -> Retriever | None:
        if self._retriever is None and self.options.selection and self.options.kg_schema:
            from kgsql.retrieve import SchemaRetriever

            self._retriever = SchemaRetriever()
        return self._retriever

    def _select(self, schema: DatabaseSchema, question: str, answer: Answer) -> tuple[DatabaseSchema, list[ValueHint]]:
        if not (self.options.kg_schema and self.options.selection) or self.retriever is None:
            return schema, []
        selection = self.retriever.select(schema, question, db_path=schema.path or None)
        answer.selection = selection.to_dict()
        sub = selection.to_schema(schema)
        sub = replace(sub, description=schema.description, derived=list(schema.derived))
        values = [ValueHint(v.table, v.column, v.value) for v in selection.values]
        return sub, values

    def _spatial(self, question: str, schema: DatabaseSchema) -> tuple[str, str]:
        """(system preamble, spatial functions section) for this question."""
        if not (schema.is_spatial and self.options.sdbms):
            return SQLITE_EXPERT, ""
        from kgsql.generate.spatial import SpatialKnowledge

        kb = SpatialKnowledge.load()
        functions = kb.select(question, schema, k=self.options.spatial_functions)
        text = kb.render(functions, preamble=False) if functions else ""
        return kb.preamble, section("spatial_section", functions=text)

    def _schema_text(self, full: DatabaseSchema, selected: DatabaseSchema) -> str:
        opts = self.options
        if opts.kg_schema:
            return render_kg_schema(selected, RenderOptions(value_examples=opts.value_examples,
                                                            geo_descriptions=opts.geo))
        from kgsql.retrieve.budget import render_ddl

        text = render_ddl(full)
        geo = render_geo_descriptions(full) if opts.geo else ""
        return join_sections(text, section("geo_section", geo=geo))

    def _examples_text(self, question: str, schema: DatabaseSchema) -> str:
        if self.examples is None:
            return ""
        pairs = self.examples(question, schema)
        return "\n\n".join(f"/* Answer the following: {q} */\n{sql.strip()}" for q, sql in pairs)

    # -- answering -----------------------------------------------------------
    def ask(self, question: str, db: str, evidence: str | None = None) -> Answer:
        """Answer ``question`` over database ``db``; never raises for model or SQL trouble:
        those end up in ``answer.error``. Bad input (empty question, unknown db) raises."""
        question = check_question(question)
        t0 = time.perf_counter()
        full = self.schema(db)
        answer = Answer(question=question, db=db)
        trace = Trace()
        try:
            self._answer(question, full, evidence, answer, trace)
        except KgsqlError as exc:  # LLM down, garbage output...: reported, not raised
            answer.error = str(exc)
        answer.prompts = trace.to_list()
        answer.tokens = {"prompt": trace.prompt_tokens, "completion": trace.completion_tokens,
                         "cached": trace.cached_tokens, "total": trace.prompt_tokens + trace.completion_tokens}
        answer.latency_s = time.perf_counter() - t0
        return answer

    def _answer(self, question: str, full: DatabaseSchema, user_evidence: str | None, answer: Answer,
                trace: Trace) -> None:
        opts = self.options
        selected, values = self._select(full, question, answer)
        preamble, functions = self._spatial(question, selected)
        schema_text = self._schema_text(full, selected)
        answer.selected_schema = schema_text
        context: list[Message] = [
            {"role": "system", "content": preamble},
            {"role": "user", "content": join_sections(functions, fill("context", schema=schema_text))},
        ]
        evidence = self._evidence(question, context, user_evidence, values, trace)
        answer.evidence, answer.evidence_source = evidence.text, evidence.source
        prompt = SQLPrompt(context=context, dialect="SpatiaLite" if full.is_spatial else "SQLite",
                           evidence=evidence.text, examples=self._examples_text(question, full))
        self._generate_and_correct(question, full, prompt, answer, trace)

    def _evidence(self, question: str, context: list[Message], user: str | None,
                  values: list[ValueHint], trace: Trace) -> Evidence:
        opts = self.options
        user = (user or "").strip()
        if user and opts.user_evidence == "replace":
            return Evidence(text=user, source="user")
        generated = (EvidenceGenerator(self.lm).generate(question, context, trace, values=values)
                     if opts.evidence else None)
        if user and opts.user_evidence == "add":
            text = user if generated is None else f"{user} {generated.text}".strip()
            return Evidence(text=text, source="user" if generated is None else "user+generated")
        return generated or Evidence(text="", source="none")

    def _generate_and_correct(self, question: str, schema: DatabaseSchema, prompt: SQLPrompt,
                              answer: Answer, trace: Trace) -> None:
        from kgsql.generate.extract import extract_sql
        from kgsql.generate.tips import Tip, render_tips

        opts = self.options
        generator = SQLGenerator(self.lm, least_to_most=opts.least_to_most, max_tokens=opts.max_tokens)
        tips: list[Tip] = []
        result: QueryResult | None = None
        error: str | None = None
        rounds = max(1, opts.max_rounds) if opts.tips else 1
        for round_no in range(1, rounds + 1):
            raw, suffix = generator.generate(prompt, question, trace, tips=render_tips(tips) if tips else "")
            answer.rounds = round_no
            try:
                sql = extract_sql(raw, prompt_suffix=suffix)
            except KgsqlError as exc:
                sql, result, error = "", None, str(exc)
                new = [Tip("no_sql", "Answer with one SQL query only, in a ```sql block.")]
            else:
                answer.candidates.append(sql)
                result, error, new = self._check(sql, schema, question, last=round_no == rounds)
            answer.sql = sql or answer.sql
            fresh = [t for t in new if t.text not in {x.text for x in tips}]
            if not opts.tips or not fresh:
                break
            tips.extend(fresh)
        answer.tips = [t.text for t in tips]
        answer.error = error
        if result is not None:
            answer.columns, answer.rows, answer.truncated = list(result.columns), list(result.rows), result.truncated

    def _check(self, sql: str, schema: DatabaseSchema, question: str, *, last: bool):  # type: ignore[no-untyped-def]
        """Run the candidate; return (result, error text, tips for the next round).

        The static check (sqlglot qualification against the schema) runs first
        and names every unknown table/column at once, where SQLite stops at the
        first; its tips are used only when SQLite also rejects the query, so a
        static false positive never costs a round.
        """
        from kgsql.generate.tips import Tip, empty_result_tip, precheck, tips_from_error, value_tips

        opts = self.options
        dialect = "spatialite" if schema.is_spatial else "sqlite"
        static = precheck(sql, schema) if opts.tips else []
        try:
            result = execute_query(schema.path, sql, timeout_s=opts.timeout_s, max_rows=opts.max_rows)
        except UnsafeSQLError as exc:
            return None, str(exc), [Tip("unsafe", "Write exactly one read-only SELECT query.")]
        except SQLQueryError as exc:
            tips = tips_from_error(exc, sql, schema, dialect=dialect) if opts.tips else []
            return None, str(exc), tips + [t for t in static if t.text not in {x.text for x in tips}]
        if not result.rows and opts.tips and not last:
            soft = value_tips(sql, schema, schema.path)
            empty = empty_result_tip(question, sql)
            return result, None, soft + ([empty] if empty else [])
        return result, None, []
