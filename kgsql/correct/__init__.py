"""Self-correction: run a candidate query and say what the next prompt should fix.

When a candidate query fails (or finds nothing), the next prompt carries
short sentences (:class:`Tip`) that say what was wrong. One module per
rule, each a few small functions over the question's :class:`CheckContext`
(schema, parsed SQL, one shared read-only connection):

* :mod:`~kgsql.correct.names`: unknown tables/columns, ambiguous columns
  (SSpa §3.7's three sentences, word for word), tables missing from FROM,
  unknown qualifiers, double-quoted strings; :func:`precheck` finds them
  all statically;
* :mod:`~kgsql.correct.functions`: unknown functions (SpatiaLite names via
  the function KB, SQLite equivalents) and wrong argument counts;
* :mod:`~kgsql.correct.syntax`: syntax errors and other dialects' syntax;
* :mod:`~kgsql.correct.timeouts`: timeouts and cross joins;
* :mod:`~kgsql.correct.values`: string literals that occur nowhere in their
  column, with the closest real values; :mod:`~kgsql.correct.empty`: empty
  answers; :mod:`~kgsql.correct.unsafe` and :mod:`~kgsql.correct.other`.

:mod:`~kgsql.correct.rules` orders them; :func:`check_candidate` is the entry
point. Name resolution itself lives in :mod:`kgsql.sql.names`.
"""
from __future__ import annotations

from kgsql.correct.context import CheckContext
from kgsql.correct.empty import EMPTY_RESULT_TIP, empty_result_tip
from kgsql.correct.names import AMBIGUOUS_TIP, COLUMN_TIP, TABLE_TIP, precheck
from kgsql.correct.rules import Checked, check_candidate, tips_from_error
from kgsql.correct.tip import Tip, render_tips
from kgsql.correct.values import value_tips

__all__ = [
    "AMBIGUOUS_TIP",
    "COLUMN_TIP",
    "EMPTY_RESULT_TIP",
    "TABLE_TIP",
    "CheckContext",
    "Checked",
    "Tip",
    "check_candidate",
    "empty_result_tip",
    "precheck",
    "render_tips",
    "tips_from_error",
    "value_tips",
]
