"""Interaction scores of multi-turn benchmarks (SParC), computed from per-turn records alone.

A conversation is answered turn by turn, and each turn is scored like any
question; what a multi-turn benchmark adds is whether a whole interaction
was right. Records of turns carry ``extra["interaction_id"]`` (from
``GoldQuestion.turn``); records without one are standalone questions and are
left out here, so other benchmarks' summaries are unchanged. SParC's own
"question match / interaction match" are exact-set-match numbers; these are
execution-based (docs/eval.md).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgsql.errors import InputError
from kgsql.eval.datasets.base import INTERACTION_ID, TURN_INDEX, GoldQuestion
from kgsql.eval.metric_registry import interaction_metrics, is_scored

Prediction = tuple[str, str | None]  # (SQL, db_id named on the line), as score reads them


def interaction_of(row: Mapping[str, Any]) -> str | None:
    """The interaction id of a record (dict form), or None for a standalone question."""
    value = (row.get("extra") or {}).get(INTERACTION_ID)
    return None if value is None else str(value)


def interaction_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Interaction EX: an interaction counts right only when every scored turn of it is right.

    Turns are grouped by (method, shots, interaction id), so a summary over
    several runs counts each run's interactions apart. An interaction with no
    scored turn (its database is missing) counts in ``n`` but not in the
    means; ``n_scored`` is the denominator. None when no record has an
    interaction id."""
    groups: dict[tuple[Any, Any, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        iid = interaction_of(r)
        if iid is not None:
            groups.setdefault((r.get("method"), r.get("shots"), iid), []).append(r)
    if not groups:
        return None
    scored = [turns for turns in ([t for t in g if is_scored(t)] for g in groups.values()) if turns]
    out: dict[str, Any] = {"n": len(groups), "n_scored": len(scored),
                           "n_turns_scored": sum(len(turns) for turns in scored)}
    for metric in interaction_metrics():  # the binary ones: a graded value has no "every turn right"
        right = [all(t.get(metric.name) == 1 for t in turns) for turns in scored]
        out[metric.name] = sum(right) / len(right) if right else None
    return out


# --------------------------------------------------------------------------- asking turn by turn


def interaction_chains(examples: Sequence[GoldQuestion]) -> list[list[GoldQuestion]]:
    """The examples as interactions (first-seen order), each in turn order; a standalone question is a
    chain of its own. A method that reads its earlier answers asks a chain's turns one after another."""
    chains: dict[str, list[GoldQuestion]] = {}
    for i, e in enumerate(examples):
        iid = e.turn.get(INTERACTION_ID)
        chains.setdefault(f"#{i}" if iid is None else str(iid), []).append(e)
    return [sorted(chain, key=lambda e: e.extra.get(TURN_INDEX) or 0) for chain in chains.values()]


def whole_interactions(examples: Sequence[GoldQuestion], limit: int, pick: Any) -> list[GoldQuestion] | None:
    """``limit`` whole interactions (``pick(n, k)``: the indices of the ``k`` chosen of ``n``), in dataset
    order; None when some example is a standalone question (then ``limit`` counts questions)."""
    if any(e.turn.get(INTERACTION_ID) is None for e in examples):
        return None
    chains = interaction_chains(examples)
    if limit >= len(chains):
        return list(examples)
    chosen = {id(e) for i in pick(len(chains), limit) for e in chains[i]}
    return [e for e in examples if id(e) in chosen]


def _turn_key(row: Any) -> tuple[str, Any] | None:
    extra = getattr(row, "extra", None) or {}
    iid = extra.get(INTERACTION_ID)
    return None if iid is None else (str(iid), extra.get(TURN_INDEX))


def earlier_sql(example: GoldQuestion, logged: Iterable[Any]) -> list[str]:
    """The SQL the run predicted for each earlier turn of ``example``'s interaction ("" for none), read
    from the records ``logged`` so far (the run's own answers, never the gold SQL)."""
    iid, index = str(example.turn[INTERACTION_ID]), example.extra.get(TURN_INDEX) or 0
    found = {key[1]: (getattr(r, "pred", None) or "") for r in logged if (key := _turn_key(r)) and key[0] == iid}
    return [found.get(j, "") for j in range(index)]


def check_earlier_turns(todo: Sequence[GoldQuestion], logged: Iterable[Any]) -> None:
    """Refuse (one line) a turn whose earlier turns are neither asked in this run nor logged before: a method
    reading its own earlier answers would be shown nothing for them."""
    known = {key for r in logged if (key := _turn_key(r))}
    known |= {(str(e.turn[INTERACTION_ID]), e.extra.get(TURN_INDEX)) for e in todo if e.turn}
    for e in todo:
        if not e.turn:
            continue
        iid = str(e.turn[INTERACTION_ID])
        absent = [j for j in range(e.extra.get(TURN_INDEX) or 0) if (iid, j) not in known]
        if absent:
            raise InputError(f"{e.id}: this method reads the SQL it answered for the earlier turns, but turn(s) "
                             f"{', '.join(map(str, absent))} of interaction {iid} are not in the run; select "
                             f"whole interactions (--limit counts interactions on a multi-turn benchmark)")


# --------------------------------------------------------------------------- prediction files


def interaction_sizes(examples: Sequence[GoldQuestion]) -> list[int] | None:
    """Turn counts of consecutive interactions, in dataset order; None when some example has no
    interaction id (a single-turn benchmark)."""
    sizes: list[int] = []
    last: str | None = None
    for e in examples:
        iid = e.turn.get(INTERACTION_ID)
        if iid is None:
            return None
        if iid == last:
            sizes[-1] += 1
        else:
            sizes.append(1)
            last = iid
    return sizes


def without_interaction_breaks(predictions: list[Prediction], examples: Sequence[GoldQuestion]) -> list[Prediction]:
    """Predictions with the blank line after each interaction removed (SParC's official file form,
    ``dev_gold.txt`` included), so line ``i`` is turn ``i`` again.

    Applied only when the blank lines cut the file into blocks of exactly the
    first interactions' turn counts; any other file is returned unchanged
    (then a blank line is an empty prediction, as for every benchmark)."""
    if not any(not sql and db is None for sql, db in predictions):
        return predictions
    sizes = interaction_sizes(examples)
    if not sizes:
        return predictions
    lines = list(predictions)
    while lines and lines[-1] == ("", None):
        lines.pop()
    blocks: list[list[Prediction]] = [[]]
    for line in lines:
        if line == ("", None):
            blocks.append([])
        else:
            blocks[-1].append(line)
    if len(blocks) > len(sizes) or [len(b) for b in blocks] != sizes[:len(blocks)]:
        return predictions
    return [line for block in blocks for line in block]


# --------------------------------------------------------------------------- text


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.2f}"


def interaction_markdown(summary: Mapping[str, Any]) -> list[str]:
    """The report's "Interactions" table (overall, then per run); no lines without interactions."""
    groups = {"all": summary.get("interaction")}
    groups.update({name: m.get("interaction") for name, m in (summary.get("by_run") or {}).items()})
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return []
    metrics = interaction_metrics()
    lines = ["### Interactions", "",
             "An interaction is right when every scored turn of it is right (execution-based; the per-turn "
             "figures are the tables above, turn depth as difficulty).", "",
             "| group | interactions | scored | turns scored | " + "".join(f"{m.column} | " for m in metrics),
             "|---|---:|---:|---:|" + "---:|" * len(metrics)]
    for name, m in groups.items():
        lines.append(f"| {name} | {m['n']} | {m['n_scored']} | {m['n_turns_scored']} | "
                     + "".join(f"{_pct(m.get(metric.name))} | " for metric in metrics))
    return [line.rstrip() for line in lines] + [""]


def interaction_line(summary: Mapping[str, Any]) -> str | None:
    """One line for the ``score`` text table, or None without interactions."""
    m = summary.get("interaction")
    if not m:
        return None
    values = ", ".join(f"{metric.column} {_pct(m.get(metric.name))}" for metric in interaction_metrics())
    return f"interactions: {m['n']} ({m['n_scored']} scored): interaction {values} (every scored turn right)"
