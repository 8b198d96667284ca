"""Where a run's time went: LLM seconds and tokens per call purpose, per question.

Read from the ``calls`` each record keeps (``runner.call_record``); older
records without them count only their totals.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from kgsql.eval.records import Record


def time_breakdown(records: Iterable[Record]) -> dict[str, Any]:
    """Per question means: LLM seconds in all, per call purpose (step), and the rest of the latency."""
    answered = [r for r in records if r.latency_s is not None and r.error_kind != "missing_db"]
    n = len(answered)
    if not n:
        return {"n": 0}
    steps: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    llm = 0.0
    for r in answered:
        calls = r.extra.get("calls") or []
        llm += float(r.extra.get("llm_s") or sum(float(c.get("seconds") or 0) for c in calls))
        for c in calls:
            s = steps[str(c.get("step"))]
            s["calls"] += 1
            s["seconds"] += float(c.get("seconds") or 0.0)
            s["prompt_tokens"] += float(c.get("prompt_tokens") or 0)
            s["cached_tokens"] += float(c.get("cached_tokens") or 0)
            s["generated_tokens"] += float(c.get("completion_tokens") or 0)
    total = sum(float(r.latency_s or 0.0) for r in answered)
    return {
        "n": n,
        "llm_s_per_question": round(llm / n, 2),
        "other_s_per_question": round(max(0.0, total - llm) / n, 2),
        "steps": {name: {k: round(v / n, 2) for k, v in s.items()} for name, s in sorted(steps.items())},
    }


def format_breakdown(b: dict[str, Any]) -> str:
    """One line per step: ``sql: 1.00 calls, 6.1 s, 212 prompt (180 cached), 24 generated`` per question."""
    if not b.get("n"):
        return "  (no answered questions)"
    lines = [f"  LLM {b['llm_s_per_question']:.1f} s/question, other {b['other_s_per_question']:.1f} s/question"]
    for name, s in b["steps"].items():
        lines.append(f"  {name}: {s.get('calls', 0):.2f} calls, {s.get('seconds', 0):.1f} s, "
                     f"{s.get('prompt_tokens', 0):,.0f} prompt ({s.get('cached_tokens', 0):,.0f} cached), "
                     f"{s.get('generated_tokens', 0):,.0f} generated")
    return "\n".join(lines)
