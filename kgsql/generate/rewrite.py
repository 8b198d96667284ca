"""Multi-turn questions made standalone (ACT-SQL §7.5), before single-turn text-to-SQL.

"Which of them are older than 20?" means nothing without "How many students
are there?". The whole conversation is numbered and sent to the LLM with a
few annotated rewrites (``knowledge/rewrite_examples.yaml``); it answers the
same numbered list with every question standalone, and the last one is
asked. The prompt is ACT-SQL's ``get_prompt_remove_dependency`` (chat form).

A question without history is returned as is, without a model call; when
the answer cannot be parsed the question is asked as it was.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Sequence

import yaml

from kgsql.errors import InputError
from kgsql.llm.base import LM, Message

__all__ = ["RewriteExample", "QuestionRewriter", "load_rewrite_examples", "numbered", "parse_numbered",
           "REWRITE_SYSTEM"]

REWRITE_SYSTEM = "Given the list of questions, you need to rewrite them to remove the context dependency."
_NUMBERED = re.compile(r"^\s*(\d+)\s*[.)]\s*(.+?)\s*$")


@dataclass(frozen=True)
class RewriteExample:
    """One annotated conversation: the questions as asked, and standalone."""

    multiturn: tuple[str, ...]
    standalone: tuple[str, ...]


def load_rewrite_examples(path: str | None = None) -> list[RewriteExample]:
    """The shipped examples (or a YAML file of the same shape)."""
    if path is None:
        text = (resources.files("kgsql.generate") / "rewrite_examples.yaml").read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    data = yaml.safe_load(text) or {}
    out = []
    for i, item in enumerate(data.get("examples", [])):
        multi, alone = tuple(item.get("multiturn", [])), tuple(item.get("standalone", []))
        if not multi or len(multi) != len(alone):
            raise InputError(f"rewrite example {i}: multiturn and standalone need the same number of questions")
        out.append(RewriteExample(multi, alone))
    return out


def numbered(questions: Sequence[str]) -> str:
    """``1. q1\\n2. q2`` (ACT-SQL's ``preprocess``)."""
    return "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1)).strip()


def parse_numbered(text: str, count: int) -> list[str] | None:
    """The ``count`` numbered questions of a model answer, or None if they are not all there."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        m = _NUMBERED.match(line)
        if m and 1 <= int(m.group(1)) <= count:
            found.setdefault(int(m.group(1)), m.group(2))
    if len(found) != count:
        return None
    return [found[i] for i in range(1, count + 1)]


class QuestionRewriter:
    """Rewrites conversations into standalone questions with an injected LM."""

    def __init__(self, lm: LM, examples: Sequence[RewriteExample] | None = None, *, max_tokens: int = 512) -> None:
        self.lm = lm
        self.examples = list(examples) if examples is not None else load_rewrite_examples()
        self.max_tokens = max_tokens

    def messages(self, questions: Sequence[str]) -> list[Message]:
        msgs: list[Message] = [{"role": "system", "content": REWRITE_SYSTEM}]
        for ex in self.examples:
            msgs.append({"role": "user", "content": numbered(ex.multiturn)})
            msgs.append({"role": "assistant", "content": numbered(ex.standalone)})
        msgs.append({"role": "user", "content": numbered(questions)})
        return msgs

    def rewrite(self, questions: Sequence[str], trace: Any = None) -> list[str]:
        """Every question of the conversation, standalone (unchanged ones where parsing fails)."""
        qs = [" ".join(q.split()) for q in questions if q and q.strip()]
        if len(qs) <= 1:
            return qs
        messages = self.messages(qs)
        if trace is not None:
            text = trace.call(self.lm, "rewrite", messages, max_tokens=self.max_tokens)
        else:
            text = self.lm.complete(messages, step="rewrite", max_tokens=self.max_tokens).text
        parsed = parse_numbered(text, len(qs))
        if parsed is not None:
            return parsed
        last = parse_numbered_last(text, len(qs))
        return qs[:-1] + [last or qs[-1]]

    def standalone(self, question: str, history: Sequence[str] = (), trace: Any = None) -> str:
        """``question`` rewritten to stand alone given the earlier ``history`` questions."""
        if not history:
            return question
        return self.rewrite([*history, question], trace)[-1]


def parse_numbered_last(text: str, count: int) -> str | None:
    """Just the item numbered ``count`` (a model that dropped earlier items still helps)."""
    for line in text.splitlines():
        m = _NUMBERED.match(line)
        if m and int(m.group(1)) == count:
            return m.group(2)
    return None
