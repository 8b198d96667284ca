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
self-correction (up to ``max_rounds`` generations; the final answer is the
last candidate that ran, preferring one with rows, else the last one).
Every step is a switch in ``MethodOptions`` so ablations are one flag each.

The same pipeline runs the baseline methods (``kgsql.methods``: DAIL-SQL,
ACT-SQL, SSpa): ``question_format`` other than "kgsql" replaces evidence +
least-to-most prompting by one formatted prompt (``generate/formats.py``)
with a named schema style, example rows, few-shot examples selected from an
``ExamplePool`` (optionally with auto-CoT), and the same guarded execution
and tips loop. ``ask(..., history=[...])`` first rewrites a conversation's
question to stand alone (ACT-SQL's multi-turn rewriting).
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Protocol, Sequence

from kgsql.db.guard import QueryResult
from kgsql.errors import KgsqlError
from kgsql.generate.answer import Answer, Candidate, check_question
from kgsql.generate.evidence import Evidence, EvidenceGenerator, ValueHint
from kgsql.generate.formats import PromptParts, Shot
from kgsql.generate.options import MethodOptions, check_options
from kgsql.generate.render import RenderOptions, render_geo_descriptions, render_kg_schema
from kgsql.generate.sqlgen import FormattedSQLGenerator, SQLGenerator, SQLPrompt
from kgsql.ingest.sources import GraphSchemas
from kgsql.llm.base import LM, Message
from kgsql.llm.trace import Trace
from kgsql.prompts.templates import fill, join_sections, section
from kgsql.sql.dialects import dialect_of, expert_line, function_kb, label
from kgsql.schema.model import DatabaseSchema


class Retriever(Protocol):
    def select(self, schema: DatabaseSchema, question: str, *, db_path: str | None = None) -> Any: ...


ExampleProvider = Callable[[str, DatabaseSchema], Sequence[tuple[str, str]]]


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
        pool: Any = None,
        encoder: Any = None,
        follow_ingest: bool = False,
    ):
        """``examples``: a fixed provider of (question, SQL) pairs; ``pool``: an
        ``ExamplePool`` the method's selector picks ``options.shots`` examples from
        (``encoder``: the selector's embedding encoder, default MiniLM); ``follow_ingest``:
        a long-running process's method reads a database again after a re-ingest."""
        self.graph = graph
        self.lm = lm
        self.options = check_options(options or MethodOptions())
        self.examples = examples
        self.pool = pool
        self._encoder = encoder
        self._retriever = retriever
        self._selector: Any = None
        self._autocot: Any = None
        self.schemas = GraphSchemas(graph, follow_ingest=follow_ingest)  # each database read once (per ingest)

    # -- knowledge -----------------------------------------------------------
    def schema(self, db: str) -> DatabaseSchema:
        return self.schemas(db)

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

    @property
    def selector(self) -> Any:
        """The pool's example selector (built on first use), or None without a pool."""
        if self._selector is None and self.pool is not None:
            from kgsql.fewshot.select import get_selector

            self._selector = get_selector(self.options.example_selection, self.pool, encoder=self._encoder,
                                          n_static=self.options.static_shots)
        return self._selector

    @property
    def autocot(self) -> Any:
        if self._autocot is None and self.pool is not None:
            from kgsql.fewshot.cot import AutoCoT

            self._autocot = AutoCoT(self.pool, self._encoder)
        return self._autocot

    def _spatial_knowledge(self, question: str, schema: DatabaseSchema) -> tuple[str, str]:
        """(SDBMS preamble, function explanations) for this question; ("", "") when off or not spatial."""
        if not self.options.sdbms:
            return "", ""
        from kgsql.sql.spatialite import spatial_notes

        kb = function_kb(dialect_of(schema))
        if not kb:
            return "", ""
        return spatial_notes(question, schema, k=self.options.spatial_functions,
                             fixed=self.options.spatial_function_list, dialect=kb)

    def _spatial(self, question: str, schema: DatabaseSchema) -> tuple[str, str]:
        """(system preamble, spatial functions section) for this question."""
        preamble, text = self._spatial_knowledge(question, schema)
        if not preamble:
            return expert_line(dialect_of(schema)), ""
        return preamble, section("spatial_section", functions=text)

    def _schema_text(self, full: DatabaseSchema, selected: DatabaseSchema) -> str:
        opts = self.options
        if opts.kg_schema:
            return render_kg_schema(selected, RenderOptions(value_examples=opts.value_examples,
                                                            geo_descriptions=opts.geo))
        from kgsql.retrieve.budget import render_ddl

        text = render_ddl(full)
        geo = render_geo_descriptions(full) if opts.geo else ""
        return join_sections(text, section("geo_section", geo=geo))

    def _pick_examples(self, question: str, schema: DatabaseSchema, values: list[ValueHint], answer: Answer,
                       preliminary: str | None = None) -> list[Any]:
        """``options.shots`` pool examples for this question (none without a pool)."""
        if self.options.shots <= 0 or self.selector is None:
            return []
        from kgsql.fewshot.select import ExampleQuery

        query = ExampleQuery(question, schema, tuple(v.value for v in values), preliminary)
        picks = self.selector.select(query, self.options.shots)
        answer.examples = [e.id for e in picks]
        return picks

    def _examples_text(self, question: str, schema: DatabaseSchema, values: list[ValueHint], answer: Answer) -> str:
        """The kgsql prompt's examples: the fixed provider's pairs, else the pool's picks (SQL only)."""
        if self.examples is not None:
            pairs = list(self.examples(question, schema))
        else:
            picks = self._pick_examples(question, schema, values, answer)
            pairs = [(e.question, " ".join(e.sql.strip().rstrip(";").split())) for e in picks]
        return "\n\n".join(f"/* Answer the following: {q} */\n{sql.strip()}" for q, sql in pairs)

    # -- answering -----------------------------------------------------------
    def ask(self, question: str, db: str, evidence: str | None = None,
            history: Sequence[str] | None = None) -> Answer:
        """Answer ``question`` over database ``db``; never raises for model or SQL trouble:
        those end up in ``answer.error``. Bad input (empty question, unknown db) raises.

        ``history``: the earlier questions of a conversation, oldest first; the
        question is rewritten to stand alone before anything else (``answer.standalone``)."""
        question = check_question(question)
        earlier = [check_question(h) for h in history or []]
        t0 = time.perf_counter()
        full = self.schema(db)
        answer = Answer(question=question, db=db)
        trace = Trace()
        try:
            asked = self._standalone(question, earlier, trace)
            answer.standalone = asked if earlier else ""
            self._answer(asked, full, evidence, answer, trace)
        except KgsqlError as exc:  # LLM down, garbage output...: reported, not raised
            answer.error = str(exc)
        return answer.finish(trace, t0)

    def _standalone(self, question: str, history: list[str], trace: Trace) -> str:
        if not history:
            return question
        if not self.options.rewrite:
            return check_question(" ".join([*history, question]))
        from kgsql.generate.rewrite import QuestionRewriter

        return check_question(QuestionRewriter(self.lm).standalone(question, history, trace))

    def _answer(self, question: str, full: DatabaseSchema, user_evidence: str | None, answer: Answer,
                trace: Trace) -> None:
        opts = self.options
        if opts.question_format != "kgsql":
            self._answer_formatted(question, full, user_evidence, answer, trace)
            return
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
        prompt = SQLPrompt(context=context, dialect=label(dialect_of(full)),
                           evidence=evidence.text, examples=self._examples_text(question, full, values, answer))
        generator = SQLGenerator(self.lm, least_to_most=opts.least_to_most, max_tokens=opts.max_tokens)
        self._generate_and_correct(question, full, generator, prompt, answer, trace)

    # -- formatted prompts (baseline methods) --------------------------------
    @property
    def style(self) -> str:
        """The schema style of formatted prompts: ``schema_style``, else kg or code as ``kg_schema`` says."""
        return self.options.schema_style or ("kg" if self.options.kg_schema else "code")

    def _styled_schema(self, schema: DatabaseSchema) -> tuple[str, str]:
        """(schema text in the method's style, geographic descriptions shown apart from it)."""
        from kgsql.generate.styles import render_example_rows, render_schema

        opts, style = self.options, self.style
        if style == "kg":  # the unified schema carries its own geographic descriptions
            render = RenderOptions(value_examples=opts.value_examples, geo_descriptions=opts.geo)
            text = render_kg_schema(schema, render)
            return "\n".join(p for p in (text, render_example_rows(schema, opts.example_rows)) if p), ""
        text = render_schema(style, schema, example_rows=opts.example_rows)
        return text, render_geo_descriptions(schema) if opts.geo else ""

    def _shots(self, picks: list[Any]) -> tuple[Shot, ...]:
        """Picked examples as the format shows them (own schema in the target's style, CoT answers)."""
        from kgsql.generate.shots import make_shots

        opts = self.options
        if not picks:
            return ()
        return make_shots(picks, self.pool, organisation=opts.example_organisation, style=self.style,
                          example_rows=opts.example_rows, cot=self.autocot if opts.auto_cot else None)

    def _answer_formatted(self, question: str, full: DatabaseSchema, user_evidence: str | None, answer: Answer,
                          trace: Trace) -> None:
        """One formatted prompt (DAIL/SSpa, ACT-SQL chat, ...) -> SQL, with the same tips loop."""
        opts = self.options
        selected, values = self._select(full, question, answer)
        preamble, functions = self._spatial_knowledge(question, selected)
        if opts.sdbms and not preamble:
            preamble = expert_line(dialect_of(full))
        schema_text, geo = self._styled_schema(selected)
        answer.selected_schema = schema_text
        evidence = Evidence(text="", source="none")
        if opts.evidence or (user_evidence or "").strip():
            context: list[Message] = [
                {"role": "system", "content": preamble or expert_line(dialect_of(full))},
                {"role": "user", "content": join_sections(section("spatial_section", functions=functions),
                                                          fill("context", schema=join_sections(schema_text, geo)))},
            ]
            evidence = self._evidence(question, context, user_evidence, values, trace)
        answer.evidence, answer.evidence_source = evidence.text, evidence.source
        parts = PromptParts(question=question, schema=schema_text, system=preamble if opts.sdbms else "",
                            knowledge=functions, geo=geo, evidence=evidence.text, cot=opts.auto_cot)
        generator = FormattedSQLGenerator(self.lm, opts.question_format, max_tokens=opts.max_tokens)
        draft = self._draft_sql(question, parts, trace) if opts.preliminary_sql and opts.shots > 0 else None
        picks = self._pick_examples(question, full, values, answer, draft)
        parts = replace(parts, shots=self._shots(picks),
                        shots_per_question=bool(picks) and self.selector.per_question)
        self._generate_and_correct(question, full, generator, parts, answer, trace)

    def _draft_sql(self, question: str, parts: PromptParts, trace: Trace) -> str | None:
        """DAIL-SQL's preliminary prediction: a zero-shot answer whose skeleton steers selection."""
        from kgsql.sql.extract import extract_sql

        drafter = FormattedSQLGenerator(self.lm, self.options.question_format, max_tokens=self.options.max_tokens,
                                        step="draft_sql")
        raw, suffix = drafter.generate(parts, question, trace)
        try:
            return extract_sql(raw, prompt_suffix=suffix)
        except KgsqlError:
            return None

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

    def _generate_and_correct(self, question: str, schema: DatabaseSchema, generator: Any, prompt: Any,
                              answer: Answer, trace: Trace) -> None:
        """Generate, run, and regenerate with schema tips; ``generator.generate(prompt, question,
        trace, tips=...)`` returns (raw text, prompt suffix); ``generator.stepwise`` says whether the
        answer is the last query of the output."""
        from kgsql.correct import CheckContext, Tip, render_tips
        from kgsql.sql.extract import extract_sql

        opts = self.options
        tips: list[Tip] = []
        result: QueryResult | None = None
        error: str | None = None
        failed = ""  # the last candidate's text and problem, shown in the next round
        best: Candidate | None = None
        rounds = max(1, opts.max_rounds) if opts.tips else 1
        with CheckContext(schema, question, timeout_s=opts.timeout_s, max_rows=opts.max_rows) as ctx:
            for round_no in range(1, rounds + 1):
                tips_text = join_sections(failed, render_tips(tips)) if tips else ""
                raw, suffix = generator.generate(prompt, question, trace, tips=tips_text)
                answer.rounds = round_no
                try:
                    sql = extract_sql(raw, prompt_suffix=suffix, last=generator.stepwise)
                except KgsqlError as exc:
                    sql, result, error = "", None, str(exc)
                    new = [Tip("no_sql", "Answer with one SQL query only, in a ```sql block.")]
                else:
                    answer.candidates.append(sql)
                    result, error, new = self._check(ctx, sql, last=round_no == rounds)
                    candidate = Candidate(sql, result, error)
                    if best is None or candidate.rank >= best.rank:
                        best = candidate
                if opts.tip_kinds:
                    new = [t for t in new if t.kind in opts.tip_kinds]
                fresh = [t for t in new if t.text not in {x.text for x in tips}]
                if not opts.tips or not fresh:
                    break
                tips.extend(fresh)
                if opts.show_failed_query and sql:
                    problem = f"It failed: {error}" if error else "It returned no rows."
                    failed = fill("failed_query", sql=sql, problem=problem)
        answer.tips = [t.text for t in tips]
        if best is not None:
            answer.sql, result, error = best.sql, best.result, best.error
        answer.error = error
        if result is not None:
            answer.columns, answer.rows, answer.truncated = list(result.columns), list(result.rows), result.truncated

    def _check(self, ctx: Any, sql: str, *, last: bool):  # type: ignore[no-untyped-def]
        """Run the candidate on the question's CheckContext; return (result, error text, tips for the
        next round). See :func:`kgsql.correct.check_candidate`: the static name check runs first and its
        tips are used only when SQLite also rejects the query, so a static false positive never costs a
        round.
        """
        from kgsql.correct import check_candidate

        checked = check_candidate(ctx, sql, tips=self.options.tips, last=last)
        return checked.result, checked.error, checked.tips
