"""Prompt parts declared once: every format places every part; a format that leaves one out cannot register."""
from __future__ import annotations

import dataclasses

import pytest

from kgsql.generate.formats import available_formats, continue_select, format_prompt, register_format
from kgsql.generate.parts import PART_NAMES, PARTS, Lasts, PartOrderError, PromptParts, Shot

#: A distinct marker in every part, so each one's place in the prompt can be found.
MARKED = PromptParts(
    question="QUESTION-MARK", schema="SCHEMA-MARK", shots=(Shot("SHOT-Q", "SELECT 'SHOT-MARK'"),),
    functions="FUNCTIONS-MARK", geo="GEO-MARK", evidence="EVIDENCE-MARK", tips="TIPS-MARK",
    hints="HINTS-MARK", lead_shots=(Shot("LEAD-Q", "SELECT 'LEAD_SHOTS-MARK'"),), history="HISTORY-MARK")


def _text(name: str, parts: PromptParts) -> str:
    return "\n".join(m["content"] for m in format_prompt(name, parts).messages)


@pytest.mark.parametrize("name", available_formats())
def test_every_format_places_every_part(name: str) -> None:
    """Issue 31 defect 1: ``chat`` and ``act-completion`` dropped the graph's hints without a word."""
    text = _text(name, MARKED)
    for part in PART_NAMES:
        assert f"{part.upper()}-MARK" in text, f"{name} drops {part}"


@pytest.mark.parametrize("name", available_formats())
def test_a_conversations_earlier_turns_come_right_before_the_question(name: str) -> None:
    """Issue 32's ``context=history``: the previous questions and queries, titled, then the question."""
    text = _text(name, MARKED)
    title = "/* Previous questions and queries: */" if name in ("dail", "schema-first", "shared-first") \
        else "Previous questions and queries:"
    assert f"{title}\nHISTORY-MARK" in text
    assert max(text.index(m) for m in ("TIPS-MARK", "EVIDENCE-MARK", "SCHEMA-MARK")) < text.index("HISTORY-MARK")
    assert text.index("HISTORY-MARK") < text.index("QUESTION-MARK")


@pytest.mark.parametrize("name", ["chat", "act-completion"])
def test_plain_layouts_title_the_hints(name: str) -> None:
    text = _text(name, dataclasses.replace(MARKED, shots=(), lead_shots=()))
    assert "Hints from the database:\nHINTS-MARK" in text
    assert text.index("GEO-MARK") < text.index("HINTS-MARK") < text.index("EVIDENCE-MARK")


def test_a_format_that_leaves_a_part_out_cannot_register() -> None:
    order = tuple(n for n in PART_NAMES if n != "hints")
    with pytest.raises(PartOrderError, match="'no-hints' leaves out prompt part\\(s\\): hints"):
        register_format("no-hints", continue_select, order)
    assert "no-hints" not in available_formats()
    with pytest.raises(PartOrderError, match="places twice prompt part\\(s\\): tips"):
        register_format("twice", continue_select, PART_NAMES + ("tips",))
    with pytest.raises(PartOrderError, match="names unknown prompt part\\(s\\): units"):
        register_format("unknown", continue_select, PART_NAMES + ("units",))


def test_the_cache_order_is_the_declared_order_and_by_lasts_only_moves_shared_examples() -> None:
    """``schema-first`` is the declaration order, which never puts a shorter-lived part before a
    longer-lived one; ``shared-first`` sorts by lasts, so examples the same for every question move up."""
    assert [p.lasts for p in PARTS] == sorted(p.lasts for p in PARTS)
    assert _text("shared-first", MARKED) == _text("schema-first", MARKED)  # examples chosen per question
    for_every_question = dataclasses.replace(MARKED, lasting={"shots": Lasts.RUN})
    shared = _text("shared-first", for_every_question)
    assert shared.index("LEAD_SHOTS-MARK") < shared.index("SHOT-MARK") < shared.index("SCHEMA-MARK")
    assert for_every_question.lasts(dict((p.name, p) for p in PARTS)["shots"]) is Lasts.RUN


def test_a_lifetime_for_a_part_that_does_not_exist_is_refused() -> None:
    """``lasting`` names declared parts; a misspelt one would silently change nothing."""
    with pytest.raises(PartOrderError, match="lasting names unknown prompt part\\(s\\): shot"):
        PromptParts("q?", "SCHEMA", lasting={"shot": Lasts.RUN})
    assert isinstance(hash(PromptParts("q?", "SCHEMA", lasting={"shots": Lasts.RUN})), int)  # a frozen value
