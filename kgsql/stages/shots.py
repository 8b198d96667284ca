"""The baselines' few-shot examples, as their papers pick and show them.

``PickShots`` chooses ``shots`` examples from the pool by a registered
selector and shows them in an organisation (``kgsql.generate.shots``):
DAIL-SQL's masked-question-similarity examples as SQL only, or ACT-SQL's
hybrid of ``static_shots`` fixed and the rest similar examples, each with its
own database's schema in the target's style and rows, answered with
auto-CoT. Unlike ``PickExamples`` (the default method's), it shows nothing
without a pool: the baselines were measured zero-shot without one.

``DraftSQL`` is DAIL-SQL's preliminary prediction: a zero-shot answer to the
same prompt whose SQL skeleton steers the ``dail`` selection.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgsql.errors import KgsqlError, UnknownNameError
from kgsql.generate.parts import Lasts
from kgsql.stages.generate import prompt_parts
from kgsql.stages.state import QuestionState


@dataclass
class PickShots:
    """``shots`` pool examples for the question, into ``state.shots`` in the chosen organisation."""

    pool: Any = None
    shots: int = 5
    selection: str = "masked-similarity"
    static_shots: int = 0  # ACT-SQL's fixed examples (``hybrid`` selection)
    organisation: str = "sql-only"  # "full": each example with its own database's schema
    auto_cot: bool = False  # answers are ACT-SQL's automatic chains of thought
    style: str = "code"  # the schema style of the examples' own schemas (the target's)
    example_rows: int = 0  # rows after each table of the examples' own schemas (the target's)
    encoder: Any = None
    name: str = "examples"
    _selector: Any = field(default=None, init=False, repr=False)
    _autocot: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from kgsql.fewshot.select import available_selectors
        from kgsql.generate.shots import ORGANISATIONS

        if self.selection not in available_selectors():
            raise UnknownNameError(f"unknown example selection '{self.selection}'; known: "
                                   + ", ".join(available_selectors()))
        if self.organisation not in ORGANISATIONS:
            raise UnknownNameError(f"unknown example organisation '{self.organisation}'; known: "
                                   + ", ".join(ORGANISATIONS))

    @property
    def selector(self) -> Any:
        """The pool's selector, built on first use (embedding a pool takes a while)."""
        if self._selector is None:
            from kgsql.fewshot.select import get_selector

            self._selector = get_selector(self.selection, self.pool, encoder=self.encoder,
                                          n_static=self.static_shots)
        return self._selector

    def _cot(self) -> Any:
        if not self.auto_cot:
            return None
        if self._autocot is None:
            from kgsql.fewshot.cot import AutoCoT

            self._autocot = AutoCoT(self.pool, self.encoder)
        return self._autocot

    def run(self, state: QuestionState) -> None:
        if self.shots <= 0 or self.pool is None:
            return
        from kgsql.fewshot.select import ExampleQuery
        from kgsql.generate.shots import make_shots

        query = ExampleQuery(state.question, state.full, tuple(v.value for v in state.values), state.draft_sql)
        picks = self.selector.select(query, self.shots)
        state.answer.examples = [e.id for e in picks]
        if not picks:
            return
        state.answer.example_source = "pool"
        state.shots = make_shots(picks, self.pool, organisation=self.organisation, style=self.style,
                                 example_rows=self.example_rows, cot=self._cot())
        state.lasting["shots"] = Lasts.QUESTION if self.selector.per_question else Lasts.RUN


@dataclass
class DraftSQL:
    """DAIL-SQL's preliminary SQL: the prompt so far, zero-shot, as the ``draft_sql`` step."""

    lm: object
    layout: str = "dail"
    cot: bool = False
    max_tokens: int = 512
    name: str = "draft"

    def run(self, state: QuestionState) -> None:
        from kgsql.generate.sqlgen import FormattedSQLGenerator
        from kgsql.sql.extract import extract_sql

        drafter = FormattedSQLGenerator(self.lm, self.layout, max_tokens=self.max_tokens,  # type: ignore[arg-type]
                                        step="draft_sql")
        raw, suffix = drafter.generate(prompt_parts(state, cot=self.cot), state.question, state.trace)
        try:
            state.draft_sql = extract_sql(raw, prompt_suffix=suffix)
        except KgsqlError:
            state.draft_sql = None
