"""Generated evidence keeps only grounded definitions (small models answer or invent values)."""
from __future__ import annotations

import pytest

from kgsql.generate.evidence import EvidenceGenerator, grounded
from kgsql.retrieve.values import ValueMatch
from kgsql.llm.scripted import ScriptedLM
from kgsql.llm.trace import Trace

SCHEMA = "table countrylanguage (CountryCode, Language, IsOfficial 'T' or 'F'); table country (Code, Name, Population)"
QUESTION = "How many official languages are spoken in countries with over 1000000 people?"


@pytest.mark.parametrize("text,expected", [
    # an answer to the question, not evidence
    ("The number of official languages is 42.", ""),
    # definitions with grounded literals stay, joined BIRD-style
    ("official refers to IsOfficial = 'T'; over 1000000 people refers to Population > 1000000",
     "official refers to IsOfficial = 'T'; over 1000000 people refers to Population > 1000000"),
    # an invented value drops its clause only
    ("official refers to IsOfficial = 'T'; countries refers to Name = 'Atlantis'", "official refers to IsOfficial = 'T'"),
    # an invented number (the "answer") drops its clause
    ("languages refers to countrylanguage.Language; the count is 42", "languages refers to countrylanguage.Language"),
    # common constants of BIRD formulas are allowed
    ("percentage = COUNT(Language) * 100 / COUNT(*)", "percentage = COUNT(Language) * 100 / COUNT(*)"),
])
def test_grounded(text: str, expected: str) -> None:
    assert grounded(text, QUESTION + "\n" + SCHEMA) == expected


def _context() -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are an SQLite expert."}, {"role": "user", "content": SCHEMA}]


def test_hallucinated_summary_falls_back_to_the_mapping() -> None:
    lm = ScriptedLM({
        "evidence_terms": "- official languages\n- over 1000000 people",
        "evidence_mapping": "- official languages refers to countrylanguage.IsOfficial = 'T'\n"
                            "- over 1000000 people refers to country.Population > 1000000",
        "evidence_summary": "There are 42 official languages spoken in such countries.",
    })
    ev = EvidenceGenerator(lm).generate(QUESTION, _context(), Trace())
    assert ev.text == ("official languages refers to countrylanguage.IsOfficial = 'T'; "
                       "over 1000000 people refers to country.Population > 1000000")


def test_values_found_by_the_value_index_ground_literals() -> None:
    script = {
        "evidence_terms": "- the Dutch island",
        "evidence_mapping": "- the Dutch island refers to country.Name = 'Aruba'",
        "evidence_summary": "the Dutch island refers to Name = 'Aruba' in the table country",
    }
    question = "What languages are spoken on the Dutch island?"
    assert EvidenceGenerator(ScriptedLM(dict(script))).generate(question, _context(), Trace()).text == ""
    hint = ValueMatch("country", "Name", "Aruba")
    assert EvidenceGenerator(ScriptedLM(dict(script))).generate(question, _context(), Trace(), values=[hint]).text == (
        "the Dutch island refers to Name = 'Aruba' in the table country")


def test_nothing_grounded_means_no_evidence() -> None:
    lm = ScriptedLM({"evidence_terms": "- x", "evidence_mapping": "- x is 7", "evidence_summary": "The answer is 7."})
    assert EvidenceGenerator(lm).generate(QUESTION, _context(), Trace()).text == ""
