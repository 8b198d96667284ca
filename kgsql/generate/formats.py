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
  chosen per question (``PromptParts.lasting``) stay after the
  schema, where they cost nothing that could have been cached.

Formats only arrange text; what goes in (schema style, rows, which
examples, CoT or not) is decided by the method options. The sections are
declared once in ``kgsql.generate.parts``; a format is an ordering of them
plus how it writes messages, and registering a format that leaves a declared
part out fails (``parts.check_order``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kgsql.generate.parts import ACT_ORDER, DAIL_ORDER, PART_NAMES, PromptParts, Shot, check_order, part
from kgsql.llm.base import Message
from kgsql.prompts.templates import join_sections
from kgsql.registry import Registry

__all__ = [
    "Shot", "PromptParts", "FormattedPrompt", "QuestionFormat", "register_format", "get_format",
    "available_formats", "format_prompt", "ACT_SYSTEM", "DAIL_QUESTION",
]

ACT_SYSTEM = "Given the database schema, you need to translate the question into the SQL query."
DAIL_QUESTION = "Answer the following with no explanation: {question}\nSELECT"
DAIL_SCHEMA = "/* Given the following database schema: */"
COT_TRIGGER = "Let's think step by step."

#: Parts a format's writer places itself (as messages, or around the titled sections).
FRAME = frozenset({"lead_shots", "shots", "schema", "question"})


@dataclass(frozen=True)
class FormattedPrompt:
    """Messages to send, and the text the prompt ends with (for ``extract_sql``)."""

    messages: list[Message] = field(default_factory=list)
    suffix: str = ""


Writer = Callable[[PromptParts, tuple[str, ...]], FormattedPrompt]


@dataclass(frozen=True)
class QuestionFormat:
    """A question format: the parts in ``order`` written by ``write``; ``by_lasts`` sorts the
    order (stably) by how long each part stays the same in the prompt at hand."""

    name: str
    order: tuple[str, ...]
    write: Writer
    by_lasts: bool = False

    def __post_init__(self) -> None:
        check_order(self.name, self.order)

    def __call__(self, parts: PromptParts) -> FormattedPrompt:
        order = self.order
        if self.by_lasts:
            order = tuple(sorted(order, key=lambda name: parts.lasts(part(name))))
        return self.write(parts, order)


FORMATS: Registry[QuestionFormat] = Registry("question format", sorted_names=True)


def register_format(name: str, write: Writer, order: tuple[str, ...], *, by_lasts: bool = False) -> QuestionFormat:
    """Registers ``write`` under ``name`` placing ``order`` (every declared part, or a PartOrderError)."""
    return FORMATS.register(name, QuestionFormat(name, order, write, by_lasts))


def available_formats() -> list[str]:
    return FORMATS.names()


def get_format(name: str) -> QuestionFormat:
    return FORMATS.get(name)


def format_prompt(name: str, parts: PromptParts) -> FormattedPrompt:
    return get_format(name)(parts)


# --------------------------------------------------------------------------- DAIL's comment layout


def _comment_section(title: str, body: str) -> str:
    return f"/* {title}: */\n{body.strip()}" if body.strip() else ""


def _dail_shot(shot: Shot) -> str:
    """DAIL's question + SQL; an example without a question is its SQL only (DAIL's SQL-only organisation)."""
    qa = f"/* Answer the following: {shot.question} */\n{shot.answer.strip()}" if shot.question.strip() \
        else shot.answer.strip()
    return f"{DAIL_SCHEMA}\n{shot.schema.strip()}\n\n{qa}" if shot.schema.strip() else qa


def _shots_section(title: str, shots: tuple[Shot, ...]) -> str:
    return f"/* {title}: */\n" + "\n\n".join(_dail_shot(s) for s in shots) if shots else ""


def _comment_part(name: str, parts: PromptParts) -> str:
    """One part in DAIL's layout: SQL comments as titles, the schema as DDL, the question ending in SELECT."""
    if name in ("shots", "lead_shots"):
        return _shots_section(part(name).title, getattr(parts, name))
    if name == "schema":
        return f"{DAIL_SCHEMA}\n{parts.schema.strip()}"
    if name == "question":
        return DAIL_QUESTION.format(question=parts.question)
    return _comment_section(part(name).title, getattr(parts, name))


def continue_select(parts: PromptParts, order: tuple[str, ...]) -> FormattedPrompt:
    """One user message of the parts in ``order`` (empty ones left out), ending in the DAIL question's
    SELECT, which the model continues; the SDBMS line, if any, as the system message."""
    body = join_sections(*(_comment_part(name, parts) for name in order))
    messages: list[Message] = [{"role": "system", "content": parts.system}] if parts.system.strip() else []
    messages.append({"role": "user", "content": body})
    return FormattedPrompt(messages, "SELECT")


# --------------------------------------------------------------------------- ACT-SQL's plain layout


def _act_user(schema: str, question: str) -> str:
    # ACT-SQL's schema strings end in "\n" and the template adds one: a blank line before "Question:".
    if not schema.strip():
        return f"Question: {question}"
    return f"Database schema:\n{schema.strip()}\n\nQuestion: {question}"


def _plain_sections(parts: PromptParts, order: tuple[str, ...]) -> str:
    """The titled parts in ``order`` as ``Title:\nbody`` (``Title: body`` when inline), empty ones left out."""
    sections = []
    for name in order:
        body = "" if name in FRAME else getattr(parts, name).strip()
        if body:
            p = part(name)
            sections.append(f"{p.title}: {body}" if p.inline else f"{p.title}:\n{body}")
    return join_sections(*sections)


def chat(parts: PromptParts, order: tuple[str, ...]) -> FormattedPrompt:
    """ACT-SQL's chat prompt: a user/assistant pair per example, then the schema, the titled parts and the question."""
    system = ACT_SYSTEM if not parts.system.strip() else f"{parts.system.strip()} {ACT_SYSTEM}"
    messages: list[Message] = [{"role": "system", "content": system}]
    for shot in parts.lead_shots + parts.shots:
        messages.append({"role": "user", "content": _act_user(shot.schema, shot.question)})
        messages.append({"role": "assistant", "content": shot.answer.strip()})
    extras = _plain_sections(parts, order)
    schema = parts.schema.strip() + ("\n\n" + extras if extras else "")
    messages.append({"role": "user", "content": _act_user(schema, parts.question)})
    return FormattedPrompt(messages, "")


def act_completion(parts: PromptParts, order: tuple[str, ...]) -> FormattedPrompt:
    """ACT-SQL's prompt for completion models, sent as one user message ending in SELECT (or the CoT trigger)."""
    text = ""
    for shot in parts.lead_shots + parts.shots:
        text += "Given the database schema:\n" + shot.schema.strip() + "\n\n"
        text += "Translate the natural utterance into the SQL query: " + shot.question + "\n"
        text += shot.answer.strip() + "\n"
    extras = _plain_sections(parts, order)
    text += "Given the database schema:\n" + parts.schema.strip() + "\n\n" + (extras + "\n" if extras else "")
    text += "Translate the natural utterance into the SQL query: " + parts.question + "\n"
    tail = COT_TRIGGER if parts.cot else "SELECT"
    text += tail
    messages: list[Message] = [{"role": "system", "content": parts.system}] if parts.system.strip() else []
    messages.append({"role": "user", "content": text})
    return FormattedPrompt(messages, tail)


register_format("dail", continue_select, DAIL_ORDER)
register_format("schema-first", continue_select, PART_NAMES)
register_format("shared-first", continue_select, PART_NAMES, by_lasts=True)
register_format("chat", chat, ACT_ORDER)
register_format("act-completion", act_completion, ACT_ORDER)
