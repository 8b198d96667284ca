"""``kgsql ask --explain`` and ``--json``: the answer's warnings and what its query does, with no model call
beyond the one that wrote the SQL."""
from __future__ import annotations

import json

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"
QUESTION = "Which river longer than 100 km is the longest?"  # 100: a literal the query leaves out


def test_explain_and_json_carry_the_explanation_and_the_warnings(geo_ask) -> None:  # type: ignore[no-untyped-def]
    with geo_ask(LONGEST, "explain_geo") as ask:
        explained = ask(QUESTION, "--explain")
        as_json = ask(QUESTION, "--json")
        calls = len(ask.stub.requests)
    assert explained.returncode == 0, explained.stderr
    out = explained.stdout.splitlines()
    warning = "Warning [unused-literal]: the question's '100' do(es) not appear in the query"
    assert out[out.index(f"SQL: {LONGEST}") + 1] == warning  # the flag right under the SQL
    steps = out[out.index("Explanation:") + 1:]
    assert steps[0].startswith("  - Reads rivers")
    assert "  - Keeps the 1 row(s) with the highest rivers.length_km" in steps
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["warnings"] == [{"code": "unused-literal",
                                 "text": "the question's '100' do(es) not appear in the query"}]
    assert data["explanation"]["tables"][0]["table"] == "rivers"
    assert data["explanation"]["lines"][-1] == "Keeps the 1 row(s) with the highest rivers.length_km"
    assert calls == 2  # one model call per answer: the review costs none
