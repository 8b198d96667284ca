"""Few-shot examples: the pool's questions most like this one, shown with their SQL only.

DAIL-SQL's finding, and ours with small local models: similar (question, SQL)
pairs in the same form as the final question are the cheapest accuracy there
is. Without a pool the method runs zero-shot.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgsql.stages.state import QuestionState


@dataclass
class PickExamples:
    """``shots`` examples from ``pool`` by a registered selector (``kgsql.fewshot.select``)."""

    pool: Any = None
    shots: int = 5
    selection: str = "masked-similarity"
    encoder: Any = None
    name: str = "examples"
    _selector: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from kgsql.fewshot.select import available_selectors
        from kgsql.errors import UnknownNameError

        if self.selection not in available_selectors():
            raise UnknownNameError(f"unknown example selection '{self.selection}'; known: "
                                   + ", ".join(available_selectors()))

    @property
    def selector(self) -> Any:
        if self._selector is None and self.pool is not None:
            from kgsql.fewshot.select import get_selector

            self._selector = get_selector(self.selection, self.pool, encoder=self.encoder)
        return self._selector

    def run(self, state: QuestionState) -> None:
        if self.shots <= 0 or self.selector is None:
            return
        from kgsql.fewshot.select import ExampleQuery

        query = ExampleQuery(state.question, state.full, tuple(v.value for v in state.values))
        picks = self.selector.select(query, self.shots)
        state.answer.examples = [e.id for e in picks]
        state.examples = [(e.question, " ".join(e.sql.strip().rstrip(";").split())) for e in picks]
