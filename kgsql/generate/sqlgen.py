"""SQL generation: least-to-most (decompose, then solve in order) or direct.

Least-to-most costs two calls per question: one decomposes the question into
sub-questions (simplest first, the question itself last), one solves them in
order and writes the final SQL. The decomposition is made once; correction
rounds only repeat the second call with the schema tips added.

The direct form is SSpa/DAIL's "Answer the following with no explanation:
<question>\\nSELECT", whose completion continues the SELECT.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kgsql.generate.formats import PromptParts, format_prompt
from kgsql.llm.base import LM, Message
from kgsql.llm.trace import Trace
from kgsql.prompts.templates import bullet_list, fill, join_sections, parse_bullets, section


@dataclass
class SQLPrompt:
    """The parts of one SQL-generation prompt, in prompt order."""

    context: list[Message]  # system + the shared schema context (cache-friendly prefix)
    dialect: str = "SQLite"
    evidence: str = ""
    examples: str = ""


def _user_task(prompt: SQLPrompt, question: str, tips: str, tail: str) -> list[Message]:
    body = join_sections(
        fill("sql_instructions", dialect=prompt.dialect),
        section("evidence_section", evidence=prompt.evidence),
        section("examples_section", examples=prompt.examples),
        section("tips_section", tips=tips),
        tail,
    )
    messages = [dict(m) for m in prompt.context]
    messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n\n" + body}
    return messages


class SQLGenerator:
    """Turns a prompt and the question into candidate SQL text (not yet extracted)."""

    def __init__(self, lm: LM, *, least_to_most: bool = True, max_tokens: int = 512):
        self.lm = lm
        self.least_to_most = least_to_most
        self.max_tokens = max_tokens
        self.subquestions: list[str] = []

    @property
    def stepwise(self) -> bool:
        """Solving sub-questions in order writes one query per step; the answer is the last."""
        return self.least_to_most

    def decompose(self, prompt: SQLPrompt, question: str, trace: Trace) -> list[str]:
        """Least-to-most stage one: sub-questions, the question itself last."""
        messages = [dict(m) for m in prompt.context]
        task = fill("decompose", question=question,
                    evidence=("\n" + section("evidence_section", evidence=prompt.evidence) + "\n")
                    if prompt.evidence else "")
        messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n\n" + task}
        subs = parse_bullets(trace.call(self.lm, "decompose", messages, max_tokens=200), limit=4)
        if not subs or subs[-1].strip().rstrip("?").lower() != question.strip().rstrip("?").lower():
            subs = [s for s in subs if s.strip()] + [question]
        return subs[-4:]

    def generate(self, prompt: SQLPrompt, question: str, trace: Trace, *, tips: str = "",
                 step: str | None = None, **params: Any) -> tuple[str, str]:
        """One candidate: (raw model text, the text the prompt ended with for SQL continuation);
        ``step`` names the call in the trace (default ``sql``), ``params`` go to the model."""
        if self.least_to_most:
            if not self.subquestions:
                self.subquestions = self.decompose(prompt, question, trace)
            tail = join_sections(section("question_section", question=question),
                                 fill("least_to_most", subquestions=bullet_list(self.subquestions)))
            messages = _user_task(prompt, question, tips, tail)
            return trace.call(self.lm, step or "sql", messages, max_tokens=self.max_tokens, **params), ""
        messages = _user_task(prompt, question, tips, fill("direct_question", question=question))
        return trace.call(self.lm, step or "sql", messages, max_tokens=self.max_tokens, **params), "SELECT"


class FormattedSQLGenerator:
    """One call per candidate: schema, examples and question arranged by a question format."""

    #: Chain-of-thought formats end with "So the final answer is:", which extraction finds anyway.
    stepwise = False

    def __init__(self, lm: LM, question_format: str, *, max_tokens: int = 512, step: str = "sql",
                 logprobs: bool = False):
        self.lm = lm
        self.question_format = question_format
        self.max_tokens = max_tokens
        self.step = step
        self.logprobs = logprobs  # each call asks for its tokens' log-probabilities (``kgsql.correct.confidence``)

    def generate(self, prompt: PromptParts, question: str, trace: Trace, *, tips: str = "",
                 step: str | None = None, **params: Any) -> tuple[str, str]:
        """(raw model text, the text the prompt ended with), like ``SQLGenerator.generate``;
        ``step`` names the call in the trace (default: the generator's), ``params``
        (temperature, seed) go to the model."""
        parts = replace(prompt, question=question, tips=tips) if tips or prompt.question != question else prompt
        formatted = format_prompt(self.question_format, parts)
        if self.logprobs:
            params = {"logprobs": True, **params}
        completion = trace.call(self.lm, step or self.step, formatted.messages, max_tokens=self.max_tokens, **params)
        return completion, formatted.suffix
