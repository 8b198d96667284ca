"""A database's question log routes what its schema cannot: two observatories with one schema are a close
call until one of them has been asked about telescopes before. Real graph, real encoder."""
from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from route_databases import CLOSE_CALL, make_databases

from kgsql.errors import InputError
from kgsql.graph.examples import list_examples, remove_examples, save_examples
from kgsql.mining.history import Pair, pair_id
from kgsql.route.graph_router import GraphRouter
from kgsql.route.history import QuestionLog, build_log, graph_log_digest, graph_questions, log_scores
from kgsql.route.router import DatabaseRouter
from kgsql.text.encoder import get_encoder

TAG = "rh"  # databases of their own: teaching them must not change the other routing tests' graph


@pytest.fixture()
def observatories(schema_graph, tmp_path):  # type: ignore[no-untyped-def]
    names = make_databases(tmp_path / "dbs", TAG)
    schema_graph.ingest(tmp_path / "dbs")
    yield names, GraphRouter(schema_graph, get_encoder(), cache_dir=tmp_path / "cache", only=set(names.values()))
    for name in names.values():
        schema_graph.drop(name)


def teach(graph, db: str, questions: list[str]) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT count(*) FROM telescopes"
    pairs = [Pair(pair_id(db, q, sql), db, q, sql) for q in questions]
    save_examples(graph.store, db, pairs, "test")


def test_a_taught_question_log_settles_a_close_call(schema_graph, observatories):  # type: ignore[no-untyped-def]
    names, router = observatories
    before = router.route(CLOSE_CALL)
    assert before.close  # one schema twice: nothing tells them apart
    south = names["observatory_south"]
    teach(schema_graph, south, ["How many telescopes does the observatory have?",
                                "List every telescope with its aperture."])
    teach(schema_graph, names["apiary"], ["How much honey did the hives give?"])
    after = router.route(CLOSE_CALL)  # the router sees the log changed and rebuilds
    assert after.db == south and not after.close, after.to_dict()
    assert router.route("How much honey did each hive give?").db == names["apiary"]  # the schema still counts


def test_the_log_is_read_from_the_graph_and_cached_by_its_questions(  # type: ignore[no-untyped-def]
        schema_graph, observatories, tmp_path):
    names, _router = observatories
    teach(schema_graph, names["lighthouse"], ["Who kept the Longships light?", "Which coast is Bell Rock on?"])
    questions = graph_questions(schema_graph.store)
    assert sorted(questions[names["lighthouse"]]) == ["Which coast is Bell Rock on?", "Who kept the Longships light?"]
    order = list(names.values())
    log = build_log(get_encoder(), order, questions, cache_dir=tmp_path)
    assert len(log) == 2 and set(log.owner.tolist()) == {order.index(names["lighthouse"])}
    cached = build_log(_NoEncoding(get_encoder()), order, questions, cache_dir=tmp_path)  # read back, not encoded
    assert np.allclose(cached.vectors, log.vectors, atol=1e-3)


def test_a_growing_log_encodes_only_its_new_questions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    encoder = _Counting(get_encoder())
    first = {"lighthouse": ["Who kept the Longships light?", "Which coast is Bell Rock on?"]}
    log = build_log(encoder, ["lighthouse"], first, cache_dir=tmp_path)
    assert encoder.encoded == 2
    grown = {"lighthouse": [*first["lighthouse"], "How tall is Eddystone?"]}
    again = build_log(encoder, ["lighthouse"], grown, cache_dir=tmp_path)
    assert encoder.encoded == 3 and len(again) == 3  # one new question, one encoding
    assert np.allclose(again.vectors[:2], log.vectors, atol=1e-3)
    shrunk = {"lighthouse": grown["lighthouse"][1:]}
    assert len(build_log(encoder, ["lighthouse"], shrunk, cache_dir=tmp_path)) == 2 and encoder.encoded == 3
    (entry,) = (tmp_path / "log").glob("*.npz")  # one file for the database, the removed question gone
    entry.write_bytes(entry.read_bytes()[:40])  # cut short: read as missing, encoded again
    assert len(build_log(encoder, ["lighthouse"], shrunk, cache_dir=tmp_path)) == 2 and encoder.encoded == 5


def test_the_digest_sees_one_example_removed_and_another_added_at_once(  # type: ignore[no-untyped-def]
        schema_graph, observatories, monkeypatch):
    import kgsql.graph.examples as examples

    class _SameSecond(datetime):
        """Every call within one second, a microsecond later each time: the case a seconds stamp misses."""
        calls = 0

        @classmethod
        def now(cls, tz=None):  # type: ignore[no-untyped-def]
            cls.calls += 1
            return datetime(2026, 1, 1, 12, 0, 0, cls.calls, tzinfo=tz)

    monkeypatch.setattr(examples, "datetime", _SameSecond)
    names, _router = observatories
    db = names["apiary"]
    teach(schema_graph, db, ["How much honey did the hives give?", "Which hive swarmed?"])
    before = [d for d in graph_log_digest(schema_graph.store) if d[0] == db]
    gone = [e["key"] for e in list_examples(schema_graph.store, db) if e["question"] == "Which hive swarmed?"]
    assert remove_examples(schema_graph.store, db, gone) == 1
    teach(schema_graph, db, ["Which queen is the oldest?"])  # same count, within the same second
    after = [d for d in graph_log_digest(schema_graph.store) if d[0] == db]
    assert before[0][1] == after[0][1] == 2 and before != after


def test_routing_by_the_log_alone_needs_a_log(observatories) -> None:  # type: ignore[no-untyped-def]
    _names, router = observatories
    with pytest.raises(InputError, match="needs a question log"):
        DatabaseRouter(router.router().index, get_encoder(), mode="history").route(CLOSE_CALL)


def test_databases_without_a_log_say_nothing_and_a_tiny_gap_stays_tiny() -> None:
    log = QuestionLog(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], np.float32), np.array([0, 2, 3]))
    best = log.best(np.array([1.0, 0.0], np.float32), 5)
    assert np.isnan(best[1]) and np.isnan(best[4]) and np.allclose(best[[0, 2, 3]], [1.0, 0.0, 0.6])
    scores = log_scores(best)
    assert scores[1] == scores[4] == 0.0 and scores[0] > scores[3] > 0 > scores[2]
    # two logged databases of 163 whose best questions differ by 0.001: not +1 / -1 on the fused scale
    near = np.full(163, np.nan)
    near[:2] = [0.7076, 0.7066]
    assert np.abs(log_scores(near)).max() < 0.02
    assert log_scores(np.full(3, np.nan)).tolist() == [0.0] * 3  # no log at all: nothing


class _NoEncoding:
    """The real encoder's name and size, but encoding fails: what is read must come from the cache."""

    def __init__(self, encoder) -> None:  # type: ignore[no-untyped-def]
        self.name, self.dim = encoder.name, encoder.dim

    def encode_pooled(self, *_a, **_k):  # type: ignore[no-untyped-def]
        pytest.fail("the cached log was encoded again")


class _Counting:
    """The real encoder, counting the texts it encodes."""

    def __init__(self, encoder) -> None:  # type: ignore[no-untyped-def]
        self.encoder, self.name, self.dim, self.encoded = encoder, encoder.name, encoder.dim, 0

    def encode_pooled(self, texts, **kwargs):  # type: ignore[no-untyped-def]
        self.encoded += len(texts)
        return self.encoder.encode_pooled(texts, **kwargs)
