"""ACT-SQL auto-CoT: the paper's Table 13 example, phrase enumeration, caching."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from kgsql.fewshot.cot import AutoCoT, build_cot, item_text, question_phrases, question_words, schema_items
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.ingest.reader import read_database
from kgsql.text.encoder import Encoder, HashEncoder

TV_DDL = """
CREATE TABLE TV_Channel (
    id TEXT PRIMARY KEY, series_name TEXT, Country TEXT, Language TEXT, Content TEXT,
    Pixel_aspect_ratio_PAR TEXT, Hight_definition_TV TEXT, Pay_per_view_PPV TEXT, Package_Option TEXT
);
CREATE TABLE Cartoon (id REAL PRIMARY KEY, Title TEXT, Channel TEXT REFERENCES TV_Channel(id));
"""
QUESTION = "Find the package choice and series name of the TV channel that has high definition TV."
SQL = "SELECT package_option , series_name FROM TV_Channel WHERE Hight_definition_TV = 'yes'"

TABLE_13 = """Let's think step by step.
According to "TV channel that has high definition TV", columns [TV_Channel.Hight_definition_TV] may be used.
According to "package choice and series name", columns [TV_Channel.Package_Option] and [TV_Channel.series_name] may be used.
Values ['yes'] may be used.
So the final answer is:
SELECT package_option , series_name FROM TV_Channel WHERE Hight_definition_TV = 'yes'"""


class ScriptedEncoder(Encoder):
    """Texts listed in ``axes`` get that unit vector; every other text is orthogonal to all of them."""

    name = "scripted"
    dim = 8

    def __init__(self, axes: dict[str, int]) -> None:
        self.axes = axes
        self.calls = 0

    def encode_tokens(self, texts, *, is_query=False):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def encode_pooled(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, self.axes.get(t, self.dim - 1)] = 1.0 if t in self.axes else 0.01
        return out


TABLE_13_ENCODER = {
    "TV channel that has high definition TV": 0, "hight definition tv": 0,
    "package choice and series name": 1, "package option": 1, "series name": 1,
}


@pytest.fixture
def tv(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "tvshow.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(TV_DDL)
    conn.close()
    return read_database(path, name="tvshow")


def test_table_13(tv) -> None:  # type: ignore[no-untyped-def]
    """The paper's Table 13 reasoning (plus the Values line cot.py writes for the literal)."""
    assert build_cot(QUESTION, SQL, tv, ScriptedEncoder(TABLE_13_ENCODER)) == TABLE_13


def test_schema_items_sorted_and_covered_tables_dropped(tv) -> None:  # type: ignore[no-untyped-def]
    assert schema_items(SQL, tv) == [("TV_Channel.Hight_definition_TV", "column"),
                                     ("TV_Channel.Package_Option", "column"), ("TV_Channel.series_name", "column")]
    assert schema_items("SELECT count(*) FROM Cartoon", tv) == [("Cartoon", "table")]
    assert item_text("TV_Channel.Package_Option") == "package option"


def test_tables_and_columns_on_one_phrase(tv) -> None:  # type: ignore[no-untyped-def]
    enc = ScriptedEncoder({"cartoons": 0, "tv channel": 0, "title": 0})
    text = build_cot("How many cartoons have a title?", "SELECT count(*) FROM Cartoon, TV_Channel WHERE Title IS NOT NULL", tv, enc)
    assert 'According to "cartoons", tables [TV_Channel] and columns [Cartoon.Title] may be used.' in text


def test_phrases_are_every_contiguous_span() -> None:
    assert question_words("Who's the TV-channel's owner?") == ["Who's", "the", "TV-channel's", "owner", "?"]
    assert question_phrases("a b c") == ["a", "a b", "a b c", "b", "b c", "c"]


def test_without_schema_only_values_and_answer() -> None:
    assert build_cot("How many are older than 56?", "SELECT count(*) FROM head WHERE age  >  56 ;", None, HashEncoder()) == (
        "Let's think step by step.\nValues [56] may be used.\nSo the final answer is:\n"
        "SELECT count(*) FROM head WHERE age > 56")


def test_autocot_is_cached_per_pool(tv, cache_dir: Path) -> None:  # type: ignore[no-untyped-def]
    pool = ExamplePool([PoolExample(QUESTION, SQL, "tvshow", "tv1")], name="tv", schemas=lambda db: tv)
    enc = ScriptedEncoder(TABLE_13_ENCODER)
    assert AutoCoT(pool, enc).cot(pool[0]) == TABLE_13
    assert enc.calls == 1 and list(cache_dir.glob("cot-tv-*.json"))
    again = ScriptedEncoder(TABLE_13_ENCODER)
    assert AutoCoT(pool, again).cot(pool[0]) == TABLE_13
    assert again.calls == 0
    assert AutoCoT(pool, again).precompute() == 0
