"""A method as a composition of stages, and kgsql's default one-call method.

    from kgsql.stages import OneCallOptions, StagedMethod
    method = StagedMethod.one_call(graph, lm, OneCallOptions(shots=3), pool=pool)
    method.ask("How many singers do we have?", db="concert_singer")

``OneCallOptions`` is the knob surface users set (``--set key=value``); each
field belongs to one stage, and ``one_call_stages`` hands each stage its
group. The stages (retrieval, spatial notes, schema text, evidence, examples,
graph hints, SQL with correction) each live in their own module.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kgsql.correct.loop import LoopOptions, Rewrites
from kgsql.errors import KgsqlError
from kgsql.generate.answer import Answer, check_question
from kgsql.generate.render import identifier_quoting
from kgsql.generate.review import review
from kgsql.schema.sources import GraphSchemas
from kgsql.stages.context import HISTORY, PreviousTurns, earlier_turns
from kgsql.stages.evidence import GatherEvidence
from kgsql.stages.examples import PickExamples
from kgsql.stages.generate import GenerateSQL
from kgsql.stages.hints import GraphHints
from kgsql.stages.options import check_options
from kgsql.stages.refuse import Refuse
from kgsql.stages.schema import RenderSchema, SelectSchema, SpatialNotes, WholeDatabase
from kgsql.sql.dialects import dialect_of
from kgsql.stages.state import QuestionState, Stage


@dataclass(frozen=True)
class OneCallOptions(Rewrites):
    """kgsql's default method, one field per decision (the stage that reads it in brackets); the loop's
    rewrite switches are inherited from :class:`~kgsql.correct.loop.Rewrites`."""

    knowledge: bool = True           # [select] what was mined from past questions (ingest --history)
    scope: str = "database"          # [select] "database": whole schema (cached prefix); "selected": pruned
    max_schema_tokens: int = 3000    # [select] "database" only up to this size; a bigger schema shows the selection
    schema_style: str = "code-knowledge"  # [render] a kgsql.generate.styles name (descriptions, value meanings)
    value_examples: int = 3          # [render] per column, kg style only
    geo: bool = True                 # [render] geographic descriptions of the tables
    sdbms: bool = True               # [spatial] SpatiaLite preamble + this question's functions
    spatial_functions: int = 6       # [spatial]
    spatial_choice: str = "database"  # [spatial, examples] functions, derived examples: once a database | "question"
    evidence: bool = False           # [evidence] LLM-written evidence (3 calls; off: it misleads small models)
    user_evidence: str = "add"       # [evidence] add | replace | ignore
    shots: int = 5                   # [examples] 0 = zero-shot (also without a pool)
    example_selection: str = "typical"  # [examples] the same for every question: cached (issue 12, docs/eval.md)
    spatial_example_selection: str = "masked-similarity"  # [examples] on spatial databases ("": as above)
    example_questions: bool = True   # [examples] False: each example's SQL only (about half the tokens)
    derived_examples: bool = False   # [examples] a spatial database's derived examples join a given pool's
    derived_first: bool = True       # [examples] ... replace a pool holding none of the database's questions
    lead_shots: int = 0              # [examples] more examples the same for every question, first (read once)
    lead_selection: str = "typical"  # [examples] how the lead examples are chosen
    value_hints: bool = True         # [hints] values the question names -> their column
    join_hints: bool = True          # [hints] key conditions joining the relevant tables
    spatial_join_hints: bool = False  # [hints] ... on a spatial database too (off: they lured, session 20)
    key_hints: bool = False          # [hints] a key the question names by its concept -> its join and label
    meaning_hints: bool = True       # [hints] a coded column whose documented meaning the question uses
    spatial_hints: bool = True       # [hints] how the relevant geometry tables relate by location (Within, ...)
    layout: str = "shared-first"     # [sql] question format: shared-first / schema-first (cache-friendly) or dail
    correction: bool = True          # [sql] run, check and correct (False: one call, no checks; was `tips`)
    max_rounds: int = 3              # [sql] greedy generations at most
    samples: int = 0                 # [sql] sampled candidates voted by result when nothing returned rows
    spatial_samples: int = 1         # [sql] ... on a spatial database (200 spatial questions, sessions 21 and 26)
    temperature: float = 0.7         # [sql] for the sampled candidates
    opinions: int = 0                # [sql] readings sampled after an answer with rows to check it (other-reading)
    opinions_below: float = 1.0      # [sql] ... only where the model's least sure name was below this probability
    logprobs: bool = True            # [sql] ask for the tokens' log-probabilities (the least sure name; same call)
    max_tokens: int = 256            # [sql]
    timeout_s: float = 30.0          # [sql]
    max_rows: int = 1000             # [sql]
    rewrite: bool = True             # conversations: rewrite the question to stand alone (False: join them)
    context: str = "history"         # [context] a follow-up's earlier turns: rewrite | history | none
    refuse: bool = True              # [refuse] "cannot answer" when a query reaches for what the schema lacks
    refuse_words: bool = False       # [refuse] also for a question word no schema element matches (noisy on BIRD)
    refuse_unsure_words: bool = True  # [refuse] ... where the answer has no rows or its readings doubt it

    def __post_init__(self) -> None:
        check_options(self)


def one_call_stages(options: OneCallOptions, lm: Any, retriever: Callable[[], Any], *, pool: Any = None,
                    graph_examples: Callable[[str], Any] | None = None, fallback_pool: Any = None,
                    encoder: Any = None) -> list[Stage]:
    """The default method's stages, in order, each with its own option group.

    Examples come from ``pool``, else the database's taught ``graph_examples``, else ``fallback_pool``."""
    o = options
    loop = LoopOptions(max_rounds=o.max_rounds, samples=o.samples, temperature=o.temperature, correction=o.correction,
                       opinions=o.opinions, opinions_below=o.opinions_below, **o.switches())
    needs_retrieval = o.scope != "database" or o.value_hints or o.join_hints or o.spatial_hints
    once_per_database = o.spatial_choice == "database"  # a spatial database's notes and derived examples
    return [
        SelectSchema(retriever, scope=o.scope, max_schema_tokens=o.max_schema_tokens) if needs_retrieval
        else WholeDatabase(),
        SpatialNotes(functions=o.spatial_functions, enabled=o.sdbms, per_database=once_per_database),
        RenderSchema(style=o.schema_style, value_examples=o.value_examples, geo=o.geo),
        GatherEvidence(lm, generate=o.evidence, user=o.user_evidence),
        PickExamples(pool, shots=o.lead_shots, selection=o.lead_selection, encoder=encoder,
                     graph_examples=graph_examples, lead=True, name="lead-examples"),
        PickExamples(pool, shots=o.shots, selection=o.example_selection, encoder=encoder,
                     graph_examples=graph_examples, fallback=fallback_pool, questions=o.example_questions,
                     spatial_selection=o.spatial_example_selection, derived_too=o.derived_examples,
                     derived_first=o.derived_first, per_database=once_per_database),
        GraphHints(values=o.value_hints, joins=o.join_hints, spatial_joins=o.spatial_join_hints, keys=o.key_hints,
                   meanings=o.meaning_hints, spatial=o.spatial_hints),
        *([PreviousTurns()] if o.context == HISTORY else []),
        GenerateSQL(lm, layout=o.layout, loop=loop, max_tokens=o.max_tokens, timeout_s=o.timeout_s,
                    max_rows=o.max_rows, spatial_samples=o.spatial_samples, logprobs=o.logprobs),
        *([Refuse(words=o.refuse_words, unsure_words=o.refuse_unsure_words)] if o.refuse else []),
    ]


class StagedMethod:
    """Answers questions by running ``stages`` over one ``QuestionState`` each."""

    def __init__(self, graph: Any, lm: Any, stages: Sequence[Stage], *, options: Any = None,
                 rewrite: bool = True, context: str = "rewrite", follow_ingest: bool = False) -> None:
        self.graph = graph
        self.lm = lm
        self.stages = list(stages)
        self.options = options
        self.rewrite = rewrite
        self.context = context  # how a follow-up's earlier turns are read (kgsql.stages.context)
        # each database read from the graph once (again after a re-ingest with follow_ingest: the service)
        self.schemas = GraphSchemas(graph, knowledge=getattr(options, "knowledge", True), follow_ingest=follow_ingest)

    @classmethod
    def one_call(cls, graph: Any, lm: Any, options: OneCallOptions = OneCallOptions(), *, pool: Any = None,
                 fallback_pool: Any = None, retriever: Any = None, encoder: Any = None,
                 follow_ingest: bool = False) -> "StagedMethod":
        """kgsql's default method; ``retriever`` (else the default one, built on first use).

        Examples: ``pool``; without one, the database's taught examples, else ``fallback_pool``."""
        from kgsql.retrieve.lazy import lazy_retriever

        get_retriever = lazy_retriever(retriever, encoder, getattr(graph, "vector_stage", None))
        taught = getattr(graph, "examples", None) if pool is None else None
        stages = one_call_stages(options, lm, get_retriever, pool=pool, encoder=encoder, graph_examples=taught,
                                 fallback_pool=fallback_pool if pool is None else None)
        return cls(graph, lm, stages, options=options, rewrite=options.rewrite, context=options.context,
                   follow_ingest=follow_ingest)

    def schema(self, db: str) -> Any:
        return self.schemas(db)

    @property
    def wants_history_sql(self) -> bool:
        """Whether a follow-up should come with the earlier turns' SQL (``history_sql``), not only their questions."""
        return self.context == HISTORY

    def __repr__(self) -> str:
        """One line a notebook shows: the stages in order, the model, the options changed from the default."""
        stages = ", ".join(getattr(s, "name", type(s).__name__) for s in self.stages)
        model = getattr(self.lm, "model", None) or type(self.lm).__name__
        changed = ""
        if dataclasses.is_dataclass(self.options):
            default = type(self.options)()
            diff = [f"{f.name}={getattr(self.options, f.name)!r}" for f in dataclasses.fields(self.options)
                    if getattr(self.options, f.name) != getattr(default, f.name)]
            changed = f", changed: {', '.join(diff)}" if diff else ", default options"
        return f"StagedMethod(stages=[{stages}], model={model!r}{changed})"

    def ask(self, question: str, db: str, evidence: str | None = None,
            history: Sequence[str] | None = None, history_sql: Sequence[str | None] | None = None) -> Answer:
        """Answer ``question`` over ``db``; model and SQL trouble end up in ``answer.error``.

        ``history``: the conversation's earlier questions, oldest first; ``history_sql``: the SQL answered
        for each (read only under ``context=history``)."""
        question = check_question(question)
        earlier = [check_question(h) for h in history or []]
        t0 = time.perf_counter()
        full = self.schema(db)
        answer = Answer(question=question, db=db)
        state = QuestionState(question=question, db=db, full=full, answer=answer, user_evidence=evidence or "")
        try:
            if earlier and self.context == HISTORY:
                state.earlier = earlier_turns(earlier, history_sql)
            elif earlier and self.context == "rewrite":
                state.question = self._standalone(question, earlier, state)
                answer.standalone = state.question
            with identifier_quoting(dialect_of(full)):  # names in prompts and hints as the database reads them
                for stage in self.stages:
                    stage.run(state)
        except KgsqlError as exc:  # LLM down, garbage output...: reported, not raised
            answer.error = str(exc)
        review(answer, full)  # explanation and flags, from the SQL and the graph: no model call
        return answer.finish(state.trace, t0)

    def _standalone(self, question: str, history: list[str], state: QuestionState) -> str:
        if not self.rewrite:
            return check_question(" ".join([*history, question]))
        from kgsql.generate.rewrite import QuestionRewriter

        return check_question(QuestionRewriter(self.lm).standalone(question, history, state.trace))
