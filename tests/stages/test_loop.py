"""The correction loop: never reruns a query, feeds back what failed, votes by result."""
from __future__ import annotations

from typing import Any

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.loop import CorrectionLoop, LoopOptions, same_query, vote
from kgsql.ingest.reader import read_database
from kgsql.llm.trace import Trace

SCRIPT = """
CREATE TABLE country (Code TEXT PRIMARY KEY, Name TEXT, Continent TEXT);
CREATE TABLE city (ID INTEGER PRIMARY KEY, Name TEXT, CountryCode TEXT REFERENCES country(Code));
INSERT INTO country VALUES ('NLD', 'Netherlands', 'Europe'), ('EGY', 'Egypt', 'Africa'), ('KEN', 'Kenya', 'Africa');
INSERT INTO city VALUES (1, 'Amsterdam', 'NLD'), (2, 'Cairo', 'EGY'), (3, 'Nairobi', 'KEN');
"""


class Scripted:
    """A generator that answers from a list and records what each call was told."""

    stepwise = False

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def generate(self, prompt: Any, question: str, trace: Trace, *, tips: str = "", step: str | None = None,
                 **params: Any) -> tuple[str, str]:
        self.calls.append({"step": step, "tips": tips, **params})
        return self.replies.pop(0), ""


@pytest.fixture
def ctx(make_sqlite):  # type: ignore[no-untyped-def]
    schema = read_database(make_sqlite("world", SCRIPT))
    with CheckContext(schema, "Which cities are in Africa?", timeout_s=5, max_rows=100) as c:
        yield c


def run(ctx: CheckContext, replies: list[str], **options: Any):  # type: ignore[no-untyped-def]
    gen = Scripted(replies)
    return gen, CorrectionLoop(gen, LoopOptions(**options)).run(None, "q", ctx, Trace())


def test_a_query_with_rows_is_answered_in_one_call(ctx: CheckContext) -> None:
    gen, out = run(ctx, ["SELECT Name FROM country"])
    assert [c["step"] for c in gen.calls] == ["sql"] and out.best is not None and out.best.result is not None
    assert out.rounds == 1 and out.candidates == ["SELECT Name FROM country"]


def test_failure_feedback_names_the_failed_query_and_the_error(ctx: CheckContext) -> None:
    bad = "SELECT city.Name FROM city WHERE city.Continent = 'Africa'"
    good = "SELECT city.Name FROM city JOIN country ON city.CountryCode = country.Code WHERE Continent = 'Africa'"
    gen, out = run(ctx, [bad, good], join_repair=False)
    assert [c["step"] for c in gen.calls] == ["sql", "sql_fix"]
    assert bad in gen.calls[1]["tips"] and "no such column" in gen.calls[1]["tips"]
    assert sorted(out.best.result.rows) == [("Cairo",), ("Nairobi",)]  # type: ignore[union-attr]


def test_an_identical_retry_is_never_run_again_and_sampling_takes_over(ctx: CheckContext, monkeypatch) -> None:
    bad = "SELECT Name FROM city WHERE Continent = 'Africa'"
    runs: list[str] = []
    import kgsql.correct.loop as loop

    real = loop.check_candidate
    monkeypatch.setattr(loop, "check_candidate", lambda c, sql, **kw: (runs.append(sql), real(c, sql, **kw))[1])
    good = "SELECT city.Name FROM city JOIN country ON CountryCode = Code WHERE Continent = 'Africa'"
    gen, out = run(ctx, [bad, "  " + bad + " ;", good, bad, good, good], samples=4, join_repair=False)
    assert [c["step"] for c in gen.calls] == ["sql", "sql_fix", "sql_sample", "sql_sample", "sql_sample",
                                              "sql_sample"]
    assert [c.get("seed") for c in gen.calls[2:]] == [1, 2, 3, 4] and gen.calls[2]["temperature"] == 0.7
    assert runs == [bad, good]  # each distinct query ran once
    assert out.best is not None and out.best.sql == good and out.votes[same_query(good)] == 3


def test_vote_prefers_rows_then_agreement_then_the_earlier(ctx: CheckContext) -> None:
    from kgsql.correct import check_candidate

    a = check_candidate(ctx, "SELECT Name FROM country WHERE Continent = 'Africa'", tips=False)
    b = check_candidate(ctx, "SELECT Name FROM country WHERE Continent = 'Africa' ORDER BY Name DESC", tips=False)
    c = check_candidate(ctx, "SELECT Name FROM country WHERE Continent = 'Europe'", tips=False)
    empty = check_candidate(ctx, "SELECT Name FROM country WHERE Continent = 'Mars'", tips=False)
    failed = check_candidate(ctx, "SELECT nope FROM country", tips=False)
    votes = {same_query(x.sql): 1 for x in (a, b, c, empty, failed)}
    assert vote([empty, c, a, b, failed], votes) is a     # a and b agree (row order ignored): 2 votes
    votes[same_query(c.sql)] = 3
    assert vote([empty, c, a, b, failed], votes) is c     # c was generated three times
    assert vote([failed, empty], votes) is empty          # ran empty beats failed
    assert vote([], votes) is None


def test_without_correction_one_call_and_no_checks_beyond_running(ctx: CheckContext) -> None:
    gen, out = run(ctx, ["SELECT nope FROM city"], correction=False)
    assert len(gen.calls) == 1 and out.best is not None and out.best.error and out.error == out.best.error


def test_output_without_sql_gets_a_tip_and_another_round(ctx: CheckContext) -> None:
    gen, out = run(ctx, ["I cannot answer that.", "SELECT Name FROM city"])
    assert [c["step"] for c in gen.calls] == ["sql", "sql_fix"]
    assert "one SQL query" in gen.calls[1]["tips"] and out.best.sql == "SELECT Name FROM city"  # type: ignore[union-attr]


def test_a_misplaced_column_is_repaired_without_a_model_call(ctx: CheckContext) -> None:
    gen, out = run(ctx, ["SELECT Name FROM city WHERE Continent = 'Africa'"])
    assert [c["step"] for c in gen.calls] == ["sql"] and out.repaired == 1
    assert out.best is not None and "JOIN country ON city.CountryCode = country.Code" in out.best.sql
    assert sorted(out.best.result.rows) == [("Cairo",), ("Nairobi",)]  # type: ignore[union-attr]


def test_an_aggregate_over_nothing_counts_as_empty_and_gets_value_tips(ctx: CheckContext) -> None:
    zero = "SELECT count(*) FROM country WHERE Continent = 'africa'"
    right = "SELECT count(*) FROM country WHERE Continent = 'Africa'"
    gen, out = run(ctx, [zero, right], samples=0)
    assert [c["step"] for c in gen.calls] == ["sql", "sql_fix"]
    assert "It returned only (0,)" in gen.calls[1]["tips"] and "'Africa'" in gen.calls[1]["tips"]
    assert out.best is not None and out.best.sql == right and out.best.result.rows == [(2,)]  # type: ignore[union-attr]


def test_is_vacuous() -> None:
    from kgsql.correct.rules import is_vacuous
    from kgsql.db.guard import QueryResult

    assert is_vacuous(QueryResult(["n"], []))
    assert is_vacuous(QueryResult(["n"], [(0,)])) and is_vacuous(QueryResult(["a", "b"], [(None, 0)]))
    assert not is_vacuous(QueryResult(["n"], [(3,)])) and not is_vacuous(QueryResult(["n"], [(0,), (0,)]))
    assert not is_vacuous(QueryResult(["n"], [("",)]))


def test_a_constant_that_reads_no_table_never_wins_the_vote(ctx: CheckContext) -> None:
    """A sampled ``SELECT 1`` (the model answering by itself) "returns a row"; the empty query that looked
    the answer up, and any query with rows, rank above it; a constant first candidate gets a round and a tip."""
    empty = "SELECT Name FROM city WHERE Name = 'Lagos'"
    gen, out = run(ctx, [empty, empty, "SELECT 1"], samples=1)
    assert [c["step"] for c in gen.calls] == ["sql", "sql_fix", "sql_sample"] and out.candidates[-1] == "SELECT 1"
    assert out.best is not None and out.best.sql == empty
    right = "SELECT count(*) FROM country WHERE Continent = 'Africa'"
    gen, out = run(ctx, ["SELECT '2'", right], samples=0)
    told = gen.calls[1]["tips"]
    assert "It reads no table" in told and "reads no table, so it returns a constant" in told
    assert out.best is not None and out.best.sql == right


def test_reads_no_table() -> None:
    from kgsql.sql.names import parse_sql, reads_no_table

    def constant(sql: str) -> bool:
        return reads_no_table(parse_sql(sql))

    assert constant("SELECT 1") and constant("SELECT '南京市' AS name") and constant("SELECT 46.95 UNION SELECT 2")
    assert not constant("SELECT count(*) FROM city") and not constant("SELECT (SELECT max(ID) FROM city)")
    assert not constant("WITH t AS (SELECT Name FROM city) SELECT * FROM t")
    assert not constant("not sql at all (")  # judged by running it


def test_tip_rounds_are_the_baselines_rounds(ctx: CheckContext) -> None:
    """``tip_rounds`` (the baselines', issue 31): every round is ``sql``; the failed query stays shown over
    a round without SQL; a repeat ends the rounds; the latest of equally ranked candidates is the answer."""
    bad, worse = "SELECT Nme FROM country", "SELECT Nme2 FROM country"
    gen, out = run(ctx, [bad, "I cannot.", worse, worse], tip_rounds=True, join_repair=False, samples=0, max_rounds=5)
    assert [c["step"] for c in gen.calls] == ["sql"] * 4
    assert bad in gen.calls[2]["tips"] and "in a ```sql block" in gen.calls[2]["tips"]
    assert out.best is not None and out.best.sql == worse and out.rounds == 4


def test_tip_rounds_stop_when_the_check_has_nothing_new(ctx: CheckContext) -> None:
    bad = "SELECT Nme FROM country"
    gen, out = run(ctx, [bad, bad + " ", bad], tip_rounds=True, join_repair=False, samples=0, max_rounds=5,
                   tip_kinds=("ambiguous_column",))
    assert len(gen.calls) == 1 and out.tips == []  # its only tip is of another kind: no round to add
