"""Example selection: known nearest neighbours on small hand-made pools (hash encoder, no model)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import SCHEMAS, schemas
from kgsql.errors import UnknownNameError
from kgsql.fewshot.embed import PoolEmbeddings
from kgsql.fewshot.kmeans import representatives
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.fewshot.select import ExampleQuery, available_selectors, get_selector
from kgsql.text.encoder import HashEncoder

ENC = HashEncoder()
SINGERS = ExampleQuery("How many singers are older than 30?", SCHEMAS["concert"])


def ids(examples) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.id for e in examples]


def test_masked_similarity_finds_the_same_question_in_another_domain(pool: ExamplePool) -> None:
    # "how many <mask> are older than <unk> ?" is the pilots question, whatever the domain words
    assert ids(get_selector("masked-similarity", pool, encoder=ENC).select(SINGERS, 1)) == ["p1"]


def test_plain_similarity_is_pulled_by_domain_words(pool: ExamplePool) -> None:
    # without masking, the word "singers" wins over the question's shape
    assert ids(get_selector("question-similarity", pool, encoder=ENC).select(SINGERS, 1)) == ["p2"]


def test_dail_prefers_examples_whose_sql_has_the_preliminary_shape(pool: ExamplePool) -> None:
    selector = get_selector("dail", pool, encoder=ENC)
    assert ids(selector.select(SINGERS, 2)) == ["p1", "p2"]  # no preliminary SQL: plain MQS
    query = ExampleQuery(SINGERS.question, SINGERS.schema, preliminary_sql="SELECT name FROM singer ORDER BY age")
    assert ids(selector.select(query, 2)) == ["p6", "p1"]


def test_the_asked_question_itself_is_never_an_example(pool: ExamplePool) -> None:
    query = ExampleQuery("How many pilots are older than 40 ?", SCHEMAS["flight"])
    picked = ids(get_selector("masked-similarity", pool, encoder=ENC).select(query, 3))
    assert "p1" not in picked and len(picked) == 3
    excluded = ExampleQuery(SINGERS.question, SINGERS.schema, exclude_ids=frozenset({"p1"}))
    assert "p1" not in ids(get_selector("masked-similarity", pool, encoder=ENC).select(excluded, 3))


def test_k_zero_and_none_give_nothing(pool: ExamplePool) -> None:
    assert get_selector("masked-similarity", pool, encoder=ENC).select(SINGERS, 0) == []
    assert get_selector("none", pool).select(SINGERS, 5) == []


CLUSTERED = [  # three question shapes; every domain word is a name in the example's own database
    *(PoolExample(f"How many {x} are there?", f"SELECT count(*) FROM {x}", db, f"count{i}")
      for i, (x, db) in enumerate([("singers", "concert"), ("songs", "concert"), ("pilots", "flight"),
                                   ("products", "shop")])),
    *(PoolExample(f"What is the average {x}?", f"SELECT avg({x}) FROM t", db, f"avg{i}")
      for i, (x, db) in enumerate([("price", "shop"), ("age", "flight"), ("age", "concert")])),
    *(PoolExample(f"List every {x} sorted by name descending.", f"SELECT * FROM {x} ORDER BY name DESC", "school",
                  f"list{i}") for i, x in enumerate(["student", "course"])),
]


def test_static_examples_are_cluster_representatives_biggest_first() -> None:
    pool = ExamplePool(list(CLUSTERED), name="clustered", schemas=schemas)
    picks = ids(get_selector("static", pool, encoder=ENC, seed=0).select(SINGERS, 3))
    assert [p.rstrip("0123456789") for p in picks] == ["count", "avg", "list"]
    again = ids(get_selector("static", pool, encoder=ENC, seed=0).select(ExampleQuery("other"), 3))
    assert again == picks  # fixed: the same for every question and run


def test_typical_examples_are_the_most_common_sql_shapes_shortest_question_first() -> None:
    pool = ExamplePool(CLUSTERED, schemas=schemas)
    selector = get_selector("typical", pool)
    # count(*) x4, then avg x3, then ORDER BY x2; within a shape the shortest question (then pool order)
    assert ids(selector.select(SINGERS, 3)) == ["count1", "avg1", "list1"]
    assert ids(selector.select(ExampleQuery("anything else"), 2)) == ["count1", "avg1"]  # the same for every question
    asked = ExampleQuery("How many songs are there?", SCHEMAS["concert"])  # its own question is never shown
    assert ids(selector.select(asked, 2)) == ["avg1", "list1"]


def test_hybrid_is_static_then_most_similar_without_repeats() -> None:
    pool = ExamplePool(list(CLUSTERED), name="clustered", schemas=schemas)
    selector = get_selector("hybrid", pool, encoder=ENC, n_static=1, dynamic="masked-similarity")
    query = ExampleQuery("List every pilot sorted by name descending.", SCHEMAS["flight"])
    picks = ids(selector.select(query, 3))
    static = ids(get_selector("static", pool, encoder=ENC).select(query, 1))
    assert picks[0] == static[0] and picks[0].startswith("count")
    assert picks[1].startswith("list") and picks[2].startswith("list")
    assert len(set(picks)) == 3


def test_kmeans_is_deterministic_and_separates_clear_clusters() -> None:
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(c, 0.01, size=(n, 2)) for c, n in ((0, 5), (5, 3), (-5, 2))]).astype(np.float32)
    reps = representatives(x, 3, seed=7)
    assert reps == representatives(x, 3, seed=7)
    assert [round(float(x[i, 0])) for i in reps] == [0, 5, -5]


def test_random_is_reproducible(pool: ExamplePool) -> None:
    a = ids(get_selector("random", pool, seed=3).select(SINGERS, 3))
    assert a == ids(get_selector("random", pool, seed=3).select(SINGERS, 3)) and len(set(a)) == 3


def test_unknown_selector() -> None:
    with pytest.raises(UnknownNameError, match="masked-similarity"):
        get_selector("nearest", ExamplePool([]))
    assert {"dail", "hybrid", "masked-similarity", "static"} <= set(available_selectors())


class CountingEncoder(HashEncoder):
    def __init__(self) -> None:
        super().__init__()
        self.pooled_calls = 0

    def encode_pooled(self, texts, *, is_query=False):  # type: ignore[no-untyped-def]
        self.pooled_calls += len(texts)
        return super().encode_pooled(texts, is_query=is_query)


def test_pool_embeddings_are_cached_on_disk(pool: ExamplePool, cache_dir: Path) -> None:
    enc = CountingEncoder()
    first = PoolEmbeddings(pool, enc, masked=True).vectors
    assert enc.pooled_calls == len(pool)
    assert first.shape == (len(pool), enc.dim)
    assert list(cache_dir.glob("emb-handmade-*.npy"))
    second = PoolEmbeddings(pool, enc, masked=True).vectors
    assert enc.pooled_calls == len(pool)  # loaded, not recomputed
    np.testing.assert_array_equal(first, second)
    # a different pool content is a different cache entry
    other = ExamplePool([*pool.examples[:-1]], name="handmade", schemas=schemas)
    PoolEmbeddings(other, enc, masked=True).vectors
    assert enc.pooled_calls == 2 * len(pool) - 1


def test_selectors_say_whether_their_picks_depend_on_the_question(pool: ExamplePool) -> None:
    """A prompt may show question-independent examples first (cached); the flag must match the picks."""
    other = ExampleQuery("What is the average price of the products?", SCHEMAS["shop"])
    for name in available_selectors():
        selector = get_selector(name, pool, encoder=ENC)
        same = ids(selector.select(SINGERS, 3)) == ids(selector.select(other, 3))
        assert selector.per_question is not same, name
