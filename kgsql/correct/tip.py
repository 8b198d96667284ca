"""A tip: one sentence for the next prompt, and how a list of them is rendered."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["Tip", "quoted", "render_tips", "unique"]


@dataclass(frozen=True)
class Tip:
    """One sentence for the next prompt; ``kind`` says which check produced it."""

    kind: str
    text: str
    name: str | None = None


def render_tips(tips: Iterable[Tip]) -> str:
    """One sentence per line, duplicates dropped, first-seen order kept."""
    seen: dict[str, None] = {}
    for tip in tips:
        text = tip.text.strip()
        if text:
            seen.setdefault(text, None)
    return "\n".join(seen)


def unique(tips: Iterable[Tip]) -> list[Tip]:
    """``tips`` without repeated sentences, first-seen order kept."""
    out: dict[str, Tip] = {}
    for t in tips:
        out.setdefault(t.text, t)
    return list(out.values())


def quoted(items: Sequence[str], last: str = "and") -> str:
    """'a', 'b' and 'c' (items are quoted unless they already are)."""
    q = [i if i.startswith("'") else f"'{i}'" for i in items]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + f" {last} " + q[-1]
