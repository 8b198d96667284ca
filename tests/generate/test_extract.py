"""extract_sql: fixture cases (fixtures/extract/*.txt) and a wrapping property test.

Fixture format, one case per file (sections start with a line ``-- name``):

    -- input        the model output, verbatim
    -- suffix       optional: the end of the prompt (e.g. "SELECT")
    -- expected     the SQL extract_sql must return
    -- error        instead of expected: NoSQLFoundError whose message contains this
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kgsql.errors import LLMError
from kgsql.sql.extract import NoSQLFoundError, extract_sql

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
_SECTION = re.compile(r"^-- (input|suffix|expected|error)$")


def read_case(path: Path) -> dict[str, str]:
    """Sections of a fixture file; each body is the text between its header and the next."""
    text = path.read_text(encoding="utf-8").removesuffix("\n")
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        m = _SECTION.match(line)
        if m:
            current = sections.setdefault(m.group(1), [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


CASES = sorted(FIXTURES.glob("*.txt"))


def test_fixtures_exist() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture(path: Path) -> None:
    case = read_case(path)
    text = case["input"]
    suffix = case.get("suffix", "")
    if "error" in case:
        with pytest.raises(NoSQLFoundError) as info:
            extract_sql(text, prompt_suffix=suffix)
        assert case["error"].strip() in str(info.value)
    else:
        assert extract_sql(text, prompt_suffix=suffix) == case["expected"].strip()


def test_error_is_an_llm_error_with_excerpt() -> None:
    with pytest.raises(LLMError) as info:
        extract_sql("I cannot help with that request, sorry." * 10)
    err = info.value
    assert isinstance(err, NoSQLFoundError)
    assert err.excerpt.startswith("I cannot help")
    assert len(err.excerpt) <= 80
    assert "no SELECT or WITH query found" in str(err)


def test_non_string_input() -> None:
    with pytest.raises(NoSQLFoundError):
        extract_sql(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- property test

IDENT = st.sampled_from(
    ["name", "population", "city_id", "province_id", "length_km", "founded", "T1.name", "c.population"]
)
TABLE = st.sampled_from(["cities", "provinces", "rivers", "river_cities", "cities AS c", "cities AS T1"])
VALUE = st.one_of(
    st.integers(min_value=-10_000, max_value=10_000).map(str),
    st.text(alphabet="abcdefghij klmnopqrstuvwxyzABC'", max_size=12).map(lambda s: "'" + s.replace("'", "''") + "'"),
)


@st.composite
def queries(draw: st.DrawFn) -> str:
    """Valid single-line or multi-line SELECTs."""
    cols = draw(st.lists(IDENT, min_size=1, max_size=3, unique=True))
    agg = draw(st.sampled_from(["", "COUNT", "MAX", "SUM"]))
    proj = f"{agg}({cols[0]})" if agg else ", ".join(cols)
    parts = [f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{proj}", f"FROM {draw(TABLE)}"]
    if draw(st.booleans()):
        op = draw(st.sampled_from(["=", ">", "<", "<>", "LIKE"]))
        parts.append(f"WHERE {draw(IDENT)} {op} {draw(VALUE)}")
    if draw(st.booleans()):
        parts.append(f"ORDER BY {cols[0]} {draw(st.sampled_from(['ASC', 'DESC']))}")
    if draw(st.booleans()):
        parts.append(f"LIMIT {draw(st.integers(min_value=1, max_value=50))}")
    sep = draw(st.sampled_from([" ", "\n", "\n  "]))
    sql = sep.join(parts)
    if draw(st.booleans()):  # lower-case keywords, as many models write them
        for kw in ("SELECT", "DISTINCT", "FROM", "WHERE", "ORDER BY", "LIMIT", "LIKE", "COUNT", "MAX", "SUM"):
            sql = re.sub(rf"\b{kw}\b(?=(?:[^']*'[^']*')*[^']*$)", kw.lower(), sql)
    return sql


PROSE_WORDS = ["the", "query", "returns", "all", "rows", "of", "table", "sorted", "by", "value", "we", "need",
               "to", "join", "filter", "count", "here", "is", "answer", "this", "it's", "cities", "provinces"]
prose = st.lists(st.sampled_from(PROSE_WORDS), min_size=1, max_size=14).map(lambda ws: " ".join(ws))
LEADS = ["Here is the query:", "Sure! The SQL is:", "Answer:", "The query you need is as follows:",
         "Let me write it.", "### Response:", "<|im_start|>assistant"]
TAILS = ["This query returns the rows.", "The result is sorted.", "It counts the rows.", "Note: names are unique.",
         "Explanation: the filter keeps matching rows.", "<|im_end|>", "**Why:** it joins the tables."]


@st.composite
def wrapped(draw: st.DrawFn) -> tuple[str, str]:
    sql = draw(queries())
    body = sql + draw(st.sampled_from(["", ";", " ;"]))
    style = draw(st.sampled_from(["bare", "sql_fence", "fence", "inline", "final"]))
    debris = draw(st.sampled_from(["", "<|eot_id|>", "</s>", "<|end|>"]))
    if style == "sql_fence":
        body = f"```{draw(st.sampled_from(['sql', 'sqlite', 'SQL']))}\n{body}\n```"
    elif style == "fence":
        body = f"```\n{body}\n```"
    elif style == "inline":
        body = f"`{body}`"
    elif style == "final":
        body = f"So the final answer is:\n{body}"
    lead = draw(st.one_of(st.just(""), st.sampled_from(LEADS), prose.map(lambda p: p.capitalize() + ".")))
    tail = draw(st.one_of(st.just(""), st.sampled_from(TAILS), prose.map(lambda p: "This " + p + ".")))
    lead_sep = draw(st.sampled_from(["\n", "\n\n", " "])) if style != "inline" else " "
    if lead.startswith("<|") or (lead and not lead.rstrip().endswith((":", ".", "!"))):
        lead_sep = "\n"  # a bare lead must end its sentence to be told from SQL
    ends_cleanly = body.endswith((";", "```", "`"))
    tail_sep = draw(st.sampled_from(["\n\n", "\n"] + ([" "] if ends_cleanly else [])))
    text = (lead + lead_sep if lead else "") + body + (tail_sep + tail if tail else "")
    return text + debris, sql


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wrapped())
@example(("Here is the query:\n```sql\nSELECT name FROM cities;\n```\nThis query returns the rows.",
          "SELECT name FROM cities"))
def test_wrapped_query_is_extracted(case: tuple[str, str]) -> None:
    text, sql = case
    assert extract_sql(text) == sql


@settings(max_examples=150, deadline=None)
@given(queries(), st.sampled_from(["", "\n\nThis query returns the rows.", ";", "\n```"]))
def test_select_continuation_round_trip(sql: str, tail: str) -> None:
    """The model continues a prompt ending in SELECT: the extracted query is the full one."""
    continued = sql.removeprefix("SELECT ")
    assert extract_sql(" " + continued + tail, prompt_suffix="...\nSELECT") == sql
    assert extract_sql(sql + tail, prompt_suffix="SELECT") == sql  # not doubled


# Qwen2.5-Coder-1.5B solving least-to-most sub-questions (a real output): one block per step,
# the last one combining them, with no "final" marker before it.
STEPWISE = """Let's solve the sub-questions step by step.

1. **Sub-question 1: Select the zip_postcode column from the Addresses table.**
   ```sql
   SELECT zip_postcode FROM Addresses
   ```

2. **Sub-question 2: Filter the results to only include rows where the city column is 'Port Chelsea'.**
   ```sql
   SELECT zip_postcode FROM Addresses WHERE city = 'Port Chelsea'
   ```

Now, let's combine these sub-questions into a single SQL query. The final query will be the result of the last sub-question.

```sql
SELECT zip_postcode FROM Addresses WHERE city = 'Port Chelsea' ORDER BY zip_postcode
```
"""


def test_stepwise_answer_is_the_last_sql_block() -> None:
    assert extract_sql(STEPWISE, last=True) == (
        "SELECT zip_postcode FROM Addresses WHERE city = 'Port Chelsea' ORDER BY zip_postcode")
    # Without ``last`` the first block wins ("or, equivalently" alternatives follow an answer).
    assert extract_sql(STEPWISE) == "SELECT zip_postcode FROM Addresses"


def test_stepwise_skips_a_last_block_that_is_no_query() -> None:
    text = "```sql\nSELECT a FROM t WHERE b > 1\n```\nThen:\n```sql\n-- nothing more to add\n```"
    assert extract_sql(text, last=True) == "SELECT a FROM t WHERE b > 1"


def test_least_to_most_generator_marks_its_answers_stepwise() -> None:
    from kgsql.generate.sqlgen import FormattedSQLGenerator, SQLGenerator
    from kgsql.llm import ScriptedLM

    lm = ScriptedLM([])
    assert SQLGenerator(lm, least_to_most=True).stepwise
    assert not SQLGenerator(lm, least_to_most=False).stepwise
    assert not FormattedSQLGenerator(lm, "dail").stepwise
