"""One conversation over one database: its earlier turns, and ``ask`` that answers in their context.

    conv = Conversation.start(graph, "geo")          # or Conversation(method, "geo")
    conv.ask("Which cities are in Eastvale?")
    conv.ask("Only those with more than 100000 people")   # rewritten to stand alone first
    conv.turns; conv.reset()

What goes to the method as ``history`` is the user's own earlier questions, oldest
first: the rewriter (ACT-SQL's) is shown the conversation as asked, not its own
earlier rewrites. A method that reads the earlier turns' SQL too
(``context=history``) also gets ``history_sql``, the SQL each turn was answered
with ("" where it failed). A turn whose answer failed is kept too: the user's words
still set the context of the next question (an answer that failed usually
means the SQL was wrong, not the question). A question refused before any
work (empty, too long) is not a turn. Only the last ``max_turns`` are kept:
older ones are dropped first, so a long conversation keeps the rewrite
prompt bounded.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from kgsql.errors import InputError

DEFAULT_MAX_TURNS = 6  # earlier questions a follow-up is read with (older ones are dropped)


@dataclass(frozen=True)
class Turn:
    """A question as asked, as it was understood (rewritten to stand alone), and what it was answered with:
    the SQL, its error, and how many rows it showed."""

    question: str
    standalone: str
    sql: str = ""
    error: str | None = None
    rows: int | None = None  # how many rows the answer showed (None: it has none: no SQL, or it failed)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "Turn":
        """A turn read back from JSON (a saved conversation); anything else is one InputError."""
        if not isinstance(data, Mapping) or not isinstance(data.get("question"), str) or not data["question"].strip():
            raise InputError("a conversation turn needs a 'question' string")
        error, rows = data.get("error"), data.get("rows")
        return cls(question=data["question"], standalone=str(data.get("standalone") or data["question"]),
                   sql=str(data.get("sql") or ""), error=None if error is None else str(error),
                   rows=rows if isinstance(rows, int) and not isinstance(rows, bool) and rows >= 0 else None)


class Conversation:
    """The earlier turns of one conversation over ``db``, and (given a method) ``ask`` in their context."""

    def __init__(self, method: Any = None, db: str = "", *, max_turns: int = DEFAULT_MAX_TURNS,
                 turns: Iterable[Turn] = ()) -> None:
        if not isinstance(db, str) or not db.strip():
            raise InputError("a conversation needs a database name")
        if not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1:
            raise InputError(f"max_turns must be a whole number of at least 1, not {max_turns!r}")
        self.method = method
        self.db = db
        self.max_turns = max_turns
        self._turns: list[Turn] = list(turns)[-max_turns:]

    @classmethod
    def start(cls, graph: Any, db: str, *, method: str = "kgsql", lm: Any = None,
              max_turns: int = DEFAULT_MAX_TURNS, **options: Any) -> "Conversation":
        """A new conversation over ``db`` answered by the named method (``options`` as ``methods.build``
        takes them; ``lm``: the configured or local model when None)."""
        from kgsql.methods import build

        if lm is None:
            from kgsql.llm.factory import default_lm

            lm = default_lm()
        graph.database_info(db)  # an unknown database fails here, not on the first question
        return cls(build(method, graph, lm, **options), db, max_turns=max_turns)

    @property
    def turns(self) -> list[Turn]:
        """The turns kept, oldest first (a copy)."""
        return list(self._turns)

    @property
    def history(self) -> list[str]:
        """What the next question is read with: the earlier questions as asked, oldest first."""
        return [t.question for t in self._turns]

    @property
    def history_sql(self) -> list[str]:
        """The SQL each earlier turn was answered with, oldest first ("" where it failed)."""
        return [t.sql for t in self._turns]

    def context_for(self, method: Any) -> dict[str, Any]:
        """The keyword arguments that carry this conversation to ``method.ask``: the earlier questions, and
        their SQL when the method reads it (``wants_history_sql``); nothing before the first turn."""
        if not self._turns:
            return {"history": None}
        if getattr(method, "wants_history_sql", False):
            return {"history": self.history, "history_sql": self.history_sql}
        return {"history": self.history}

    def ask(self, question: str, evidence: str | None = None) -> Any:
        """Answer ``question`` in the context of the earlier turns, and keep it as the latest turn."""
        if self.method is None:
            raise InputError("this conversation has no method to ask (Conversation.start builds one)")
        answer = self.method.ask(question, db=self.db, evidence=evidence, **self.context_for(self.method))
        self.record(question, answer)
        return answer

    def record(self, question: str, answer: Any) -> Turn:
        """Keep ``question`` and its answer (an ``Answer`` or its dict, as the service sends it) as a turn."""
        get = answer.get if isinstance(answer, Mapping) else (lambda key: getattr(answer, key, None))
        asked = " ".join(str(question).split())
        sql, error = get("sql") or "", get("error")
        turn = Turn(question=asked, standalone=get("standalone") or asked, sql=sql, error=error,
                    rows=len(get("rows") or []) if sql and not error else None)
        self._turns = [*self._turns, turn][-self.max_turns:]
        return turn

    def reset(self) -> None:
        """Forget every earlier turn: the next question starts the conversation anew."""
        self._turns = []

    def to_dict(self) -> dict[str, Any]:
        return {"db": self.db, "turns": [t.to_dict() for t in self._turns]}

    def __len__(self) -> int:
        return len(self._turns)

    def __repr__(self) -> str:
        last = f", last={self._turns[-1].question!r}" if self._turns else ""
        return f"Conversation(db={self.db!r}, turns={len(self._turns)}{last})"
