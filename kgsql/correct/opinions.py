"""Second opinions: other readings of the question, sampled after the answer is chosen, to check it.

A small model's wrong answers that run are mostly plausible queries that read the question another way
(docs/eval.md, issue 34): nothing in the SQL, its rows or the graph tells them from right ones. Sampling
the same prompt again at a temperature costs only the generated tokens on a prefix-caching server (the
prompt was read for the first candidate); where those readings return other rows than the answer, the
answer is less sure, and the ``other-reading`` flag (``kgsql.generate.flags``) says so. They never
change the answer: they are its check, not candidates.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

from sqlglot import exp

from kgsql.correct.rules import Checked, is_vacuous
from kgsql.db.cells import normalise
from kgsql.errors import KgsqlError

__all__ = ["FIRST_SEED", "Opinion", "agreeing", "differing", "doubted", "opinion_of", "orders_rows", "same_rows",
           "second_opinions"]

#: The opinions' seeds start here, apart from the correction loop's sampled candidates (1, 2, ...), so a
#: question that drew both never reads one sample twice.
FIRST_SEED = 101
#: Column readings tried when one result shows more columns than the other.
MAX_PICKS = 24


@dataclass(frozen=True)
class Opinion:
    """One sampled reading: its SQL ("" when the output held none) and whether it returned the answer's rows
    (None when it failed or held no SQL: no opinion on the rows)."""

    sql: str
    agrees: bool | None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def same_rows(a: Checked, b: Checked, *, ordered: bool = False) -> bool:
    """Whether two candidates that ran say the same thing: the same distinct rows (a DISTINCT more or less, a
    row a join copied, is no other reading; 30 and 30.0 are one number), in the same order when ``ordered``;
    where one shows more columns ("the gender, and its count"), the other's rows are those of some of its
    columns, in any order."""
    if a.result is None or b.result is None:
        return False
    narrow, wide = sorted(([_row(r) for r in a.result.rows], [_row(r) for r in b.result.rows]),
                          key=lambda rows: len(rows[0]) if rows else 0)
    if not narrow or not wide:
        return not narrow and not wide
    if not narrow[0]:
        return False  # a result of no columns says nothing
    target = _distinct(narrow, ordered)
    return any(_distinct([tuple(row[j] for j in pick) for row in wide], ordered) == target
               for pick in _column_picks(narrow, wide))


def _row(row: Sequence[object]) -> tuple[object, ...]:
    """A row's values as comparable keys (:func:`kgsql.db.cells.normalise`: ``30 == 30.0``, ``Decimal('1.50')``)."""
    return tuple(normalise(v) for v in row)


def _distinct(rows: list[tuple[object, ...]], ordered: bool) -> list[tuple[object, ...]] | set[tuple[object, ...]]:
    return list(dict.fromkeys(rows)) if ordered else set(rows)


def _column_picks(narrow: list[tuple[object, ...]], wide: list[tuple[object, ...]]) -> Iterator[tuple[int, ...]]:
    """The ways to read each narrow column as a distinct wide column holding the same values, the columns in
    their own order first, at most :data:`MAX_PICKS` of them. The search fills the most constrained column
    first and never revisits a used one, so ten columns of NULLs cost as little as two."""
    width = len(narrow[0])
    values = [{row[i] for row in narrow} for i in range(width)]
    wide_values = [{row[j] for row in wide} for j in range(len(wide[0]))]
    options = [sorted((j for j, held in enumerate(wide_values) if held == values[i]), key=lambda j: j != i)
               for i in range(width)]  # a column in its own place first
    order = sorted(range(width), key=lambda i: len(options[i]))

    def picks(k: int, chosen: dict[int, int]) -> Iterator[tuple[int, ...]]:
        if k == width:
            yield tuple(chosen[i] for i in range(width))
            return
        column = order[k]
        for j in options[column]:
            if j not in chosen.values():
                yield from picks(k + 1, {**chosen, column: j})

    return itertools.islice(picks(0, {}), MAX_PICKS)


def orders_rows(tree: exp.Expression | None) -> bool:
    """Whether a parsed query orders the rows it returns (an ORDER BY of the outermost query)."""
    return isinstance(tree, exp.Query) and tree.args.get("order") is not None


def second_opinions(draw: Callable[[int], Checked | None], answer: Checked, n: int,
                    tree: Callable[[str], exp.Expression | None]) -> list[Opinion]:
    """Up to ``n`` readings, each ``draw(seed)`` (a sampled candidate, run; None when it held no SQL), compared
    with ``answer``'s rows; in order where both queries order them ("in descending order of the injured"
    read as another ranking is another answer), ``tree`` parsing each query. A reading that failed, came
    back empty, vacuous (one row of NULLs or zeros) or cut off says nothing: more likely a broken query than
    another reading. The first reading that agrees ends them: no later one can make the answer doubted
    (:func:`doubted`), and a right answer then costs one call, not ``n`` (1.4 calls a question on a Spider
    sample instead of 2.8; docs/eval.md, session 34). A model or database error ends them too: the answer
    stands, checked by the readings made so far."""
    out: list[Opinion] = []
    answer_ordered = orders_rows(tree(answer.sql))
    for seed in range(FIRST_SEED, FIRST_SEED + n):
        try:
            other = draw(seed)
        except KgsqlError:
            break
        out.append(opinion_of(answer, other, tree, answer_ordered=answer_ordered))
        if out[-1].agrees:
            break
    return out


def opinion_of(answer: Checked, other: Checked | None, tree: Callable[[str], exp.Expression | None], *,
               answer_ordered: bool | None = None) -> Opinion:
    """What the reading ``other`` (None: it held no SQL) says of ``answer``: agrees, differs, or nothing (it
    failed, came back empty, vacuous or cut off)."""
    if other is None:
        return Opinion("", None)
    result = other.result
    if result is None or not result.rows or result.truncated or is_vacuous(result):
        return Opinion(other.sql, None)
    if answer_ordered is None:
        answer_ordered = orders_rows(tree(answer.sql))
    return Opinion(other.sql, same_rows(answer, other, ordered=answer_ordered and orders_rows(tree(other.sql))))


def agreeing(opinions: Sequence[Opinion | dict[str, object]]) -> int:
    """How many opinions returned the answer's rows (records keep them as dicts)."""
    return sum(1 for o in opinions if _agrees(o) is True)


def differing(opinions: Sequence[Opinion | dict[str, object]]) -> int:
    """How many opinions ran and returned other rows than the answer."""
    return sum(1 for o in opinions if _agrees(o) is False)


def _agrees(opinion: Opinion | dict[str, object]) -> object:
    return opinion.get("agrees") if isinstance(opinion, dict) else opinion.agrees


def doubted(opinions: Sequence[Opinion | dict[str, object]]) -> bool:
    """Whether the answer is doubted: some reading ran and returned other rows, and none returned the
    answer's (one reading that agrees outweighs any that differ: a sample at a temperature is often wrong
    where the greedy answer is right). Chosen on the first 74 answers of a fresh Spider sample (docs/eval.md,
    session 34), the rest held out."""
    return differing(opinions) >= 1 and agreeing(opinions) == 0
