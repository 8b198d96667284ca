"""What a notebook user sees of an answer: a short repr, an HTML table, a DataFrame."""
from __future__ import annotations

import pytest

from kgsql.generate.answer import Answer


def answer(**kw) -> Answer:  # type: ignore[no-untyped-def]
    base = dict(question="Which river is longest?", db="geo", sql="SELECT name FROM rivers LIMIT 1",
                columns=["name"], rows=[("Silver <River>",)], tokens={"total": 812}, latency_s=1.25)
    return Answer(**{**base, **kw})


def test_repr_is_one_short_line() -> None:
    assert repr(answer()) == "Answer(db='geo', sql='SELECT name FROM rivers LIMIT 1', rows=1, tokens=812, 1.2s)"
    long = repr(answer(sql="SELECT " + "x, " * 100 + "y FROM t", error="no such column: x", rows=[]))
    assert "error='no such column: x'" in long and len(long) < 200 and "\n" not in long


def test_html_shows_the_sql_and_an_escaped_table() -> None:
    html = answer()._repr_html_()
    assert "<pre>SELECT name FROM rivers LIMIT 1</pre>" in html
    assert "<th>name</th>" in html and "<td>Silver &lt;River&gt;</td>" in html
    many = answer(rows=[(str(i),) for i in range(25)], truncated=True)._repr_html_()
    assert many.count("<tr>") == 21 and "5 more rows (truncated)" in many
    assert "color:#b00'>boom</p>" in answer(error="boom")._repr_html_()
    cells = answer(columns=["avg", "note"], rows=[(11.350000000000001, None)])._repr_html_()
    assert "<td>11.35</td><td>NULL</td>" in cells  # as `kgsql ask` and the page show them


def test_df_is_a_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    df = answer(rows=[("a",), ("b",)]).df
    assert isinstance(df, pd.DataFrame) and list(df["name"]) == ["a", "b"]


def test_a_table_shows_itself_briefly_and_as_html() -> None:
    from kgsql.schema.model import Column, Table

    t = Table("cities", [Column("city_id", "INTEGER", is_primary_key=True), Column("name", "TEXT", description="<n>",
                                                                                    value_examples=["Oster"])],
              row_count=12)
    assert repr(t) == "Table('cities', rows=12, columns=[city_id, name])"
    html = t._repr_html_()
    assert "<b>cities</b> (12 rows)" in html and "<td>&lt;n&gt;</td><td>Oster</td>" in html
