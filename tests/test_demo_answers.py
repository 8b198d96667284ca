"""The demo prints an answer's flags as ``ask`` does: the first thing a newcomer reads says what to check."""
from __future__ import annotations

from pathlib import Path

import pytest


def test_the_demo_shows_an_answers_flags(schema_graph, example_db: Path, unique_name,  # type: ignore[no-untyped-def]
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import kgsql.llm.factory as factory
    from kgsql.demo import answer_questions
    from kgsql.llm.scripted import ScriptedLM

    db = unique_name("geo")
    schema_graph.ingest(example_db, name=db)
    empty = "SELECT name FROM rivers WHERE name = 'No Such River'"
    monkeypatch.setattr(factory, "default_lm", lambda *_a, **_k: ScriptedLM(default=empty))
    answer_questions(schema_graph, db, ["Which river is called No Such River?"])
    out = capsys.readouterr().out
    assert "Warning [empty-result]:" in out and out.index("SQL:") < out.index("Warning [empty-result]:")


def test_the_demos_longest_river_ranked_by_area_is_flagged(schema_graph, example_db: Path,  # type: ignore[no-untyped-def]
                                                            unique_name, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The 0.5B model's real answer to the demo's first question ranks rivers by their provinces' area (on the
    example it even names the right river, by luck) and carried no flag; now the flag names the mismatch.
    The right query carries none."""
    import kgsql.llm.factory as factory
    from kgsql.demo import answer_questions
    from kgsql.llm.scripted import ScriptedLM

    db = unique_name("geo")
    schema_graph.ingest(example_db, name=db)
    by_area = ("SELECT rivers.name FROM rivers JOIN river_cities ON river_cities.river_id = rivers.river_id "
               "JOIN cities ON river_cities.city_id = cities.city_id JOIN provinces ON cities.province_id = "
               "provinces.province_id ORDER BY Area(provinces.Shape, 1) DESC LIMIT 1")
    by_length = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"
    lm = ScriptedLM([by_area, by_length])  # one model for both runs: the first answer, then the second
    monkeypatch.setattr(factory, "default_lm", lambda *_a, **_k: lm)
    answer_questions(schema_graph, db, ["Which river is the longest?"])
    out = capsys.readouterr().out
    assert ("Warning [other-measure]: the question asks for the longest, and the query ranks by "
            "Area(provinces.Shape, 1), which measures area") in out, out
    answer_questions(schema_graph, db, ["Which river is the longest?"])
    out = capsys.readouterr().out
    assert "ORDER BY length_km DESC" in out and "other-measure" not in out
