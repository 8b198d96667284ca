"""The ranking a "closest" question asks for: the nearest row first, as many as the question says.

Asked "Which subway station is closest to the Nanjing Municipal Bureau of Cultural Relics, and how far is
it?", the 1.5B measures the distance of every station and stops:
``SELECT station, Distance(Location, (SELECT Location FROM agencies WHERE name = '...'), 1) AS d FROM
subwaystations``. The query runs and answers every station, so no error tip catches it; none of the 32
closest / nearest / farthest questions of session 21's spatial run was answered right. A rewrite of every
candidate, when the question asks for the closest (nearest) or farthest (furthest) and the outer SELECT
shows exactly one distance, with no ``ORDER BY``, ``LIMIT``, grouping or aggregate: ordered by that
distance (ascending for closest, descending for farthest) and limited to the count the question gives
("the five nearest hotels": 5), else 1.
"""
from __future__ import annotations

import re
from typing import Final

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.sql.calls import DISTANCES, function_call

__all__ = ["rank_by_distance"]

_NEAREST: Final = re.compile(r"\b(closest|nearest|farthest|furthest)\b|(最近|最远)", re.IGNORECASE)
_COUNTS: Final = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                  "ten": 10}
_COUNT_BEFORE: Final = re.compile(r"\b(\d+|" + "|".join(_COUNTS) + r")\s+(?:\w+\s+)?$", re.IGNORECASE)


def _asked(question: str) -> tuple[bool, int] | None:
    """(nearest first, how many) when the question asks for the closest or farthest; else None."""
    found = _NEAREST.search(question)
    if found is None:
        return None
    word = (found.group(1) or found.group(2)).lower()
    count = _COUNT_BEFORE.search(question[:found.start()])
    n = 1
    if count:
        n = int(count.group(1)) if count.group(1).isdigit() else _COUNTS[count.group(1).lower()]
    return word in ("closest", "nearest", "最近"), n


def _distance_output(select: exp.Select) -> exp.Expression | None:
    """What to order by: the one output that is (or holds) a distance, by its alias when it has one."""
    found = [o for o in select.expressions
             if any(function_call(f)[0] in DISTANCES for f in o.find_all(exp.Func))]
    if len(found) != 1:
        return None
    output = found[0]
    return exp.column(output.alias) if isinstance(output, exp.Alias) and output.alias else output.copy()


def rank_by_distance(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` ordered by its distance and limited as the question asks (module docstring), or None."""
    asked = _asked(ctx.question)
    if asked is None:
        return None
    nearest_first, count = asked

    def rank(tree: exp.Expression) -> bool:
        if not isinstance(tree, exp.Select) or any(tree.args.get(k) for k in ("order", "limit", "group")):
            return False
        if any(o.find(exp.AggFunc) for o in tree.expressions):
            return False
        key = _distance_output(tree)
        if key is None:
            return False
        tree.order_by(key if nearest_first else exp.Ordered(this=key, desc=True), copy=False)  # engine's NULLs
        tree.limit(count, copy=False)
        return True

    return rewrite_tree(ctx, sql, rank)
