"""How a follow-up question is read with the earlier turns of its conversation (``--set context=...``).

* ``history`` (the default of ``kgsql`` since session 19, measured on SParC in
  docs/eval.md): the standard in-context baseline. The question goes in as
  asked, after a "Previous questions and queries" section holding the earlier
  questions and the SQL answered for each (:class:`PreviousTurns`; the newest
  turns that fit ``MAX_HISTORY_TOKENS``); retrieval reads the earlier questions
  too, since a follow-up like "only those older than 30" names no table.
* ``rewrite``: ACT-SQL's rewrite of the follow-up to stand alone (one more
  model call, ``kgsql.generate.rewrite``; ``rewrite=false`` joins the
  questions instead), then the method as for a single question.
* ``none``: the earlier turns are ignored, so each turn is asked alone (a floor
  to measure the other two against).

The SQL of an earlier turn is what the method itself answered for it: a live
conversation keeps it (``kgsql.conversation``) and an evaluation passes its own
earlier predictions forward (``kgsql.eval.runner``), never the gold SQL, which
would leak the answer. A question without earlier turns gets the same prompt
under every context.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from kgsql.errors import InputError
from kgsql.llm.base import estimate_tokens
from kgsql.stages.state import QuestionState

CONTEXTS = ("rewrite", "history", "none")
#: The "Previous questions and queries" part's budget (~4 characters a token): the oldest turns go first.
MAX_HISTORY_TOKENS = 1500
HISTORY = "history"  # the context whose methods want the earlier turns' SQL


def check_context(value: str) -> None:
    """Refuse a context that does not exist (one line naming the known ones)."""
    if value not in CONTEXTS:
        raise InputError(f"context '{value}': expected one of {', '.join(CONTEXTS)}")


def earlier_turns(history: Sequence[str], history_sql: Sequence[str | None] | None) -> list[tuple[str, str]]:
    """(question, SQL) of each earlier turn, oldest first; "" where no SQL was answered (or none given)."""
    sqls = list(history_sql or [])
    return [(question, str(sqls[i] or "").strip() if i < len(sqls) else "") for i, question in enumerate(history)]


def previous_text(turns: Sequence[tuple[str, str]], max_tokens: int = MAX_HISTORY_TOKENS) -> str:
    """The section's body: ``Question 1: ...`` then ``SQL 1: ...`` per turn (no SQL line where none was
    answered), for the newest turns that fit ``max_tokens`` (the latest always: a long earlier SQL must not
    push the schema out of the model's context); numbered from the oldest kept."""
    kept: list[tuple[str, str]] = []
    for turn in reversed(turns):
        if kept and estimate_tokens(_lines([turn, *kept])) > max_tokens:
            break
        kept.insert(0, turn)
    return _lines(kept)


def _lines(turns: Sequence[tuple[str, str]]) -> str:
    lines: list[str] = []
    for i, (question, sql) in enumerate(turns, 1):
        lines.append(f"Question {i}: {question}")
        if sql:
            lines.append(f"SQL {i}: {sql}")
    return "\n".join(lines)


@dataclass
class PreviousTurns:
    """Writes the prompt's "Previous questions and queries" part from the state's earlier turns."""

    name: str = "context"

    def run(self, state: QuestionState) -> None:
        state.history = previous_text(state.earlier)
