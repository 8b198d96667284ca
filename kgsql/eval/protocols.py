"""Evaluation protocols: which questions get which example pool, and the paper-style tables.

SSpa (§5) evaluates the spatial set *cross-fold*: the databases are split in
two folds, one fold's questions are the training side (the only source of
few-shot examples and mined knowledge) while the other fold is tested, then
the roles swap; the two test halves together give one EX over every
question, for dataset1 and dataset2 separately. Its folds are
{ada, edu} / {tourism, traffic}; with only some databases present the folds
are the paper's folds restricted to what exists, or one fold per database
when that leaves a side empty.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from kgsql.errors import InputError
from kgsql.eval.datasets import Dataset, GoldQuestion
from kgsql.eval.runner import Group

PAPER_FOLDS: tuple[tuple[str, ...], ...] = (("ada", "edu"), ("tourism", "traffic"))
PAPER_SHOTS = (0, 1, 3, 5)


@dataclass(frozen=True)
class Fold:
    """One direction of a cross-fold split: test these databases, learn from those."""

    test_dbs: tuple[str, ...]
    train_dbs: tuple[str, ...]

    @property
    def name(self) -> str:
        return "+".join(self.test_dbs)


def parse_folds(text: str | None) -> list[tuple[str, ...]] | None:
    """``"ada,edu;tourism,traffic"`` -> [("ada", "edu"), ("tourism", "traffic")]."""
    if not text:
        return None
    folds = [tuple(sorted(d.strip() for d in part.split(",") if d.strip())) for part in text.split(";")]
    folds = [f for f in folds if f]
    if len(folds) < 2:
        raise InputError(f"--folds {text!r}: give at least two folds, e.g. 'ada,edu;tourism,traffic'")
    return folds


def default_folds(db_ids: Iterable[str]) -> list[tuple[str, ...]]:
    """The paper's folds restricted to ``db_ids``; one fold per database if a side would be empty."""
    present = sorted(set(db_ids))
    paper = [tuple(d for d in fold if d in present) for fold in PAPER_FOLDS]
    covered = {d for fold in paper for d in fold}
    if all(paper) and covered == set(present):
        return paper
    return [(d,) for d in present]


def cross_folds(db_ids: Iterable[str], folds: Sequence[tuple[str, ...]] | None = None) -> list[Fold]:
    """Every fold as the test side once, the union of the others as its training side."""
    present = sorted(set(db_ids))
    chosen = [tuple(f) for f in (folds or default_folds(present))]
    seen: dict[str, int] = {}
    for i, fold in enumerate(chosen):
        for db in fold:
            if db not in present:
                raise InputError(f"fold {'+'.join(fold)}: no database '{db}' (present: {', '.join(present)})")
            if db in seen:
                raise InputError(f"database '{db}' is in two folds")
            seen[db] = i
    left = [d for d in present if d not in seen]
    if left:
        raise InputError(f"databases in no fold: {', '.join(left)}")
    if len(chosen) < 2:
        raise InputError("cross-fold needs at least two folds (two databases)")
    return [Fold(tuple(fold), tuple(sorted(d for other in chosen if other != fold for d in other)))
            for fold in chosen]


def training_pool(dataset: Dataset, fold: Fold) -> Any:
    """Example pool of the fold's training databases only (never a test database's question)."""
    from kgsql.fewshot.pool import ExamplePool

    pool = ExamplePool.from_dataset(dataset, exclude_dbs=fold.test_dbs)
    pool = pool.filter(lambda e: e.db_id in fold.train_dbs,
                       name=f"{dataset.name}-{dataset.split}-train-{'+'.join(fold.train_dbs)}")
    leaked = sorted({e.db_id for e in pool} & set(fold.test_dbs))
    if leaked:  # pragma: no cover - guarded by construction; kept as the protocol's invariant
        raise InputError(f"training pool holds test databases {leaked}")
    return pool


def cross_fold_groups(dataset: Dataset, questions: Sequence[GoldQuestion],
                      folds: Sequence[tuple[str, ...]] | None = None, *, with_pool: bool = True) -> list[Group]:
    """One group per fold: that fold's (selected) questions with the other folds' questions as pool.

    The pool holds *all* training-side questions of the split, whatever
    ``--limit`` kept of the test side."""
    groups = []
    for fold in cross_folds(dataset.db_files, folds):
        test = [e for e in questions if e.db_id in fold.test_dbs]
        if not test:
            continue
        pool = training_pool(dataset, fold) if with_pool else None
        groups.append(Group(test, pool, {"split": dataset.split, "fold": fold.name,
                                         "train": "+".join(fold.train_dbs)}))
    return groups


#: ``--pool own``: no pool given, as a user asks: the database's taught examples, else a spatial
#: database's derived ones, else kgsql's shipped examples (``kgsql.stages.examples``).
OWN_POOL = "own"


def load_pool(pool: str | None, dataset: Dataset, data_dir: Path) -> Any:
    """The fixed pool of a single-protocol run: ``pool`` (a file, ``none`` or ``own``), else the benchmark's
    own (None: the benchmark's per-database pools, or no pool)."""
    from kgsql.fewshot.pool import ExamplePool

    if pool and pool.lower() == "none":
        return None
    if pool and pool.lower() == OWN_POOL:
        from kgsql.fewshot.shipped import SHIPPED_EXAMPLES

        return SHIPPED_EXAMPLES  # what `kgsql ask` shows with no pool given
    if pool:
        path = Path(pool)
        return ExamplePool.from_jsonl(path) if path.suffix == ".jsonl" else ExamplePool.from_spider(path)
    find = dataset.benchmark.pool
    return find(data_dir) if find is not None else None


def single_groups(dataset: Dataset, questions: Sequence[GoldQuestion], pool: Any = None, *,
                  with_pool: bool = True) -> list[Group]:
    """A plain run: one group with a fixed pool (Spider: its training set); for a benchmark
    whose pools come from the other databases (the spatial set) one group per database with
    every *other* database of the split as pool."""
    if not dataset.benchmark.pool_from_other_databases or not with_pool or pool is not None:
        return [Group(list(questions), pool if with_pool else None, {})] if questions else []
    groups = []
    for db in dict.fromkeys(e.db_id for e in questions):
        others = tuple(sorted(d for d in dataset.db_files if d != db))
        fold = Fold((db,), others)
        groups.append(Group([e for e in questions if e.db_id == db], training_pool(dataset, fold) if others else None,
                            {"split": dataset.split, "fold": db, "train": "+".join(others)}))
    return groups


# --------------------------------------------------------------------------- tables


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def paper_table(cells: Mapping[tuple[str, str, int | None], float | None], methods: Sequence[str],
                splits: Sequence[str], shots: Sequence[int | None], *,
                counts: Mapping[tuple[str, str, int | None], int] | None = None) -> str:
    """Markdown table shaped like SSpa's Table 3: a row per method, columns split x shots (EX, %).

    A shots value of None makes one column per split (each method at its own
    shots, named in the row). ``counts`` (questions scored per cell) is printed
    under the table when cells differ in size, so a partial cell cannot pass
    for a full one."""
    header = ["Method"] + [split if k is None else f"{split} {k}-shot" for split in splits for k in shots]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for method in methods:
        row = [method] + [_cell(cells.get((method, split, k))) for split in splits for k in shots]
        lines.append("| " + " | ".join(row) + " |")
    if counts:
        sizes = sorted({n for n in counts.values()})
        if len(sizes) > 1:
            lines.append("")
            lines.append("Questions scored per cell: " + ", ".join(
                f"{m} {s}{'' if k is None else f' {k}-shot'}: {counts.get((m, s, k), 0)}"
                for m in methods for s in splits for k in shots))
        elif sizes:
            lines.append("")
            lines.append(f"Each cell: {sizes[0]} questions.")
    return "\n".join(lines) + "\n"
