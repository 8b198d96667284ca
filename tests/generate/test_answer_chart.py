"""``answer.chart``, ``answer.show_chart()`` and the chart in an answer's notebook view (issue 34)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kgsql.db.guard import execute_query
from kgsql.errors import InputError
from kgsql.generate.answer import Answer
from kgsql.generate.chart import chart_spec


def answer_of(db: Path, sql: str) -> Answer:
    """An answer as a method fills it: the SQL and the guarded query's rows."""
    result = execute_query(db, sql)
    return Answer(question="?", db="geo", sql=sql, columns=result.columns, rows=result.rows,
                  truncated=result.truncated)


def test_the_answer_carries_its_chart(example_db: Path) -> None:
    answer = answer_of(example_db, "SELECT name, shape FROM provinces")
    assert answer.chart == chart_spec(answer.columns, answer.rows) and answer.chart is not None
    assert answer.chart["usermeta"]["kgsql"]["chart"] == "map"
    failed = Answer(question="?", db="geo", sql="SELECT", columns=["a", "b"], rows=[("x", 1), ("y", 2)], error="no")
    assert failed.chart is None
    assert answer_of(example_db, "SELECT name FROM cities").chart is None


def test_without_altair_the_notebook_view_says_how_to_get_the_chart(example_db: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "altair", None)  # import altair fails, as where it is not installed
    answer = answer_of(example_db, "SELECT name, population FROM cities")
    html = answer._repr_html_()
    assert "A bar chart fits this answer: pip install &#x27;kgsql[notebook]&#x27; (Altair) to draw it." in html
    assert "<table>" in html  # the rows stay
    with pytest.raises(InputError, match=r"needs Altair: pip install 'kgsql\[notebook\]'"):
        answer.show_chart()
    assert "chart fits" not in answer_of(example_db, "SELECT COUNT(*) FROM cities")._repr_html_()


def test_with_altair_the_notebook_draws_the_chart(example_db: Path) -> None:
    alt = pytest.importorskip("altair", reason="altair not installed (pip install 'kgsql[notebook]')")
    answer = answer_of(example_db, "SELECT name, Location FROM cities")
    chart = answer.show_chart()
    assert isinstance(chart, alt.LayerChart)
    drawn = chart.to_dict()
    assert drawn["layer"][0]["data"] == answer.chart["layer"][0]["data"]  # type: ignore[index]
    alt.LayerChart.from_dict(answer.chart, validate=True)  # valid for the installed Altair's Vega-Lite too
    first, second = answer._repr_html_(), answer._repr_html_()
    assert "vegaEmbed" in first and "Harbourg" in first and "kgsql-chart-" in first
    assert first.split("kgsql-chart-")[1][:12] != second.split("kgsql-chart-")[1][:12]  # one div per view
    bars = answer_of(example_db, "SELECT name, population FROM cities").show_chart()
    assert isinstance(bars, alt.Chart) and bars.to_dict()["mark"] in ("bar", {"type": "bar"})
    with pytest.raises(InputError, match="no chart fits"):
        answer_of(example_db, "SELECT name FROM cities").show_chart()
