"""The model's least sure name, read from the SQL call's token log-probabilities, and the check it gates."""
from __future__ import annotations

import math

from kgsql.correct import CheckContext
from kgsql.correct.confidence import Choice, least_sure_choice, unsure_of, written_names
from kgsql.correct.loop import CorrectionLoop, LoopOptions
from kgsql.generate.parts import PromptParts
from kgsql.generate.sqlgen import FormattedSQLGenerator
from kgsql.llm.base import Completion
from kgsql.llm.scripted import ScriptedLM
from kgsql.llm.trace import Trace
from kgsql.sql.names import parse_sql
from tests.stages.test_loop import ctx  # noqa: F401  (the world database's check context)

SURE, UNSURE = math.log(0.97), math.log(0.35)


def tokens(*pairs: tuple[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(pairs)


def africa(name_logprob: float) -> Completion:
    """``SELECT city.Name FROM city ...`` as the model wrote it, ``Name`` with the given log-probability."""
    toks = tokens(("SELECT", SURE), (" city", SURE), (".Name", name_logprob), (" FROM", SURE), (" city", SURE), (" JOIN", SURE),
                  (" country", SURE), (" ON", SURE), (" Country", SURE), ("Code", SURE), (" =", SURE),
                  (" Code", SURE), (" WHERE", SURE), (" Contin", SURE), ("ent", SURE), (" = 'Africa'", SURE))
    return Completion(text="".join(t for t, _ in toks), prompt_tokens=0, completion_tokens=len(toks),
                      token_logprobs=toks)


def test_the_least_sure_name_is_the_first_writing_of_the_least_probable_one() -> None:
    sql = "SELECT T1.name FROM singer AS T1 WHERE T1.age > 30 ORDER BY T1.name"
    names = written_names(parse_sql(sql))
    assert names == {"singer", "name", "age"}  # aliases (T1) are no choice of a name
    toks = tokens(("SELECT", SURE), (" T", math.log(0.4)), ("1", SURE), (".name", math.log(0.6)), (" FROM", SURE),
                  (" singer", SURE), (" AS", SURE), (" T", SURE), ("1", SURE), (" WHERE", SURE), (" T", SURE),
                  ("1", SURE), (".age", math.log(0.5)), (" >", SURE), (" 30", SURE), (" ORDER BY", SURE),
                  (" T", SURE), ("1", SURE), (".name", math.log(0.1)))  # the second "name" copies the first
    choice = least_sure_choice(toks, names)
    assert choice == Choice("age", 0.5)
    assert choice.to_dict() == {"name": "age", "probability": 0.5}
    assert least_sure_choice((), names) is None and least_sure_choice(toks, {"height"}) is None
    assert written_names(None) == set()


def test_unknown_confidence_counts_as_unsure() -> None:
    assert unsure_of(None, 0.6) and unsure_of(Choice("age", 0.5), 0.6)
    assert not unsure_of(Choice("age", 0.7), 0.6) and unsure_of(Choice("age", 0.99), 1.0)


def run_loop(ctx: CheckContext, first: Completion, **options: object):  # noqa: F811
    reading = "SELECT Name FROM country WHERE Continent = 'Africa'"
    lm = ScriptedLM({"sql": first, "sql_opinion": reading})
    generator = FormattedSQLGenerator(lm, "schema-first", logprobs=True)
    prompt = PromptParts(question="Which cities are in Africa?", schema="CREATE TABLE city (...)")
    return lm, CorrectionLoop(generator, LoopOptions(**options)).run(prompt, "Which cities are in Africa?", ctx,
                                                                     Trace())


def test_readings_check_only_an_answer_whose_model_was_unsure(ctx: CheckContext) -> None:  # noqa: F811
    lm, out = run_loop(ctx, africa(UNSURE), opinions=2, opinions_below=0.6)
    assert lm.calls[0].params.get("logprobs") is True  # asked on the same call
    assert out.least_sure == Choice("Name", 0.35)
    assert [c.step for c in lm.calls] == ["sql", "sql_opinion", "sql_opinion"] and len(out.opinions) == 2
    lm, out = run_loop(ctx, africa(SURE), opinions=2, opinions_below=0.6)
    assert out.least_sure is not None and out.least_sure.probability > 0.6
    assert [c.step for c in lm.calls] == ["sql"] and out.opinions == []
    lm, out = run_loop(ctx, africa(SURE), opinions=2)  # the default checks every answer, sure or not
    assert [c.step for c in lm.calls] == ["sql", "sql_opinion", "sql_opinion"]


def test_an_answer_without_log_probabilities_is_checked_as_before(ctx: CheckContext) -> None:  # noqa: F811
    plain = Completion(text=africa(SURE).text, prompt_tokens=0, completion_tokens=0)
    lm, out = run_loop(ctx, plain, opinions=1, opinions_below=0.6)
    assert out.least_sure is None and [c.step for c in lm.calls] == ["sql", "sql_opinion"]


def test_the_explanation_names_a_name_the_model_hesitated_over(ctx: CheckContext) -> None:  # noqa: F811
    from kgsql.generate.answer import Answer
    from kgsql.generate.review import review

    def lines(least_sure: dict[str, object]) -> list[str]:
        answer = Answer(question="Which cities are in Africa?", db="world", sql=africa(SURE).text,
                        rows=[("Cairo",)], columns=["Name"], least_sure=least_sure)
        return review(answer, ctx.schema).explanation["lines"]

    hesitant = lines({"name": "Name", "probability": 0.35})
    assert hesitant[-1] == "The model hesitated over Name (probability 0.35): check it is what the question means"
    assert hesitant[:-1] == lines({"name": "Name", "probability": 0.8}) == lines({})
    assert any(line.startswith("Reads") for line in hesitant)
