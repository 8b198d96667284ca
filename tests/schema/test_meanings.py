"""Value meanings parsed from documentation text: real lines of BIRD's dev description CSVs
(quoted as the files hold them, bullets and labels included) and prose that must yield nothing."""
from __future__ import annotations

import pytest

from kgsql.schema.meanings import ValueMeaning, parse_value_meaning


def test_unit_and_missing_markers_of_a_measurement() -> None:
    text = ("commonsense evidence:\nThe unit of height is centimeter. If the height_cm is NULL or 0, "
            "it means the height of the superhero is missing. ")
    meaning = parse_value_meaning(text)
    assert meaning == ValueMeaning(unit="centimeter", missing=("NULL", "0"))
    assert meaning.summary() == "unit: centimeter; NULL or 0 = missing"


@pytest.mark.parametrize("text, unit", [
    ("the unit is dollar", "dollar"),
    ("the unit is dollar \ncommonsense evidence: If the remaining < 0, it means that the cost has exceeded the budget.",
     "dollar"),
    ("unit\uff1aUS dollar", "us dollar"),   # a full-width colon, as financial.csv writes it
    ("Unit\uff1aUSD", "usd"),
])
def test_units_in_their_spellings(text: str, unit: str) -> None:
    assert parse_value_meaning(text).unit == unit


@pytest.mark.parametrize("text, codes", [
    ("0: N;\n1: Y", (("0", "N"), ("1", "Y"))),
    ("F\uff1afemale \nM\uff1amale", (("F", "female"), ("M", "male"))),
    ("0: disallow 1: allow", (("0", "disallow"), ("1", "allow"))),               # two codes on one line
    ("commonsense evidence:\n0: has a text box;\n1: doesn't have a text box;",
     (("0", "has a text box"), ("1", "doesn't have a text box"))),
    ("+: positive\n\n-: negative", (("+", "positive"), ("-", "negative"))),
    ("The field is coded as follows:\n\n\u00b7\xa0\xa0\xa0\xa0\xa0\xa0 1 = The school is a charter\n\n"
     "\u00b7\xa0\xa0\xa0\xa0\xa0\xa0 0 = The school is not a charter",
     (("1", "The school is a charter"), ("0", "The school is not a charter"))),
    ("\u2022      ALTSOC \u2013 Alternative School of Choice\n\u2022      COMM \u2013 County Community School",
     (("ALTSOC", "Alternative School of Choice"), ("COMM", "County Community School"))),
    ('"junior": junior class of credit card; \n"classic": standard class of credit card',
     (("junior", "junior class of credit card"), ("classic", "standard class of credit card"))),
    ("commonsense evidence: \n\ufffd Standard: the normal codes with which most people are familiar \n"
     "\ufffd PO Box: zip codes have post office boxes",
     (("Standard", "the normal codes with which most people are familiar"),
      ("PO Box", "zip codes have post office boxes"))),
])
def test_codes_and_what_they_stand_for(text: str, codes: tuple) -> None:  # type: ignore[type-arg]
    assert parse_value_meaning(text).codes == codes


@pytest.mark.parametrize("text, values", [
    ("Open/ Closed/ Planning", ("Open", "Closed", "Planning")),
    ("true/ false", ("true", "false")),
    ('"black", "borderless", "gold", "silver", "white"', ("black", "borderless", "gold", "silver", "white")),
    ("Organised / Free Form", ("Organised", "Free Form")),
])
def test_a_closed_list_of_values(text: str, values: tuple[str, ...]) -> None:
    meaning = parse_value_meaning(text)
    assert meaning.values == values and not meaning.codes
    assert meaning.summary().startswith("values: ")


def test_a_list_with_meanings_is_read_as_codes_not_values() -> None:
    text = ("Closed / Open/ Planning \ncommonsense evidence: \n\u2022 Closed: It means that the event is closed. "
            "The spent and the remaining won't change anymore.\n\u2022 Open: It means that the event is already "
            "opened.\n\u2022 Planning: The event is not started yet but is planning.")
    meaning = parse_value_meaning(text)
    assert [code for code, _ in meaning.codes] == ["Closed", "Open", "Planning"]
    assert meaning.codes[0][1].startswith("It means that the event is closed")


@pytest.mark.parametrize("text, data_format, shown", [
    ("e.g. 2020-03-10T12:00:00", "text", "2020-03-10T12:00:00"),
    ("e.g. YYYY-MM-DD", "text", "YYYY-MM-DD"),
    ("in the form YYMMDD", "date", "YYMMDD"),
    ("e.g. 2010-02-22 00:00:00", "text", "2010-02-22 00:00:00"),
])
def test_how_dates_are_written(text: str, data_format: str, shown: str) -> None:
    meaning = parse_value_meaning(text, data_format)
    assert meaning.format == shown
    assert not meaning.codes and not meaning.values  # 00:00:00 is a time, not code 00


@pytest.mark.parametrize("text", [
    "",
    "commonsense evidence:\nIn the context of superheroes, a superhero's race would refer to the particular group",
    "in minutes / seconds / ...",                     # prose about units, not a value list
    "same with position, not quite useful",
    "0-100 which is calculated by FIFA",
    "Commonsense evidence:\n\nNormal range: N < 60",  # a label, not a code
    "NOT USEFUL",
    "each bank has unique two-letter code",
    "Note: Many entities have not provided a mailing address",
])
def test_prose_yields_nothing(text: str) -> None:
    meaning = parse_value_meaning(text)
    assert not meaning and meaning.summary() == ""


def test_one_code_is_not_a_code_table() -> None:
    """A single "label: text" line is prose ("Remark: see above"); codes come at least in pairs."""
    assert parse_value_meaning("Warning: values before 2010 are estimates").codes == ()
    assert parse_value_meaning("1: yes").codes == ()


def test_summary_clips_long_meanings_and_quotes_text_codes() -> None:
    meaning = ValueMeaning(codes=(("1", "the school is a charter school funded directly by the state"),
                                  ("N", "no")))
    assert meaning.summary(meaning_chars=20) == "1 = the school is a..., 'N' = no"
    assert ValueMeaning(values=("it's", "b")).summary() == "values: 'it''s', 'b'"
    assert ValueMeaning(values=("a", "b")).summary(with_values=False) == ""
