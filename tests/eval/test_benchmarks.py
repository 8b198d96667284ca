"""The benchmark registry: built-in defaults, and a new benchmark added by one module's worth of code.

``test_a_registered_benchmark_runs_end_to_end`` is the proof that a dataset
touches one module: a loader and a ``Benchmark`` defined here, registered,
and ``eval run`` takes it as ``--dataset`` with its metric, timeout, pool
and graph-name rule and no other change.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from kgsql.errors import InputError
from kgsql.eval.datasets import (
    BENCHMARKS, Benchmark, Dataset, GoldQuestion, available_benchmarks, get_benchmark, load_dataset, register_benchmark,
)
from kgsql.eval.datasets.registry import taking
from kgsql.eval.records import read_records
from kgsql.eval.run import run_eval
from kgsql.llm.scripted import ScriptedLM
from tests.eval.test_run import LEAN, make_db, parse


def test_builtin_benchmarks_keep_their_defaults() -> None:
    assert available_benchmarks()[:4] == ["spider", "bird", "spatial", "sparc"]
    spider, bird, spatial = (get_benchmark(n) for n in ("spider", "bird", "spatial"))
    assert (spider.metric, bird.metric, spatial.metric) == ("spider_ex", "bird_ex", "spider_ex")
    assert (spider.timeout_s, bird.timeout_s, spatial.timeout_s) == (30.0, 30.0, 120.0)
    assert (spider.default_split, bird.default_split, spatial.default_split) == ("dev", "dev", None)
    assert [b.name for b in BENCHMARKS.values() if b.cross_fold] == ["spatial"]
    assert spatial.pool_from_other_databases and spatial.split_in_graph_name and spatial.schema_source == "sqlite"
    assert spider.pool is not None and bird.pool is None and spatial.pool is None
    assert bird.descriptions_dir is not None and spider.train_split == "train_7000"
    assert spatial.languages == ("en", "zh")


def test_unknown_benchmark_names_the_known_ones() -> None:
    with pytest.raises(InputError, match="did you mean 'spider'.*known: spider, bird, spatial, sparc"):
        get_benchmark("spidr")


def test_loader_options_keep_what_the_loader_takes() -> None:
    cli = {"lang": "zh", "questions_file": Path("q.json"), "db_dir": None, "question_field": "SpiderSynQuestion"}
    assert get_benchmark("spatial").loader_options(**cli) == {"lang": "zh"}
    assert get_benchmark("bird").loader_options(**cli) == {"questions_file": Path("q.json")}
    assert get_benchmark("spider").loader_options(**cli) == {"questions_file": Path("q.json"),
                                                             "question_field": "SpiderSynQuestion"}
    assert taking("db_dir") == "spider/bird/sparc" and taking("lang") == "spatial"  # for help texts


# --------------------------------------------------------------------------- a new benchmark


def load_tiny(data_dir: str | Path, split: str = "test") -> Dataset:
    """``<split>.jsonl`` of {"q", "sql", "db"} lines; databases in ``dbs/<db>.sqlite``."""
    root = Path(data_dir)
    rows = [json.loads(line) for line in (root / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    examples = [GoldQuestion(f"{split}{i}", r["db"], r["q"], [r["sql"]]) for i, r in enumerate(rows)]
    files = {e.db_id: root / "dbs" / f"{e.db_id}.sqlite" for e in examples}
    return Dataset("tiny", split, root, examples, {db: p if p.is_file() else None for db, p in files.items()})


def tiny_pool(data_dir: Path) -> Any:
    from kgsql.fewshot.pool import ExamplePool

    return ExamplePool.from_dataset(load_tiny(data_dir, "train"))


TINY = Benchmark("tiny", load_tiny, "a two-database test benchmark", splits=("test", "train"), default_split="test",
                 metric="bird_ex", timeout_s=7.0, pool=tiny_pool, pool_note="train.jsonl",
                 split_in_graph_name=True)

TEST_ROWS = [{"q": "How many lakes are there?", "sql": "SELECT count(*) FROM lake", "db": "water"},
             {"q": "Name the deepest lake.", "sql": "SELECT name FROM lake ORDER BY depth DESC LIMIT 1", "db": "water"},
             {"q": "How many hills are there?", "sql": "SELECT count(*) FROM hill", "db": "land"}]
TRAIN_ROWS = [{"q": "Which lake is the shallowest?", "sql": "SELECT name FROM lake ORDER BY depth LIMIT 1",
               "db": "water"}]
ANSWERS = {"How many lakes are there?": "SELECT count(*) FROM lake",
           "Name the deepest lake.": "SELECT name FROM lake ORDER BY depth LIMIT 1",  # wrong
           "How many hills are there?": "SELECT count(*) FROM hill"}


@pytest.fixture()
def tiny(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "tiny"
    for split, rows in (("test", TEST_ROWS), ("train", TRAIN_ROWS)):
        root.mkdir(exist_ok=True)
        (root / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    make_db(root / "dbs" / "water.sqlite", "CREATE TABLE lake (id INTEGER, name TEXT, depth REAL);"
                                           "INSERT INTO lake VALUES (1, 'Deep', 90), (2, 'Flat', 2);")
    make_db(root / "dbs" / "land.sqlite", "CREATE TABLE hill (id INTEGER, name TEXT);"
                                          "INSERT INTO hill VALUES (1, 'Top');")
    register_benchmark(TINY)
    yield root
    BENCHMARKS.unregister("tiny")


def test_a_registered_benchmark_runs_end_to_end(tiny: Path, tmp_path: Path, schema_graph,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.text.encoder import HashEncoder

    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    prompts: list[str] = []

    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        text = messages[-1]["content"]
        prompts.append(text)
        return f"```sql\n{ANSWERS[max(ANSWERS, key=text.rfind)]}\n```"  # the question asked comes last

    out, prefix, said = tmp_path / "run", f"t{uuid.uuid4().hex[:6]}_", []
    args = parse(["--dataset", "tiny", "--data-dir", str(tiny), "--method", "kgsql", "--shots", "1",
                  "--out", str(out), "--graph-prefix", prefix, "--no-progress", "--no-plots", *LEAN])
    meta = run_eval(args, lm=ScriptedLM(reply), graph=schema_graph, encoder=HashEncoder(), say=said.append)
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert sorted(records) == ["test0", "test1", "test2"]  # the default split
    assert [records[i].bird_ex for i in ("test0", "test1", "test2")] == [1, 0, 1]
    assert meta["metric"] == "bird_ex" and meta["cells"][0]["bird_ex"] == pytest.approx(2 / 3)
    assert meta["overrides"]["timeout_s"] == 7.0  # the benchmark's SQL timeout
    assert any(f"as '{prefix}water_test'" in s for s in said)  # its graph-name rule
    assert all("Which lake is the shallowest?" in p for p in prompts)  # its pool, 1 shot
    assert not any("no example pool" in s for s in said)
    with pytest.raises(InputError, match="cross-fold.*--dataset spatial"):
        run_eval(parse(["--dataset", "tiny", "--data-dir", str(tiny), "--protocol", "cross-fold"]),
                 lm=ScriptedLM(reply), graph=schema_graph, say=said.append)


def test_a_registered_benchmark_is_a_dataset_choice_until_removed(tiny: Path) -> None:
    assert "tiny" in available_benchmarks()
    assert [e.id for e in load_dataset("tiny", tiny, "train").questions] == ["train0"]
    assert load_dataset("tiny", tiny).benchmark is TINY
    BENCHMARKS.unregister("tiny")
    with pytest.raises(SystemExit):
        parse(["--dataset", "tiny", "--data-dir", str(tiny)])
    register_benchmark(TINY)  # for the fixture's teardown
