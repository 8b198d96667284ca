"""An answer's chart in a notebook, drawn by Altair (``pip install 'kgsql[notebook]'``), or a hint without it.

Altair is optional: the spec itself (``answer.chart``) needs nothing, and a
notebook without Altair still shows the table, with one line saying how to
get the chart.
"""
from __future__ import annotations

import uuid
from html import escape
from typing import Any

from kgsql.errors import InputError

__all__ = ["altair_chart", "chart_html", "HINT"]

HINT = "pip install 'kgsql[notebook]' (Altair) to draw it"


def altair_chart(spec: dict[str, Any]) -> Any:
    """The spec as an Altair chart (a notebook draws it; ``.save('chart.html')`` writes it)."""
    try:
        import altair as alt
    except ImportError:
        raise InputError(f"answer.show_chart() needs Altair: {HINT}") from None
    kind = alt.LayerChart if "layer" in spec else alt.Chart
    return kind.from_dict(spec, validate=False)


def chart_html(spec: dict[str, Any]) -> str:
    """The chart as HTML for an answer's notebook view, or a one-line hint when Altair is not installed."""
    chart = spec.get("usermeta", {}).get("kgsql", {}).get("chart", "a")
    try:
        import altair  # noqa: F401
    except ImportError:
        return f"<p><small>A {escape(chart)} chart fits this answer: {escape(HINT)}.</small></p>"
    return str(altair_chart(spec).to_html(output_div=f"kgsql-chart-{uuid.uuid4().hex[:12]}", fullhtml=False))
