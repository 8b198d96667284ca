"""One question on its way through a staged method: what each stage reads and adds.

A staged method (``kgsql.stages.method.StagedMethod``) runs its stages in
order over one ``QuestionState``; a stage reads what earlier stages wrote
(the selected schema, value matches, hints, examples) and adds its own part.
Nothing here calls a model or a database.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kgsql.generate.parts import Lasts, Shot
from kgsql.llm.trace import Trace
from kgsql.retrieve.values import ValueMatch
from kgsql.schema.model import DatabaseSchema


@dataclass
class QuestionState:
    """The blackboard of one question; ``answer`` (a ``generate.answer.Answer``) is filled last."""

    question: str
    db: str
    full: DatabaseSchema
    answer: Any
    trace: Trace = field(default_factory=Trace)
    user_evidence: str = ""
    schema: DatabaseSchema | None = None       # what the prompt shows (the selection or the whole database)
    focus_tables: list[str] = field(default_factory=list)  # tables retrieval found relevant
    values: list[ValueMatch] = field(default_factory=list)
    schema_text: str = ""
    system: str = ""                            # the system message (SQLite/SpatiaLite expert)
    functions: str = ""                         # spatial function notes for this question
    geo: str = ""                               # geographic descriptions of the tables
    hints: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)  # (question, SQL)
    lasting: dict[str, Lasts] = field(default_factory=dict)  # part -> how long the stage's choice lasts (cache)
    lead_examples: list[tuple[str, str]] = field(default_factory=list)  # the same for every question: shown first
    shots: tuple[Shot, ...] = ()                # examples as the baselines show them (own schemas, auto-CoT)
    draft_sql: str | None = None                # DAIL-SQL's preliminary SQL, which steers example selection
    earlier: list[tuple[str, str]] = field(default_factory=list)  # (question, SQL) of earlier turns (context=history)
    history: str = ""                           # the prompt's "Previous questions and queries" section

    @property
    def shown(self) -> DatabaseSchema:
        """The schema the prompt shows (the whole database until a stage selects)."""
        return self.schema if self.schema is not None else self.full


class Stage(Protocol):
    """One step of a staged method: reads and extends the state (may call the model)."""

    name: str

    def run(self, state: QuestionState) -> None: ...
