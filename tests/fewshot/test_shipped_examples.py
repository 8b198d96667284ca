"""The shipped examples: the 5 the default was measured with, shown when a database was taught none."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.fewshot.select import ExampleQuery, get_selector
from kgsql.fewshot.shipped import shipped_pool


def test_the_shipped_examples_are_shown_in_their_file_order() -> None:
    pool = shipped_pool()
    assert len(pool) == 5 and all(e.id.startswith("spider-train-") for e in pool)
    shown = get_selector("typical", pool).select(ExampleQuery("any question", None, ()), 5)
    assert [e.id for e in shown] == [e.id for e in pool]  # one SQL shape each: the typical order is the file's


def test_they_are_the_typical_examples_of_spiders_train_pool(bench_data: Path) -> None:
    """What the measured default showed (docs/eval.md): typical selection over train_7000.json."""
    from kgsql.fewshot.pool import ExamplePool

    train = bench_data / "spider" / "train_7000.json"
    if not train.is_file():
        pytest.skip(f"benchmark data absent: {train}")
    picks = get_selector("typical", ExamplePool.from_spider(train)).select(ExampleQuery("q", None, ()), 5)
    assert [(e.question, " ".join(e.sql.split())) for e in picks] == [(e.question, e.sql) for e in shipped_pool()]
