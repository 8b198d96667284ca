"""``eval run --replay``: an earlier run's recorded model outputs answer the calls; no model is asked."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgsql.eval.records import read_records
from kgsql.eval.replay import NOT_REPLAYABLE, ReplayLM, prompt_fingerprint
from kgsql.eval.run import run_eval
from kgsql.llm.scripted import ScriptedLM

from tests.eval.test_run import ANSWERS, question_of, spider_args, spider_dir  # noqa: F401 - fixture

HARD = "How many items cost more than 5?"
# The sampled candidates for the hard question, by seed: wrong, right, right, wrong.
SAMPLES = {1: "SELECT count(*) FROM item", 2: "SELECT count(*) FROM item WHERE price > 5",
           3: "SELECT count(*) FROM item WHERE price > 5", 4: "SELECT count(*) FROM item"}


def recording_lm() -> ScriptedLM:
    """Right for the easy questions; the hard one fails greedily (a column no table has), then is sampled."""
    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        question = question_of(messages)
        if question != HARD:
            return f"```sql\n{ANSWERS.get(question, 'SELECT 1')}\n```"
        if step == "sql_sample":
            return f"```sql\n{SAMPLES[params['seed']]}\n```"
        return "```sql\nSELECT count(*) FROM item WHERE cost > 5\n```"

    return ScriptedLM(reply)


FOUR = ("--set", "samples=4")  # the recording draws four samples; replays ask for as many unless told


def replay(spider_dir: Path, recorded: Path, out: Path, graph: Any, *sets: str) -> dict[str, Any]:
    args = spider_args(spider_dir, out, "--replay", str(recorded / "records.jsonl"), *FOUR, *sets)
    run_eval(args, graph=graph, say=lambda s: None)  # no lm: the records answer
    return {r.id: r for r in read_records(out / "records.jsonl")}


@pytest.fixture()
def recorded(spider_dir: Path, tmp_path: Path, schema_graph: Any) -> Path:  # noqa: F811 - fixture
    out = tmp_path / "recorded"
    run_eval(spider_args(spider_dir, out, *FOUR), lm=recording_lm(), graph=schema_graph, say=lambda s: None)
    return out


def test_replay_with_the_same_options_reproduces_the_run_without_a_model(
        spider_dir: Path, recorded: Path, tmp_path: Path, schema_graph: Any) -> None:  # noqa: F811
    original = {r.id: r for r in read_records(recorded / "records.jsonl")}
    hard = next(r for r in original.values() if r.question == HARD)
    assert [c["step"] for c in hard.extra["calls"]].count("sql_sample") == 4
    assert all(c["prompt_sha"] for c in hard.extra["calls"])
    again = replay(spider_dir, recorded, tmp_path / "again", schema_graph)
    assert {i: (r.pred, r.spider_ex) for i, r in again.items()} == \
        {i: (r.pred, r.spider_ex) for i, r in original.items()}
    # the replay costs what the recording cost: same calls, tokens and model seconds
    assert again[hard.id].extra["llm_s"] == pytest.approx(hard.extra["llm_s"], abs=0.01)
    assert again[hard.id].extra["tokens_prompt"] == hard.extra["tokens_prompt"]


def test_fewer_samples_is_an_exact_counterfactual(spider_dir: Path, recorded: Path, tmp_path: Path,
                                                  schema_graph: Any) -> None:  # noqa: F811
    hard_id = next(r.id for r in read_records(recorded / "records.jsonl") if r.question == HARD)
    one = replay(spider_dir, recorded, tmp_path / "one", schema_graph, "--set", "samples=1")
    assert one[hard_id].pred == SAMPLES[1] and one[hard_id].spider_ex == 0
    assert [c["step"] for c in one[hard_id].extra["calls"]].count("sql_sample") == 1
    two = replay(spider_dir, recorded, tmp_path / "two", schema_graph, "--set", "samples=2")
    assert two[hard_id].pred == SAMPLES[1]  # a tie of one vote each: the earlier candidate
    three = replay(spider_dir, recorded, tmp_path / "three", schema_graph, "--set", "samples=3")
    assert three[hard_id].pred == SAMPLES[2] and three[hard_id].spider_ex == 1  # two votes against one
    off = replay(spider_dir, recorded, tmp_path / "off", schema_graph, "--set", "correction=false", "--set", "refuse=false")
    assert off[hard_id].pred == "SELECT count(*) FROM item WHERE cost > 5" and off[hard_id].spider_ex == 0
    # the failed query reached for a word the schema lacks, with no retrieval to say it is another name: refused
    refused = replay(spider_dir, recorded, tmp_path / "refused", schema_graph, "--set", "correction=false")
    assert not refused[hard_id].pred and "closest: item.price" in refused[hard_id].extra["refusal"]


def test_calls_the_recording_lacks_are_logged_unscored(spider_dir: Path, recorded: Path, tmp_path: Path,
                                                       schema_graph: Any) -> None:  # noqa: F811
    more = replay(spider_dir, recorded, tmp_path / "more", schema_graph, "--set", "samples=6")
    hard = next(r for r in more.values() if r.question == HARD)
    assert hard.error_kind == NOT_REPLAYABLE and hard.spider_ex is None and "call 5 of step sql_sample" in hard.error
    assert sum(1 for r in more.values() if r.spider_ex is not None) == 3  # the others replayed; one has no database
    # another prompt (here: another schema style) is not answered with the recorded output
    other = replay(spider_dir, recorded, tmp_path / "other", schema_graph, "--set", "schema_style=table-column")
    assert {r.error_kind for r in other.values()} == {NOT_REPLAYABLE, "missing_db"}
    assert all("another prompt" in r.error for r in other.values() if r.error_kind == NOT_REPLAYABLE)


def test_replay_refuses_a_missing_or_empty_records_file(tmp_path: Path) -> None:
    from kgsql.errors import InputError

    with pytest.raises(InputError, match="no records file"):
        ReplayLM.from_records(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="no records with model calls"):
        ReplayLM.from_records(tmp_path / "empty.jsonl")


def test_fingerprint_depends_on_every_message() -> None:
    a = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    b = [{"role": "system", "content": "s"}, {"role": "user", "content": "q2"}]
    assert prompt_fingerprint(a) == prompt_fingerprint([dict(m) for m in a]) != prompt_fingerprint(b)


def test_a_pooled_replay_needs_one_route_try(tmp_path: Path) -> None:
    """A routed question's tries are recorded as one question's calls: replayed per database they would
    not line up, so the pooled setting replays the first choice only, and says so before any work."""
    import subprocess
    import sys

    records = tmp_path / "records.jsonl"
    records.write_text("{}\n", encoding="utf-8")
    args = [sys.executable, "-m", "kgsql.eval", "run", "--dataset", "spider", "--data-dir", str(tmp_path),
            "--pool-databases", "--replay", str(records), "--out", str(tmp_path / "out")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == \
        ["error: --replay with --pool-databases needs --route-tries 1"]
    assert not (tmp_path / "out").exists()
