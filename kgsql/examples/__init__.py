"""Few-shot examples: pools, DAIL-SQL masked-question and ACT-SQL hybrid selection, auto-CoT.

    from kgsql.examples import ExamplePool, ExampleQuery, get_selector, AutoCoT
    pool = ExamplePool.from_spider("spider/train_7000.json")
    picks = get_selector("masked-similarity", pool).select(ExampleQuery(question, schema), k=5)
    AutoCoT(pool).cot(picks[0])   # "Let's think step by step. ..."
"""
from __future__ import annotations

from typing import Any

__all__ = [
    "ExamplePool", "PoolExample", "SqliteSchemas", "GraphSchemas", "FirstOf",
    "ExampleQuery", "ExampleSelector", "get_selector", "register_selector", "available_selectors",
    "AutoCoT", "build_cot", "mask_question", "PoolEmbeddings", "sql_skeleton", "skeleton_similarity",
]

_LAZY = {
    "ExamplePool": "kgsql.examples.pool", "PoolExample": "kgsql.examples.pool",
    "SqliteSchemas": "kgsql.examples.pool", "GraphSchemas": "kgsql.examples.pool",
    "FirstOf": "kgsql.examples.pool",
    "ExampleQuery": "kgsql.examples.select", "ExampleSelector": "kgsql.examples.select",
    "get_selector": "kgsql.examples.select", "register_selector": "kgsql.examples.select",
    "available_selectors": "kgsql.examples.select",
    "AutoCoT": "kgsql.examples.cot", "build_cot": "kgsql.examples.cot",
    "mask_question": "kgsql.examples.mask", "PoolEmbeddings": "kgsql.examples.embed",
    "sql_skeleton": "kgsql.examples.sqlparts", "skeleton_similarity": "kgsql.examples.sqlparts",
}


def __getattr__(name: str) -> Any:
    """Import on first use so ``import kgsql.examples`` does not load numpy/sqlglot/torch."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kgsql.examples' has no attribute {name!r}")
