"""Masked questions (DAIL-SQL), SQL values and skeletons."""
from __future__ import annotations

import pytest

from conftest import SCHEMAS
from kgsql.fewshot.mask import mask_question, norm_word
from kgsql.fewshot.sqlparts import skeleton_similarity, sql_literal, sql_skeleton, sql_values


@pytest.mark.parametrize("question,db,values,expected", [
    ("How many singers are older than 30?", "concert", (), "how many <mask> are older than <unk> ?"),
    ("What are the names and countries of singers?", "concert", (), "what are the <mask> and <mask> of <mask> ?"),
    ("Which singers are from France?", "concert", ("France",), "which <mask> are from <unk> ?"),
    ('Show songs titled "Love Me Do".', "concert", (), "show <mask> titled <unk> ."),
    ("How many students live in New York City?", "school", ("New York City",),
     "how many <mask> live in <unk> ?"),
    ("List the home cities of students.", "school", (), "list the <mask> of <mask> ."),
    ("What is the singer's age?", "concert", (), "what is the <mask> ?"),
])
def test_mask_question(question: str, db: str, values: tuple[str, ...], expected: str) -> None:
    assert mask_question(question, SCHEMAS[db], values=values) == expected


def test_mask_without_schema_masks_values_only() -> None:
    assert mask_question("How many singers are older than 30?") == "how many singers are older than <unk> ?"


def test_short_or_stopword_values_are_not_masked() -> None:
    # a value "the" or "1" would mask half of every question
    assert mask_question("Show the list", values=("the", "1")) == "show the list"


@pytest.mark.parametrize("word,expected", [("Singers", "singer"), ("cities", "city"), ("singer's", "singer"),
                                           ("boxes", "box"), ("class", "class"), ("status", "status")])
def test_norm_word(word: str, expected: str) -> None:
    assert norm_word(word) == expected


def test_sql_values() -> None:
    assert sql_values("SELECT name FROM singer WHERE age > 30 AND country = 'France' LIMIT 3") == ["30", "France"]
    # Spider writes strings in double quotes
    assert sql_values('SELECT a FROM t WHERE b = "yes" AND c IN ("x", "y")') == ["yes", "x", "y"]
    assert sql_values("SELEC broken 'v1' \"v2\"") == ["v1", "v2"]
    assert sql_values("SELECT a FROM t WHERE b = 2", numbers=False) == []


def test_sql_literal() -> None:
    assert sql_literal("30", "SELECT a FROM t WHERE b > 30") == "30"
    assert sql_literal("30", "SELECT a FROM t WHERE b = '30'") == "'30'"
    assert sql_literal("O'Neil", "") == "'O''Neil'"


def test_skeleton() -> None:
    assert sql_skeleton("SELECT count(*) , max(T1.age) FROM head AS T1 WHERE age > 56") == \
        "SELECT COUNT ( * ) , MAX ( _ ) FROM _ AS _ WHERE _ > _"
    assert sql_skeleton("SELECT name FROM singer WHERE age > 30") == sql_skeleton("select title from film where year > 1990")
    assert skeleton_similarity("SELECT name FROM singer WHERE age > 30", "SELECT title FROM film WHERE year > 1990") == 1.0
    assert skeleton_similarity("SELECT count(*) FROM a", "SELECT a FROM b ORDER BY c") < 0.6
