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
