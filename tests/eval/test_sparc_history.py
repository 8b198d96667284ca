"""SParC under ``--set context=history`` (issue 32): each follow-up is shown the SQL the run itself predicted
for the earlier turns of its interaction (never the gold SQL), a resumed run reads them from its log, and
``--limit`` selects whole interactions. A scripted model on the shipped-in-test fixture of test_sparc."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from kgsql.errors import InputError
from kgsql.eval.datasets.sparc import load_sparc
from kgsql.eval.interactions import check_earlier_turns, earlier_sql
from kgsql.eval.records import read_records
from kgsql.eval.run import run_eval
from kgsql.eval.runner import select_questions
from kgsql.llm.scripted import ScriptedLM
from tests.eval.test_run import LEAN, parse
from tests.eval.test_sparc import IDS, sparc_dir  # noqa: F401 - the fixture

#: What the model answers each utterance with; each differs from the gold text (same rows but the last),
#: so a prompt holding it holds the run's prediction, not the gold query.
PREDICTED = {"How many singers are there?": "SELECT count(id) FROM singer",
             "Which of them are older than 25?": "SELECT name FROM singer WHERE age >= 26",
             "Order them by age.": "SELECT name FROM singer WHERE age >= 26 ORDER BY age ASC",
             "List all items.": "SELECT name FROM item WHERE 1 = 1",
             "Which cost more than 5?": "SELECT name FROM item"}  # wrong: interaction 1 fails


def scripted_model(prompts: dict[str, str]) -> ScriptedLM:
    """Answers the utterance the prompt ends with; keeps each prompt by that utterance."""
    def reply(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
        assert step != "rewrite", "context=history makes no rewrite call"
        text = messages[-1]["content"]
        asked = max(PREDICTED, key=text.rfind)
        prompts[asked] = text
        return f"```sql\n{PREDICTED[asked]}\n```"

    return ScriptedLM(reply)


def run(sparc: Path, out: Path, graph: Any, prompts: dict[str, str], *more: str) -> None:
    args = parse(["--dataset", "sparc", "--data-dir", str(sparc), "--method", "kgsql", "--shots", "0",
                  "--set", "context=history", "--out", str(out), "--graph-prefix", f"h{uuid.uuid4().hex[:6]}_",
                  "--no-progress", "--no-plots", *LEAN, *more])
    run_eval(args, lm=scripted_model(prompts), graph=graph, say=lambda _: None)


def test_each_follow_up_is_shown_the_runs_own_earlier_sql(sparc_dir: Path, tmp_path: Path,  # noqa: F811
                                                           schema_graph) -> None:
    out, prompts = tmp_path / "run", {}
    run(sparc_dir, out, schema_graph, prompts, "--concurrency", "2")
    records = {r.id: r for r in read_records(out / "records.jsonl")}
    assert sorted(records) == IDS and [records[i].spider_ex for i in IDS] == [1, 1, 1, 1, 0, None]
    third = prompts["Order them by age."]
    assert ("Question 1: How many singers are there?\nSQL 1: SELECT count(id) FROM singer\n"
            "Question 2: Which of them are older than 25?\nSQL 2: SELECT name FROM singer WHERE age >= 26") in third
    assert "SELECT count(*) FROM singer" not in third  # the gold query never reaches the prompt
    assert "SQL 1: SELECT name FROM item WHERE 1 = 1" in prompts["Which cost more than 5?"]
    assert "Previous questions" not in prompts["How many singers are there?"]
    assert records["0-2"].extra["shown_history_sql"] == [PREDICTED["How many singers are there?"],
                                                         PREDICTED["Which of them are older than 25?"]]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interaction"]["spider_ex"] == pytest.approx(1 / 2)


def test_a_resumed_run_reads_the_earlier_predictions_from_its_log(sparc_dir: Path, tmp_path: Path,  # noqa: F811
                                                                   schema_graph) -> None:
    out, prompts = tmp_path / "run", {}
    run(sparc_dir, out, schema_graph, prompts, "--limit", "1")  # the first interaction, whole
    assert sorted(r.id for r in read_records(out / "records.jsonl")) == ["0-0", "0-1", "0-2"]
    log = out / "records.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(line for line in lines if '"id": "0-2"' not in line) + "\n")  # as if killed
    later: dict[str, str] = {}
    run(sparc_dir, out, schema_graph, later, "--limit", "2")
    assert set(later) == {"Order them by age.", "List all items.", "Which cost more than 5?"}
    assert "SQL 2: SELECT name FROM singer WHERE age >= 26" in later["Order them by age."]
    assert sorted(r.id for r in read_records(log)) == IDS[:5]


def test_limit_counts_whole_interactions(sparc_dir: Path) -> None:  # noqa: F811
    examples = load_sparc(sparc_dir).questions
    assert [e.id for e in select_questions(examples, limit=2)] == ["0-0", "0-1", "0-2", "1-0", "1-1"]
    sampled = select_questions(examples, limit=1, seed=3)
    assert len({e.extra["interaction_id"] for e in sampled}) == 1
    assert [e.extra["turn_index"] for e in sampled] == list(range(len(sampled)))
    assert [e.id for e in select_questions(examples, limit=9)] == IDS


def test_a_turn_without_its_earlier_turns_is_refused(sparc_dir: Path) -> None:  # noqa: F811
    examples = {e.id: e for e in load_sparc(sparc_dir).questions}
    with pytest.raises(InputError, match=r"0-1: .*turn\(s\) 0 of interaction 0 are not in the run"):
        check_earlier_turns([examples["0-1"], examples["0-2"]], [])

    class Logged:
        pred, extra = "SELECT 1", {"interaction_id": "0", "turn_index": 0}

    check_earlier_turns([examples["0-1"], examples["0-2"]], [Logged()])  # turn 0 is in the log
    assert earlier_sql(examples["0-2"], [Logged()]) == ["SELECT 1", ""]
