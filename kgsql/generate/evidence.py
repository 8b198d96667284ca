"""Evidence generation, the KG paper's three LLM steps.

1. ``evidence_terms``: extract key terms (entities, attributes, conditions);
2. ``evidence_mapping``: map each term to normalised schema blocks: tables,
   columns, functions, value literals (from the value index), join
   conditions, ratios and comparisons;
3. ``evidence_summary``: one concise BIRD-style evidence sentence.

Small models often answer the question in the summary instead ("The number
of languages is 3.") or invent values ("semester_name is 'fall 2018'"); such
evidence misleads the SQL step more than none. So only definitions are kept
("<term> refers to ...", "... = ..."), and only those whose literals (quoted
strings, numbers) occur in the question, the schema context or the values
the value index found. When the summary keeps nothing, the mapping lines are
used the same way; when they keep nothing either, there is no evidence.

All three prompts start with the same context (the KG-based schema), so a
server with prompt-prefix caching reads the schema once per question.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from kgsql.llm.base import LM, Message
from kgsql.llm.trace import Trace
from kgsql.prompts.templates import bullet_list, fill, parse_bullets
from kgsql.retrieve.values import ValueMatch


@dataclass
class Evidence:
    text: str
    terms: list[str] = field(default_factory=list)
    mapping: list[str] = field(default_factory=list)
    source: str = "generated"  # generated | user | user+generated | none


def values_block(values: Sequence[ValueMatch]) -> str:
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


_LITERAL = re.compile(r"'([^']*)'|\"([^\"]*)\"|(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
#: Numbers evidence may use without the question naming them (percentages, flags, first/last).
_COMMON_NUMBERS = frozenset({"0", "1", "100", "1.0", "100.0"})
_DEFINITION = re.compile(r"\brefers?\s+to\b|\bmeans\b|=|\bstands\s+for\b", re.I)


def grounded(text: str, known: str) -> str:
    """The definitions in ``text`` whose literals all occur in ``known``, joined BIRD-style with "; "."""
    haystack = known.lower()
    kept = []
    for clause in re.split(r";\s*|\n+", text):
        clause = clause.strip().strip("-*• ").strip()
        if not clause or not _DEFINITION.search(clause):
            continue  # an answer, a restatement or chatter: not a definition
        ok = True
        for m in _LITERAL.finditer(clause):
            literal = next(g for g in m.groups() if g is not None).strip().lower()
            if not literal or literal in _COMMON_NUMBERS:
                continue
            pattern = re.escape(literal) if not literal[0].isalnum() else rf"(?<![\w.]){re.escape(literal)}(?![\w])"
            if not re.search(pattern, haystack):
                ok = False
                break
        if ok:
            kept.append(clause.rstrip("."))
    return "; ".join(kept)


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
        values: Sequence[ValueMatch] = (),
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
        known = "\n".join([question, *(m["content"] for m in context), *(v.value for v in values)])
        text = grounded(_first_sentence_block(summary), known) or grounded("\n".join(mapping), known)
        return Evidence(text=text, terms=terms, mapping=mapping)


def _with_task(context: list[Message], task: str) -> list[Message]:
    """Context messages with ``task`` appended to the last (user) message."""
    messages = [dict(m) for m in context]
    messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n\n" + task}
    return messages
