"""The last stage of the default method: a question the database cannot answer gets a refusal, not SQL.

It reads only what the earlier stages left (the queries tried, the retrieval's word support and value
matches: :func:`kgsql.generate.refusal.apply_refusal`), so an answerable question costs no extra call.
"""
from __future__ import annotations

from dataclasses import dataclass

from kgsql.generate.refusal import apply_refusal
from kgsql.stages.state import QuestionState


@dataclass
class Refuse:
    """Replace the answer by "cannot answer: ... (closest: ...)" when it asks for what the schema lacks."""

    words: bool = False  # also when a question word names nothing in the schema (retrieval's word support)
    unsure_words: bool = True  # ... when the answer has no rows or its readings doubt it
    name: str = "refuse"

    def run(self, state: QuestionState) -> None:
        apply_refusal(state.answer, state.full, question=state.question, words_signal=self.words,
                      unsure_words=self.unsure_words)
