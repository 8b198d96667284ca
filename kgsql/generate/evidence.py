"""Evidence generation, the KG paper's three LLM steps.

1. ``evidence_terms``: extract key terms (entities, attributes, conditions);
2. ``evidence_mapping``: map each term to normalised schema blocks: tables,
   columns, functions, value literals (from the value index), join
   conditions, ratios and comparisons;
3. ``evidence_summary``: one concise BIRD-style evidence sentence.

All three prompts start with the same context (the KG-based schema), so a
server with prompt-prefix caching reads the schema once per question.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from kgsql.generate.templates import bullet_list, fill, parse_bullets
from kgsql.generate.trace import Trace
from kgsql.llm.base import LM, Message


@dataclass(frozen=True)
class ValueHint:
    """A cell value the question mentions, found by the value index."""

    table: str
    column: str
    value: str


@dataclass
class Evidence:
    text: str
    terms: list[str] = field(default_factory=list)
    mapping: list[str] = field(default_factory=list)
    source: str = "generated"  # generated | user | user+generated | none


def values_block(values: Sequence[ValueHint]) -> str:
    if not values:
        return ""
    lines = [f"- '{v.value}' is a value of {v.table}.{v.column}" for v in values]
    return "\n### Values found in the database\n" + "\n".join(lines) + "\n"


def _first_sentence_block(text: str) -> str:
    """The summary step's answer without chatter: its first non-empty paragraph.

    Small models sometimes echo the instruction instead of answering; such an
    echo (or an "Evidence:" label) is not evidence and is dropped.
    """
    for para in text.strip().split("\n\n"):
        para = " ".join(line.strip() for line in para.strip().splitlines()).strip().strip('"')
        para = re.sub(r"^(?:#+\s*)?(?:evidence|answer)\s*:\s*", "", para, flags=re.I)
        if para and not _is_echo(para):
            return para
    return ""


def _is_echo(text: str) -> bool:
    squashed = re.sub(r"[^a-z]", "", text.lower())
    return squashed in {"writeonlytheevidencesentence", "theevidencesentenceonly", "evidencesentence"}


class EvidenceGenerator:
    """Writes BIRD-style evidence for a question from the KG-based schema."""

    def __init__(self, lm: LM, *, max_tokens: int = 256):
        self.lm = lm
        self.max_tokens = max_tokens

    def generate(
        self,
        question: str,
        context: list[Message],
        trace: Trace,
        *,
        values: Sequence[ValueHint] = (),
    ) -> Evidence:
        """``context`` is the shared prompt prefix (system + schema) as chat messages."""
        terms_text = trace.call(
            self.lm, "evidence_terms",
            _with_task(context, fill("evidence_terms", question=question)),
            max_tokens=self.max_tokens,
        )
        terms = parse_bullets(terms_text)
        mapping_text = trace.call(
            self.lm, "evidence_mapping",
            _with_task(context, fill("evidence_mapping", question=question, terms=bullet_list(terms),
                                     values=values_block(values))),
            max_tokens=self.max_tokens,
        )
        mapping = parse_bullets(mapping_text, limit=20)
        summary = trace.call(
            self.lm, "evidence_summary",
            _with_task(context, fill("evidence_summary", question=question, mapping=bullet_list(mapping))),
            max_tokens=self.max_tokens,
        )
        return Evidence(text=_first_sentence_block(summary), terms=terms, mapping=mapping)


def _with_task(context: list[Message], task: str) -> list[Message]:
    """Context messages with ``task`` appended to the last (user) message."""
    messages = [dict(m) for m in context]
    messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n\n" + task}
    return messages
