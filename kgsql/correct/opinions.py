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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass

from sqlglot import exp

from kgsql.correct.rules import Checked

__all__ = ["FIRST_SEED", "Opinion", "agreeing", "differing", "doubted", "orders_rows", "same_rows",
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
    row a join copied, is no other reading), in the same order when ``ordered``; where one shows more
    columns ("the gender, and its count"), the other's rows are those of some of its columns."""
    if a.result is None or b.result is None:
        return False
    narrow, wide = sorted((a.result.rows, b.result.rows), key=lambda rows: len(rows[0]) if rows else 0)
    if not narrow or not wide:
        return not narrow and not wide
    target = _distinct([tuple(map(repr, row)) for row in narrow], ordered)
    wide_text = [tuple(map(repr, row)) for row in wide]
    return any(_distinct([tuple(row[j] for j in pick) for row in wide_text], ordered) == target
               for pick in _column_picks(target, wide_text))


def _distinct(rows: list[tuple[str, ...]], ordered: bool) -> list[tuple[str, ...]] | set[tuple[str, ...]]:
    return list(dict.fromkeys(rows)) if ordered else set(rows)


def _column_picks(narrow: Iterable[tuple[str, ...]], wide: list[tuple[str, ...]]) -> Iterator[tuple[int, ...]]:
    """The ways to read each narrow column as a distinct wide column holding the same values (at most
    :data:`MAX_PICKS`)."""
    narrow = list(narrow)
    width = len(narrow[0])
    values = [{row[i] for row in narrow} for i in range(width)]
    wide_values = [{row[j] for row in wide} for j in range(len(wide[0]))]
    options = [[j for j, held in enumerate(wide_values) if held == values[i]] for i in range(width)]
    picks = (pick for pick in itertools.product(*options) if len(set(pick)) == width)
    return itertools.islice(picks, MAX_PICKS)


def orders_rows(tree: exp.Expression | None) -> bool:
    """Whether a parsed query orders the rows it returns (an ORDER BY of the outermost query)."""
    return isinstance(tree, exp.Query) and tree.args.get("order") is not None


def second_opinions(draw: Callable[[int], Checked | None], answer: Checked, n: int,
                    tree: Callable[[str], exp.Expression | None]) -> list[Opinion]:
    """Up to ``n`` readings, each ``draw(seed)`` (a sampled candidate, run; None when it held no SQL), compared
    with ``answer``'s rows; in order where both queries order them ("in descending order of the injured"
    read as another ranking is another answer), ``tree`` parsing each query. The first reading that agrees
    ends them: no later one can make the answer doubted (:func:`doubted`), and a right answer then costs one
    call, not ``n`` (1.4 calls a question on a Spider sample instead of 2.8; docs/eval.md, session 34)."""
    out: list[Opinion] = []
    answer_ordered = orders_rows(tree(answer.sql))
    for seed in range(FIRST_SEED, FIRST_SEED + n):
        other = draw(seed)
        if other is None or other.result is None:
            out.append(Opinion(other.sql if other is not None else "", None))
            continue
        ordered = answer_ordered and orders_rows(tree(other.sql))
        out.append(Opinion(other.sql, same_rows(answer, other, ordered=ordered)))
        if out[-1].agrees:
            break
    return out


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
