from __future__ import annotations

from kgsql.correct import Tip, render_tips


def test_render_tips_dedupes_in_order() -> None:
    tips = [Tip("a", "One."), Tip("b", "Two."), Tip("a", "One."), Tip("c", "  "), Tip("d", "Three.")]
    assert render_tips(tips) == "One.\nTwo.\nThree."
    assert render_tips([]) == ""
