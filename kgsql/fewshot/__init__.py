"""Few-shot examples: pools, DAIL-SQL masked-question and ACT-SQL hybrid selection, auto-CoT.

    from kgsql.fewshot import ExamplePool, ExampleQuery, get_selector, AutoCoT
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
    "ExamplePool": "kgsql.fewshot.pool", "PoolExample": "kgsql.fewshot.pool",
    "SqliteSchemas": "kgsql.ingest.sources", "GraphSchemas": "kgsql.schema.sources",
    "FirstOf": "kgsql.schema.sources",
    "ExampleQuery": "kgsql.fewshot.select", "ExampleSelector": "kgsql.fewshot.select",
    "get_selector": "kgsql.fewshot.select", "register_selector": "kgsql.fewshot.select",
    "available_selectors": "kgsql.fewshot.select",
    "AutoCoT": "kgsql.fewshot.cot", "build_cot": "kgsql.fewshot.cot",
    "mask_question": "kgsql.fewshot.mask", "PoolEmbeddings": "kgsql.fewshot.embed",
    "sql_skeleton": "kgsql.fewshot.sqlparts", "skeleton_similarity": "kgsql.fewshot.sqlparts",
}


def __getattr__(name: str) -> Any:
    """Import on first use so ``import kgsql.fewshot`` does not load numpy/sqlglot/torch."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kgsql.fewshot' has no attribute {name!r}")
