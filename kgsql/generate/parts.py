"""Prompt parts, declared once: each section a prompt can hold, its title, and how long it stays the same.

A question format (``kgsql.generate.formats``) is an ordering of these parts; a
format that leaves a declared part out fails when it is registered, so a new
part cannot be silently dropped by a layout nobody thought of (issue 31: the
chat layouts once lost the graph's hints that way). How long a part stays the
same (:class:`Lasts`) is what a prefix-caching server cares about: the
``shared-first`` format is nothing but the parts sorted by it.

Adding a part: a field of :class:`PromptParts`, a line in :data:`PARTS` (the
cache order and how long the part lasts unless a prompt says otherwise) and its
place in the papers' hand-written orders (:data:`DAIL_ORDER`, :data:`ACT_ORDER`),
all here; a format registered with an order that lacks it is named at
registration. With the stage that writes it, two code files. A stage whose
choice makes a part last longer or shorter than declared says so in the
prompt's ``lasting`` (the one override of a part's lifetime).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum

from kgsql.errors import KgsqlError


class Lasts(IntEnum):
    """How long a part's text stays the same: what a prompt-prefix cache can reuse."""

    RUN = 0        # every question of every database (lead examples)
    DATABASE = 1   # every question of one database (its schema, its geography)
    QUESTION = 2   # one question (hints, evidence, tips, the question itself)


@dataclass(frozen=True)
class Part:
    """One section of a prompt. ``title`` heads it (``""``: the format writes it its own way);
    ``inline`` puts a titled body on the title's line in plain layouts (``Evidence: ...``)."""

    name: str
    lasts: Lasts
    title: str = ""
    inline: bool = False


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
    system: str = ""      # SDBMS line, e.g. "You are an expert in the SpatiaLite ..." (the system message)
    functions: str = ""   # SDBMS function explanations (the spatial functions this question needs)
    geo: str = ""         # geographic descriptions of the tables
    evidence: str = ""
    tips: str = ""        # schema tips from failed attempts
    cot: bool = False     # the shots' answers are chains of thought (shapes the ending, not a section)
    hints: str = ""       # graph-derived hints (values the question names, join conditions, value meanings)
    lead_shots: tuple[Shot, ...] = ()  # examples the same for every question: first, before anything else
    history: str = ""     # a conversation's earlier questions and their SQL (``--set context=history``)
    lasting: Mapping[str, Lasts] = field(default_factory=dict, hash=False)  # part name -> how long it lasts here

    def __post_init__(self) -> None:
        unknown = sorted(set(self.lasting) - set(PART_NAMES))
        if unknown:
            raise PartOrderError(f"lasting names unknown prompt part(s): {', '.join(unknown)}")

    def lasts(self, part: Part) -> Lasts:
        """How long ``part`` stays the same in this prompt: as the stage that chose it says in ``lasting``
        (examples the same for every question last the run; a spatial database's function notes and derived
        examples chosen once for it, ``spatial_choice=database``, last the database), else as declared."""
        return self.lasting.get(part.name, part.lasts)


#: Every section, in the cache order (``schema-first``): what lasts longest first, the question last.
PARTS: tuple[Part, ...] = (
    Part("lead_shots", Lasts.RUN, "Some SQL examples of common kinds of questions"),
    Part("schema", Lasts.DATABASE),
    Part("geo", Lasts.DATABASE, "Geographic descriptions of the tables"),
    Part("functions", Lasts.QUESTION, "Spatial functions"),
    Part("shots", Lasts.QUESTION, "Some SQL examples are provided based on similar problems"),
    Part("hints", Lasts.QUESTION, "Hints from the database"),
    Part("evidence", Lasts.QUESTION, "Evidence", inline=True),
    Part("tips", Lasts.QUESTION, "Schema tips"),
    Part("history", Lasts.QUESTION, "Previous questions and queries"),
    Part("question", Lasts.QUESTION),
)
PART_NAMES: tuple[str, ...] = tuple(p.name for p in PARTS)
#: DAIL-SQL's order: the examples before the schema, the spatial notes before the examples (SSpa).
DAIL_ORDER: tuple[str, ...] = ("lead_shots", "functions", "shots", "schema", "geo", "hints", "evidence", "tips",
                               "history", "question")
#: ACT-SQL's order: the examples as their own messages, the schema, the titled parts, the question.
ACT_ORDER: tuple[str, ...] = ("lead_shots", "shots", "schema", "functions", "geo", "hints", "evidence", "tips",
                              "history", "question")
_BY_NAME = {p.name: p for p in PARTS}


class PartOrderError(KgsqlError):
    """A format's order leaves out a declared part, names an unknown one, or places one twice."""


def part(name: str) -> Part:
    return _BY_NAME[name]


def check_order(format_name: str, order: tuple[str, ...]) -> tuple[str, ...]:
    """``order`` if it places every declared part exactly once, else a one-line error naming the format."""
    missing = [n for n in PART_NAMES if n not in order]
    unknown = [n for n in order if n not in _BY_NAME]
    twice = sorted({n for n in order if order.count(n) > 1})
    for problem, names in (("leaves out", missing), ("names unknown", unknown), ("places twice", twice)):
        if names:
            raise PartOrderError(f"question format '{format_name}' {problem} prompt part(s): {', '.join(names)}")
    return order


def _check_declarations() -> None:
    """Every declared part is a field of PromptParts (a typo here would place nothing)."""
    field_names = {f.name for f in fields(PromptParts)}
    stray = [n for n in PART_NAMES if n not in field_names]
    if stray:
        raise PartOrderError(f"prompt part(s) without a PromptParts field: {', '.join(stray)}")


_check_declarations()
