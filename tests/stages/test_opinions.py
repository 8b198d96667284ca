"""Second opinions: readings sampled after the answer check it, and never change it."""
from __future__ import annotations

from decimal import Decimal

from kgsql.correct import CheckContext, Checked
from kgsql.correct.loop import CorrectionLoop, LoopOptions
from kgsql.correct.opinions import FIRST_SEED, Opinion, agreeing, differing, doubted, same_rows
from kgsql.db.result import QueryResult
from kgsql.generate.explain import explain_sql
from kgsql.generate.flags import FLAG_CODES, answer_flags
from kgsql.llm.trace import Trace
from tests.stages.test_loop import Scripted, ctx, run  # noqa: F401  (the fixture and the scripted loop)

AFRICA = "SELECT city.Name FROM city JOIN country ON CountryCode = Code WHERE Continent = 'Africa'"
SAME_ROWS = "SELECT Name FROM city WHERE CountryCode IN ('KEN', 'EGY')"
OTHER_ROWS = "SELECT Name FROM country WHERE Continent = 'Africa'"


def test_opinions_are_sampled_from_the_first_prompt_and_compared_by_rows(ctx: CheckContext) -> None:  # noqa: F811
    gen, out = run(ctx, [AFRICA, OTHER_ROWS, "SELECT nothing FROM nowhere", "no sql here", SAME_ROWS, AFRICA],
                   opinions=5)
    assert [c["step"] for c in gen.calls] == ["sql"] + ["sql_opinion"] * 4  # the one that agreed ended them
    assert [c["seed"] for c in gen.calls[1:]] == list(range(FIRST_SEED, FIRST_SEED + 4))
    assert all(c["tips"] == "" and c["temperature"] == 0.7 for c in gen.calls[1:])
    assert [o.agrees for o in out.opinions] == [False, None, None, True]
    assert out.opinions[0].sql == OTHER_ROWS and out.opinions[2].sql == ""
    # the check is no candidate: the answer, its candidates, rounds and repairs are the first call's
    assert out.best is not None and out.best.sql == AFRICA
    assert out.candidates == [AFRICA] and out.rounds == 1 and out.repaired == 0
    assert agreeing(out.opinions) == 1 and differing(out.opinions) == 1


def test_no_opinions_for_an_answer_without_rows_or_when_off(ctx: CheckContext) -> None:  # noqa: F811
    empty = "SELECT Name FROM city WHERE Name = 'Atlantis'"
    gen, out = run(ctx, [empty, empty], opinions=3, samples=0)
    assert "sql_opinion" not in [c["step"] for c in gen.calls] and out.opinions == []
    gen, out = run(ctx, [AFRICA])
    assert [c["step"] for c in gen.calls] == ["sql"] and out.opinions == []


def test_other_reading_flag_needs_enough_readings_with_other_rows(ctx: CheckContext) -> None:  # noqa: F811
    assert "other-reading" in FLAG_CODES

    def codes(opinions: list[Opinion] | list[dict[str, object]]) -> list[str]:
        explanation = explain_sql(AFRICA, ctx.schema)
        return [f.code for f in answer_flags(question="Which cities are in Africa?", sql=AFRICA, schema=ctx.schema,
                                             explanation=explanation, rows=[("Cairo",), ("Nairobi",)],
                                             opinions=opinions)]

    other, same, failed = Opinion(OTHER_ROWS, False), Opinion(SAME_ROWS, True), Opinion("", None)
    assert "other-reading" not in codes([])
    assert "other-reading" not in codes([other, other, same])  # one reading that agrees outweighs the rest
    assert "other-reading" not in codes([failed, failed, failed])  # readings that failed say nothing
    assert "other-reading" in codes([other, failed, failed])
    assert "other-reading" in codes([o.to_dict() for o in (other, other)])  # as records keep them
    assert doubted([other]) and not doubted([]) and not doubted([same, other])


def test_rows_are_compared_in_order_where_both_queries_order_them(ctx: CheckContext) -> None:  # noqa: F811
    by_name = "SELECT Name FROM city ORDER BY Name"
    _, out = run(ctx, [by_name, "SELECT Name FROM city ORDER BY ID DESC", "SELECT Name FROM city"], opinions=3)
    assert [o.agrees for o in out.opinions] == [False, True]
    _, out = run(ctx, [by_name, "SELECT Name FROM city ORDER BY Name ASC"], opinions=3)
    assert [o.agrees for o in out.opinions] == [True]


def test_a_distinct_more_or_a_column_more_is_no_other_reading(ctx: CheckContext) -> None:  # noqa: F811
    answer = "SELECT Continent FROM country GROUP BY Continent ORDER BY count(*) DESC LIMIT 1"
    # a count beside it; the same continent copied by a join; Egypt's continent beside its name: the same
    # answer; Europe is another
    for other, agrees in (
            ("SELECT Continent, count(*) FROM country GROUP BY Continent ORDER BY count(*) DESC LIMIT 1", True),
            ("SELECT country.Continent FROM country JOIN city ON CountryCode = Code WHERE Continent = 'Africa'", True),
            ("SELECT Name, Continent FROM country WHERE Code = 'EGY'", True),
            ("SELECT Continent FROM country WHERE Continent != 'Africa'", False)):
        _, out = run(ctx, [answer, other], opinions=1)
        assert [o.agrees for o in out.opinions] == [agrees], other


def test_a_reading_that_comes_back_empty_or_vacuous_says_nothing(ctx: CheckContext) -> None:  # noqa: F811
    _, out = run(ctx, [AFRICA, "SELECT Name FROM city WHERE Name = 'Atlantis'",
                       "SELECT count(*) FROM city WHERE Name = 'Atlantis'", OTHER_ROWS], opinions=3)
    assert [o.agrees for o in out.opinions] == [None, None, False]


def test_a_model_error_while_checking_keeps_the_answer(ctx: CheckContext) -> None:  # noqa: F811
    from kgsql.errors import LLMError

    class FailsLater(Scripted):
        def generate(self, prompt, question, trace, *, tips="", step=None, **params):  # type: ignore[no-untyped-def]
            if step == "sql_opinion" and len(self.calls) == 2:
                raise LLMError("the model server timed out")
            return super().generate(prompt, question, trace, tips=tips, step=step, **params)

    gen = FailsLater([AFRICA, OTHER_ROWS])
    out = CorrectionLoop(gen, LoopOptions(opinions=3)).run(None, "q", ctx, Trace())
    assert out.best is not None and out.best.sql == AFRICA and out.error is None
    assert [o.agrees for o in out.opinions] == [False]  # the readings made before the error


def _checked(rows: list[tuple[object, ...]]) -> Checked:
    return Checked("SELECT 1", QueryResult(["c"] * (len(rows[0]) if rows else 1), rows), None, [])


def test_same_rows_reads_numbers_by_value_and_many_columns_quickly() -> None:
    assert same_rows(_checked([(30,)]), _checked([(30.0,)]))
    assert same_rows(_checked([(Decimal("1.50"), "a")]), _checked([("a", 1.5)]))  # columns in another order
    assert not same_rows(_checked([(None,)]), _checked([(0,)]))
    assert same_rows(_checked([]), _checked([])) and not same_rows(_checked([]), _checked([(1,)]))
    assert not same_rows(_checked([()]), _checked([(1,)]))  # no columns say nothing
    wide = [(1, 2) + (None,) * 12]  # a SELECT * of mostly empty columns: searched without revisiting columns
    assert same_rows(_checked(wide), _checked(wide))
    assert same_rows(_checked([(2, 1)]), _checked(wide)) and not same_rows(_checked([(2, 3)]), _checked(wide))
    wider = [(1, 2, 3) + (None,) * 12]  # no reading of two columns that both hold only 3: found out at once
    assert not same_rows(_checked([(3, 3) + (None,) * 12]), _checked(wider))
