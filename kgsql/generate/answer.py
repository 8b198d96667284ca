"""``Answer``: what one question produced (SQL, rows, prompts, tokens), and the question check.

Every method (the staged ones and the agent) fills the
same ``Answer``, so the CLI, the evaluator and the notebook API read one shape.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kgsql.db.guard import QueryResult
from kgsql.errors import InputError
from kgsql.llm.trace import Trace

MAX_QUESTION_CHARS = 2000
HTML_ROWS = 20  # rows a notebook shows


@dataclass
class Candidate:
    """One generated query and how it ran; ``rank``: 2 rows, 1 ran empty, 0 failed."""

    sql: str
    result: QueryResult | None
    error: str | None

    @property
    def rank(self) -> int:
        if self.error is not None or self.result is None:
            return 0
        return 2 if self.result.rows else 1


@dataclass
class Answer:
    """Everything about one answer: the SQL, its rows, and how it was made."""

    question: str
    db: str
    standalone: str = ""  # the question as asked after multi-turn rewriting ("" without history)
    sql: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    evidence: str = ""
    evidence_source: str = "none"
    selected_schema: str = ""
    selection: dict[str, Any] = field(default_factory=dict)
    tips: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # ids of the pool examples shown
    example_source: str = ""  # where they came from: pool (given), taught (the database's), derived (spatial), shipped
    rounds: int = 0
    repaired: int = 0  # candidates written by join repair (no model call)
    steps: list[dict[str, Any]] = field(default_factory=list)  # agent mode: thought, action, observation
    prompts: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    explanation: dict[str, Any] = field(default_factory=dict)  # what the SQL does (kgsql.generate.explain)
    warnings: list[dict[str, str]] = field(default_factory=list)  # flags: {code, text} (kgsql.generate.flags)
    refusal: str = ""  # "cannot answer: ..." when the database lacks what the question needs (generate.refusal)
    opinions: list[dict[str, Any]] = field(default_factory=list)  # readings sampled to check it (correct.opinions)
    least_sure: dict[str, Any] = field(default_factory=dict)  # {name, probability}: the model's (correct.confidence)

    @property
    def ok(self) -> bool:
        return self.error is None

    def finish(self, trace: Trace, started: float) -> "Answer":
        """Record the calls, their tokens and the time since ``started`` (``time.perf_counter``)."""
        self.prompts = trace.to_list()
        self.tokens = {"prompt": trace.prompt_tokens, "completion": trace.completion_tokens,
                       "cached": trace.cached_tokens, "total": trace.prompt_tokens + trace.completion_tokens}
        self.latency_s = time.perf_counter() - started
        return self

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts, ready for ``pandas.DataFrame(answer.records())``."""
        return [dict(zip(self.columns, row)) for row in self.rows]

    @property
    def df(self) -> Any:
        """The rows as a pandas DataFrame (``pip install 'kgsql[notebook]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise InputError("answer.df needs pandas: pip install 'kgsql[notebook]' (or use answer.records())") from None
        return pd.DataFrame(list(self.rows), columns=list(self.columns))

    @property
    def chart(self) -> dict[str, Any] | None:
        """A Vega-Lite v5 spec of the rows when their shape fits a chart (bars, a line, a scatter, a map), else
        None (:mod:`kgsql.generate.chart`)."""
        from kgsql.generate.chart import chart_spec

        return chart_spec(self.columns, self.rows, truncated=self.truncated) if self.ok else None

    def show_chart(self) -> Any:
        """The chart drawn by Altair (``pip install 'kgsql[notebook]'``); raises InputError when none fits."""
        from kgsql.generate.chart_view import altair_chart

        spec = self.chart
        if spec is None:
            raise InputError("no chart fits this answer's rows (see answer.chart)")
        return altair_chart(spec)

    def __repr__(self) -> str:
        """One line: the SQL, the row count or the error, the cost (the full record is ``to_dict()``)."""
        status = (f"refusal={self.refusal!r}" if self.refusal else f"error={self.error!r}" if self.error
                  else f"rows={len(self.rows)}{'+' if self.truncated else ''}")
        sql = self.sql if len(self.sql) <= 80 else self.sql[:77] + "..."
        flags = f", warnings={[w['code'] for w in self.warnings]}" if self.warnings else ""
        return (f"Answer(db={self.db!r}, sql={sql!r}, {status}{flags}, tokens={self.tokens.get('total', 0)}, "
                f"{self.latency_s:.1f}s)")

    def _repr_html_(self) -> str:
        """Notebooks: the SQL, then the first rows as a table (or the error)."""
        from html import escape

        from kgsql.db.cells import shown

        parts = [f"<div><b>{escape(self.question)}</b> <small>({escape(self.db)}, "
                 f"{self.tokens.get('total', 0)} tokens, {self.latency_s:.1f} s)</small>",
                 f"<pre>{escape(self.sql or '(no SQL)')}</pre>"]
        if self.refusal:
            parts.append(f"<p style='color:#8a4b00'><b>{escape(self.refusal)}</b></p>")
        parts += [f"<p style='color:#8a4b00'>&#9888; {escape(w['text'])} <small>({escape(w['code'])})</small></p>"
                  for w in self.warnings]
        lines = self.explanation.get("lines") or []
        if lines:
            items = "".join(f"<li>{escape(line)}</li>" for line in lines)
            parts.append(f"<details><summary>What the query does</summary><ul>{items}</ul></details>")
        if self.error:
            parts.append(f"<p style='color:#b00'>{escape(self.error)}</p>")
        else:
            head = "".join(f"<th>{escape(str(c))}</th>" for c in self.columns)
            body = "".join("<tr>" + "".join(f"<td>{escape(shown(v))}</td>" for v in row) + "</tr>"
                           for row in self.rows[:HTML_ROWS])
            more = len(self.rows) - HTML_ROWS
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            if more > 0 or self.truncated:
                parts.append(f"<small>{max(more, 0)} more rows{' (truncated)' if self.truncated else ''}</small>")
            parts.append(_chart_html(self.chart))
        return "".join(parts) + "</div>"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rows"] = [list(r) for r in self.rows]
        return d


def _chart_html(spec: dict[str, Any] | None) -> str:
    """The answer's chart in its notebook view (Altair, or a one-line hint); nothing when none fits."""
    from kgsql.generate.chart_view import chart_html

    return chart_html(spec) if spec is not None else ""


def check_question(question: str) -> str:
    """Refuse empty and absurdly long questions before any model is asked."""
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    q = " ".join(question.split())
    if len(q) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(q)} characters long; the limit is {MAX_QUESTION_CHARS}")
    return q
