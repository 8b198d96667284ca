"""How sure the model was of the names it wrote: read from the SQL call's own token log-probabilities.

A model that must pick among columns it cannot tell apart (or stand one in for a notion the schema lacks)
spreads its probability over them; the name it then writes comes with a low probability. An endpoint
sends each generated token's log-probability on the same call (``logprobs=True``), so this costs no
call. The least sure name's probability tells wrong answers from right ones only weakly (AUC 0.64-0.68 on
Spider, 0.59 on BIRD; docs/eval.md, session 37): too weak to flag an answer alone, enough to show the
reader which name to check first and to spend a check where the model hesitated
(``LoopOptions.opinions_below``).
"""
from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlglot import exp

__all__ = ["HESITANT", "Choice", "hesitation_line", "least_sure_choice", "unsure_of", "written_names"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Below this probability the explanation says the model hesitated over a name (less likely than not).
HESITANT = 0.5


@dataclass(frozen=True)
class Choice:
    """A table or column name the model wrote, with the probability of its first token."""

    name: str
    probability: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def written_names(tree: exp.Expression | None) -> set[str]:
    """The table and column names a parsed query reads, lower-cased (aliases and functions are no choice
    of a name); empty for None (a query that does not parse)."""
    if tree is None:
        return set()
    aliases = {a.alias_or_name.lower() for a in tree.find_all(exp.TableAlias, exp.Alias)}
    names = {t.name.lower() for t in tree.find_all(exp.Table)}
    names |= {c.name.lower() for c in tree.find_all(exp.Column) if c.name}
    return {n for n in names if n and n not in aliases}


def least_sure_choice(token_logprobs: Sequence[tuple[str, float]], names: Iterable[str]) -> Choice | None:
    """Of ``names`` (lower-cased), the one whose first writing in the model's output began with the least
    probable token; None when the output has no token log-probabilities or writes none of them.

    The first writing is the choice: later ones copy it (``T1.name`` ... ``T1.name``)."""
    if not token_logprobs:
        return None
    wanted = set(names)
    text, starts = "", []
    for token, _ in token_logprobs:
        starts.append(len(text))
        text += token
    seen: set[str] = set()
    least: Choice | None = None
    for m in _WORD.finditer(text):
        word = m.group(0)
        if word.lower() not in wanted or word.lower() in seen:
            continue
        seen.add(word.lower())
        logprob = _token_at(m.start(), starts, token_logprobs)
        probability = math.exp(logprob)
        if least is None or probability < least.probability:
            least = Choice(word, round(probability, 4))
    return least


def _token_at(offset: int, starts: Sequence[int], token_logprobs: Sequence[tuple[str, float]]) -> float:
    """The log-probability of the token that covers character ``offset`` of the output."""
    return token_logprobs[bisect_right(starts, offset) - 1][1]


def unsure_of(choice: Choice | None, below: float) -> bool:
    """Whether ``choice`` was written with a probability under ``below``; an unknown choice (no
    log-probabilities, no name written) counts as unsure, so a check it gates still runs."""
    return choice is None or choice.probability < below


def hesitation_line(least_sure: Mapping[str, Any]) -> str:
    """The explanation's line for an answer's least sure name (``Choice.to_dict``) written with a probability
    under :data:`HESITANT`, so a reader checks that name first; "" otherwise."""
    probability = least_sure.get("probability")
    if probability is None or float(probability) >= HESITANT:
        return ""
    return (f"The model hesitated over {least_sure.get('name')} (probability {float(probability):.2f}): "
            "check it is what the question means")
