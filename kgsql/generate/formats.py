"""Question formats: how schema, examples and question become chat messages, by name.

* ``dail``  SSpa's prompt on DAIL-SQL's code-representation layout, one user
  message: (SDBMS knowledge,) examples as ``/* Answer the following: q */``
  + SQL (with each example's own schema in the "full" organisation), the
  schema, (geographic descriptions, evidence, schema tips,) then
  ``Answer the following with no explanation: <question>\\nSELECT``; the
  model continues the ``SELECT``.
* ``chat``  ACT-SQL's chat prompt (util/prompt.py ``get_prompt``): the system
  message "Given the database schema, you need to translate the question into
  the SQL query.", one user/assistant pair per example (``Database schema:
  ...\\nQuestion: ...`` / SQL or auto-CoT), then the question as a user message.
* ``act-completion``  ACT-SQL's prompt for completion models, sent as one user
  message ending in ``SELECT`` (or "Let's think step by step." with CoT).
* ``schema-first``  kgsql's one-call prompt: DAIL's pieces in prefix-cache
  order. What is stable for a database comes first (the schema and its
  geographic descriptions), what changes per question last (spatial function
  notes, examples, graph hints, evidence, tips, the question), so a server
  with prompt-prefix caching reads a database's schema once for all its
  questions. Ends in ``SELECT`` like ``dail``.
* ``shared-first``  ``schema-first`` with the examples moved to the front
  when they are the same for every question (``typical`` or ``static``
  selection), so the cached prefix is three-level: the examples once for all
  databases, then one database's schema, then the question's parts. Examples
  chosen per question (``PromptParts.shots_per_question``) stay after the
  schema, where they cost nothing that could have been cached.

Formats only arrange text; what goes in (schema style, rows, which
examples, CoT or not) is decided by the method options.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kgsql.registry import Registry
from kgsql.llm.base import Message
from kgsql.prompts.templates import join_sections

__all__ = [
    "Shot", "PromptParts", "FormattedPrompt", "register_format", "get_format", "available_formats",
    "format_prompt", "ACT_SYSTEM", "DAIL_QUESTION",
]

ACT_SYSTEM = "Given the database schema, you need to translate the question into the SQL query."
DAIL_QUESTION = "Answer the following with no explanation: {question}\nSELECT"
DAIL_SCHEMA = "/* Given the following database schema: */"
DAIL_EXAMPLES = "/* Some SQL examples are provided based on similar problems: */"
LEAD_EXAMPLES = "/* Some SQL examples of common kinds of questions: */"
HINTS_TITLE = "Hints from the database"
COT_TRIGGER = "Let's think step by step."


@dataclass(frozen=True)
class Shot:
    """One few-shot example as the prompt shows it.

    ``answer`` is the SQL or its auto-CoT; ``schema`` the example's own database
    rendered like the target's ("" in DAIL's SQL-only organisation)."""

    question: str
    answer: str
    schema: str = ""


@dataclass(frozen=True)
class PromptParts:
    """Everything a question format may place; empty parts are left out."""

    question: str
    schema: str
    shots: tuple[Shot, ...] = ()
    system: str = ""      # SDBMS line, e.g. "You are an expert in the SpatiaLite ..."
    knowledge: str = ""   # SDBMS function explanations
    geo: str = ""         # geographic descriptions of the tables
    evidence: str = ""
    tips: str = ""        # schema tips from failed attempts
    cot: bool = False     # the shots' answers are chains of thought
    hints: str = ""       # graph-derived hints (values the question names, join conditions)
    lead_shots: tuple[Shot, ...] = ()  # examples the same for every question: first, before anything else
    shots_per_question: bool = False  # ``shots`` were chosen for this question (``shared-first`` keeps them last)


@dataclass(frozen=True)
class FormattedPrompt:
    """Messages to send, and the text the prompt ends with (for ``extract_sql``)."""

    messages: list[Message] = field(default_factory=list)
    suffix: str = ""


QuestionFormat = Callable[[PromptParts], FormattedPrompt]
FORMATS: Registry[QuestionFormat] = Registry("question format", sorted_names=True)


def register_format(name: str, fn: QuestionFormat) -> QuestionFormat:
    return FORMATS.register(name, fn)


def available_formats() -> list[str]:
    return FORMATS.names()


def get_format(name: str) -> QuestionFormat:
    return FORMATS.get(name)


def format_prompt(name: str, parts: PromptParts) -> FormattedPrompt:
    return get_format(name)(parts)


def _comment_section(title: str, body: str) -> str:
    return f"/* {title}: */\n{body.strip()}" if body.strip() else ""


# --------------------------------------------------------------------------- DAIL / SSpa


def _dail_shot(shot: Shot) -> str:
    """DAIL's question + SQL; an example without a question is its SQL only (DAIL's SQL-only organisation)."""
    qa = f"/* Answer the following: {shot.question} */\n{shot.answer.strip()}" if shot.question.strip() \
        else shot.answer.strip()
    return f"{DAIL_SCHEMA}\n{shot.schema.strip()}\n\n{qa}" if shot.schema.strip() else qa


def _examples(parts: PromptParts) -> str:
    return _shots_section(DAIL_EXAMPLES, parts.shots)


def _shots_section(title: str, shots: tuple[Shot, ...]) -> str:
    return title + "\n" + "\n\n".join(_dail_shot(s) for s in shots) if shots else ""


def _continue_select(parts: PromptParts, *sections: str) -> FormattedPrompt:
    """One user message: the lead examples, ``sections`` (empty ones left out), then the DAIL
    question ending in SELECT. Lead examples come first in every layout: they are the same for
    every question, so a prefix-caching server reads them once for the whole run."""
    body = join_sections(_shots_section(LEAD_EXAMPLES, parts.lead_shots), *sections,
                         DAIL_QUESTION.format(question=parts.question))
    messages: list[Message] = [{"role": "system", "content": parts.system}] if parts.system.strip() else []
    messages.append({"role": "user", "content": body})
    return FormattedPrompt(messages, "SELECT")


def dail_format(parts: PromptParts) -> FormattedPrompt:
    return _continue_select(
        parts,
        _comment_section("Spatial functions", parts.knowledge),
        _examples(parts),
        f"{DAIL_SCHEMA}\n{parts.schema.strip()}",
        _comment_section("Geographic descriptions of the tables", parts.geo),
        _comment_section(HINTS_TITLE, parts.hints),
        _comment_section("Evidence", parts.evidence),
        _comment_section("Schema tips", parts.tips),
    )


def _database_sections(parts: PromptParts) -> tuple[str, ...]:
    """The database's schema and geography (the same for all its questions), then the spatial
    function notes, which are chosen per question and so end what can be cached."""
    return (f"{DAIL_SCHEMA}\n{parts.schema.strip()}",
            _comment_section("Geographic descriptions of the tables", parts.geo),
            _comment_section("Spatial functions", parts.knowledge))


def _question_sections(parts: PromptParts) -> tuple[str, ...]:
    """What changes with every question (and every correction round)."""
    return (_comment_section(HINTS_TITLE, parts.hints),
            _comment_section("Evidence", parts.evidence),
            _comment_section("Schema tips", parts.tips))


def schema_first_format(parts: PromptParts) -> FormattedPrompt:
    return _continue_select(parts, *_database_sections(parts), _examples(parts), *_question_sections(parts))


def shared_first_format(parts: PromptParts) -> FormattedPrompt:
    if parts.shots_per_question:
        return schema_first_format(parts)
    return _continue_select(parts, _examples(parts), *_database_sections(parts), *_question_sections(parts))


# --------------------------------------------------------------------------- ACT-SQL


def _act_user(schema: str, question: str) -> str:
    # ACT-SQL's schema strings end in "\n" and the template adds one: a blank line before "Question:".
    if not schema.strip():
        return f"Question: {question}"
    return f"Database schema:\n{schema.strip()}\n\nQuestion: {question}"


def _extras(parts: PromptParts) -> str:
    return join_sections(
        f"Spatial functions:\n{parts.knowledge.strip()}" if parts.knowledge.strip() else "",
        f"Geographic descriptions of the tables:\n{parts.geo.strip()}" if parts.geo.strip() else "",
        f"Evidence: {parts.evidence.strip()}" if parts.evidence.strip() else "",
        f"Schema tips:\n{parts.tips.strip()}" if parts.tips.strip() else "",
    )


def chat_format(parts: PromptParts) -> FormattedPrompt:
    system = ACT_SYSTEM if not parts.system.strip() else f"{parts.system.strip()} {ACT_SYSTEM}"
    messages: list[Message] = [{"role": "system", "content": system}]
    for shot in parts.lead_shots + parts.shots:
        messages.append({"role": "user", "content": _act_user(shot.schema, shot.question)})
        messages.append({"role": "assistant", "content": shot.answer.strip()})
    extras = _extras(parts)
    schema = parts.schema.strip() + ("\n\n" + extras if extras else "")
    messages.append({"role": "user", "content": _act_user(schema, parts.question)})
    return FormattedPrompt(messages, "")


def act_completion_format(parts: PromptParts) -> FormattedPrompt:
    text = ""
    for shot in parts.lead_shots + parts.shots:
        text += "Given the database schema:\n" + shot.schema.strip() + "\n\n"
        text += "Translate the natural utterance into the SQL query: " + shot.question + "\n"
        text += shot.answer.strip() + "\n"
    extras = _extras(parts)
    text += "Given the database schema:\n" + parts.schema.strip() + "\n\n" + (extras + "\n" if extras else "")
    text += "Translate the natural utterance into the SQL query: " + parts.question + "\n"
    tail = COT_TRIGGER if parts.cot else "SELECT"
    text += tail
    messages: list[Message] = [{"role": "system", "content": parts.system}] if parts.system.strip() else []
    messages.append({"role": "user", "content": text})
    return FormattedPrompt(messages, tail)


register_format("dail", dail_format)
register_format("schema-first", schema_first_format)
register_format("shared-first", shared_first_format)
register_format("chat", chat_format)
register_format("act-completion", act_completion_format)
