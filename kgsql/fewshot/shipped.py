"""The few-shot examples kgsql ships: the ones its default method was measured with.

Every number of the default in docs/eval.md used 5 examples picked by ``typical``
selection from Spider's training questions; without them a user's first question
would run zero-shot, a method nobody measured. ``default_examples.json`` holds
those 5 (question, SQL) pairs, so ``kgsql ask``, the service, the MCP server and
``kgsql.methods.build`` give a database that was taught nothing the same examples.
A database's own taught examples, or a pool a user names, come first.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from kgsql.fewshot.pool import ExamplePool

SHIPPED_EXAMPLES_FILE = Path(__file__).with_name("default_examples.json")


class ShippedExamples:
    """The marker ``kgsql.methods.build`` takes by default for ``pool``: the database's taught
    examples, else the shipped ones (``None`` instead: taught examples, else zero-shot)."""

    def __repr__(self) -> str:
        return "SHIPPED_EXAMPLES"


SHIPPED_EXAMPLES = ShippedExamples()


@lru_cache(maxsize=1)
def shipped_pool() -> ExamplePool:
    """The shipped examples as a pool, in the order the default shows them."""
    doc = json.loads(SHIPPED_EXAMPLES_FILE.read_text(encoding="utf-8"))
    return ExamplePool.from_records(doc["examples"], name="kgsql-default-examples", origin=str(SHIPPED_EXAMPLES_FILE))
