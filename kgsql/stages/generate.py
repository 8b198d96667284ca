"""The SQL stage: one prompt, one call, and the correction loop when the answer fails.

The prompt is a question format (``kgsql.generate.formats``): ``schema-first``
puts what is stable for a database first so a prefix-caching server reads
the schema once per database; ``dail`` is DAIL-SQL's order (examples first),
``chat`` ACT-SQL's. Every method's SQL goes through the one correction loop
(``kgsql.correct.loop``); the baselines run it as they were published
(``tip_rounds``, no repairs).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kgsql.correct import CheckContext
from kgsql.correct.loop import CorrectionLoop, Generator, LoopOptions, Rewrites
from kgsql.generate.formats import PromptParts, Shot, available_formats
from kgsql.generate.sqlgen import FormattedSQLGenerator
from kgsql.errors import UnknownNameError
from kgsql.stages.state import QuestionState


def tip_rounds(*, correction: bool, max_rounds: int, tip_kinds: tuple[str, ...] = (),
               show_failed_query: bool = True) -> LoopOptions:
    """The baselines' correction: schema-tip rounds only, no repairs, rewrites or samples, so their
    prompts and answers stay those of the papers (and of the first pipeline)."""
    return LoopOptions(max_rounds=max_rounds, samples=0, correction=correction, tip_kinds=tip_kinds,
                       show_failed_query=show_failed_query, tip_rounds=True, **Rewrites.none())


def prompt_parts(state: QuestionState, *, cot: bool = False) -> PromptParts:
    """Everything the state holds for the prompt, as a question format's parts."""
    return PromptParts(
        question=state.question, schema=state.schema_text, system=state.system,
        shots=state.shots + tuple(Shot(q, sql) for q, sql in state.examples), functions=state.functions,
        geo=state.geo, lead_shots=tuple(Shot(q, sql) for q, sql in state.lead_examples),
        hints="\n".join(state.hints), evidence=state.user_evidence, cot=cot,
        history=state.history, lasting=dict(state.lasting),
    )


def correct_into(state: QuestionState, generator: Generator, prompt: Any, loop: LoopOptions, *,
                 timeout_s: float, max_rows: int) -> None:
    """Runs the correction loop for ``prompt`` and writes its outcome into ``state.answer``."""
    shown = [t.name for t in state.schema.tables] if state.schema is not None else []
    with CheckContext(state.full, state.question, timeout_s=timeout_s, max_rows=max_rows,
                      evidence=state.answer.evidence, shown_tables=shown) as ctx:
        result = CorrectionLoop(generator, loop).run(prompt, state.question, ctx, state.trace)
    answer = state.answer
    answer.rounds = result.rounds
    answer.repaired = result.repaired
    answer.candidates = list(result.candidates)
    answer.tips = [t.text for t in result.tips]
    answer.error = result.error
    answer.opinions = [o.to_dict() for o in result.opinions]
    answer.least_sure = result.least_sure.to_dict() if result.least_sure is not None else {}
    best = result.best
    if best is not None:
        answer.sql = best.sql
        if best.result is not None:
            answer.columns, answer.rows = list(best.result.columns), list(best.result.rows)
            answer.truncated = best.result.truncated


@dataclass
class GenerateSQL:
    """Writes the SQL with ``layout``'s prompt and corrects it by execution (``kgsql.correct.loop``)."""

    lm: object
    layout: str = "schema-first"
    loop: LoopOptions = LoopOptions()
    max_tokens: int = 512
    timeout_s: float = 30.0
    max_rows: int = 1000
    cot: bool = False  # the examples answer with chains of thought (ACT-SQL's auto-CoT): shapes the ending
    spatial_samples: int | None = None  # on a spatial database, ``loop.samples`` replaced by this (None: kept)
    logprobs: bool = False  # ask for the tokens' log-probabilities: the answer's least sure name (correct.confidence)
    name: str = "sql"

    def __post_init__(self) -> None:
        if self.layout not in available_formats():
            raise UnknownNameError(f"unknown prompt layout '{self.layout}'; known: {', '.join(available_formats())}")

    def run(self, state: QuestionState) -> None:
        generator = FormattedSQLGenerator(self.lm, self.layout, max_tokens=self.max_tokens,  # type: ignore[arg-type]
                                          logprobs=self.logprobs)
        correct_into(state, generator, prompt_parts(state, cot=self.cot), self.loop_for(state),
                     timeout_s=self.timeout_s, max_rows=self.max_rows)

    def loop_for(self, state: QuestionState) -> LoopOptions:
        """The loop's options for this question's database: more sampled candidates on a spatial one,
        where a 1.5B's first query fails or returns nothing far more often (docs/eval.md, session 21)."""
        if self.spatial_samples is None or not state.full.is_spatial:
            return self.loop
        return replace(self.loop, samples=self.spatial_samples)
