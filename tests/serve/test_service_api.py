"""The service's HTTP API in-process: routes, errors, limits, the read-only guard, the OpenAPI page."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kgsql.llm.scripted import ScriptedLM
from kgsql.serve.http import ApiServer
from timing import scaled

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"


@pytest.fixture(scope="module")
def api(schema_graph, serve_graph, example_db: Path) -> tuple[ApiServer, ScriptedLM]:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="api_geo")
    lm = ScriptedLM(default=LONGEST)
    return serve_graph(lm, max_busy=2), lm


def request(server: ApiServer, verb: str, path: str, body: Any = None, raw: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(server.url + path, data=data, method=verb,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            text = r.read().decode()
            return r.status, json.loads(text) if r.headers["Content-Type"] == "application/json" else text
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_databases_tables_selection_and_sql(api) -> None:  # type: ignore[no-untyped-def]
    server, _lm = api
    status, dbs = request(server, "GET", "/api/databases")
    assert status == 200 and {"name": "api_geo", "tables": 4, "spatial": True} in dbs
    status, table = request(server, "GET", "/api/databases/api_geo/tables/rivers")
    assert status == 200 and [c["name"] for c in table["columns"]] == ["river_id", "name", "length_km", "Shape"]
    assert {"from": "river_cities.river_id", "to": "rivers.river_id", "origin": "declared"} in table["foreign_keys"]
    status, selection = request(server, "POST", "/api/select", {"db": "api_geo", "question": "longest river?"})
    assert status == 200 and "rivers" in selection["tables"]
    status, rows = request(server, "POST", "/api/sql", {"db": "api_geo", "sql": "SELECT count(*) FROM cities"})
    assert status == 200 and rows["rows"] == [[12]] and rows["columns"] == ["count(*)"]


def test_ask_answers_and_keeps_its_method_warm(api) -> None:  # type: ignore[no-untyped-def]
    server, lm = api
    body = {"db": "api_geo", "question": "Which river is the longest?", "sets": {"shots": 0},
            "limits": {"timeout_s": 20, "max_rows": 50}}
    status, answer = request(server, "POST", "/api/ask", body)
    assert status == 200 and answer["sql"] == LONGEST and answer["rows"] == [["Silver River"]]
    assert "prompts" not in answer
    status, traced = request(server, "POST", "/api/ask", {**body, "trace": True})
    assert status == 200 and traced["prompts"][0]["step"] == "sql"
    assert len(server.service._methods) == 1  # the same method object served both
    status, renamed = request(server, "POST", "/api/ask", {**body, "sets": {"shots": 0, "tips": False}})
    assert status == 200 and renamed["sql"] == LONGEST  # an option's earlier name is read as --set reads it


def test_a_warm_method_sees_a_reingest(api, schema_graph, example_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 31, defect 3: the service re-read the schema after a re-ingest, its warm methods did not."""
    import shutil
    import sqlite3

    server, lm = api
    copy = tmp_path / "follow.sqlite"
    shutil.copy(example_db, copy)
    schema_graph.ingest(copy, name="api_follow")
    body = {"db": "api_follow", "question": "Which river is the deepest?", "sets": {"shots": 0}}
    assert request(server, "POST", "/api/ask", body)[0] == 200
    assert "depth_m" not in lm.calls[-1].prompt
    warm = dict(server.service._methods)
    with sqlite3.connect(copy) as db:
        db.execute("ALTER TABLE rivers ADD COLUMN depth_m REAL")
    schema_graph.ingest(copy, name="api_follow")
    assert request(server, "POST", "/api/ask", body)[0] == 200
    assert "depth_m" in lm.calls[-1].prompt and dict(server.service._methods) == warm  # the same method, new schema


@pytest.mark.parametrize("verb,path,body,code,message", [
    ("POST", "/api/sql", {"db": "api_geo", "sql": "DROP TABLE cities"}, 400, "not a read-only query"),
    ("POST", "/api/sql", {"db": "nope", "sql": "SELECT 1"}, 404, "nope"),
    ("POST", "/api/ask", {"db": "api_geo"}, 400, "'question' must be a non-empty string"),
    ("POST", "/api/ask", {"db": "api_geo", "question": "q?", "sets": {"colour": 1}}, 400, "unknown option(s) colour"),
    ("POST", "/api/ask", {"db": "api_geo", "question": "q?", "method": "nope"}, 404, "unknown method"),
    ("GET", "/api/databases/api_geo/tables/nope", None, 404, "nope"),
    ("GET", "/api/nothing", None, 404, "no route GET /api/nothing"),
    ("POST", "/api/select", [1, 2], 400, "must be a JSON object"),
])
def test_errors_are_one_json_line(api, verb: str, path: str, body: Any, code: int, message: str) -> None:  # type: ignore[no-untyped-def]
    status, payload = request(api[0], verb, path, body)
    assert status == code and message in payload["error"] and "\n" not in payload["error"]


def test_limits_body_size_and_busy(api, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    server, _lm = api
    status, payload = request(server, "POST", "/api/sql", raw=b"{" + b" " * (70 * 1024) + b"}")
    assert status == 413 and "64 KiB" in payload["error"]
    status, payload = request(server, "POST", "/api/sql", raw=b"{not json")
    assert status == 400 and payload["error"].startswith("not JSON")
    status, payload = request(server, "POST", "/api/sql", raw=b'{"db": "api_geo", "sql": "SELECT 1", "n": NaN}')
    assert status == 400 and "NaN is not a JSON number" in payload["error"]
    for _ in range(2):  # both read slots taken: the next read is refused, not queued
        server.slots["read"].acquire()
    try:
        status, payload = request(server, "GET", "/api/databases")
        health = request(server, "GET", "/api/health")  # but health always answers (ask finds the service)
    finally:
        for _ in range(2):
            server.slots["read"].release()
    assert status == 503 and "busy" in payload["error"] and health[0] == 200
    before = example_db.stat().st_mtime_ns
    request(server, "POST", "/api/sql", {"db": "api_geo", "sql": "DELETE FROM cities"})
    assert example_db.stat().st_mtime_ns == before


def test_graph_picture_and_teaching(api) -> None:  # type: ignore[no-untyped-def]
    server, _lm = api
    status, picture = request(server, "GET", "/api/databases/api_geo/graph")
    assert status == 200 and [t["name"] for t in picture["tables"]] == ["provinces", "cities", "rivers", "river_cities"]
    assert {"from": "cities.province_id", "to": "provinces.province_id", "origin": "declared"} in picture["joins"]
    status, taught = request(server, "POST", "/api/examples",
                             {"db": "api_geo", "question": "How many rivers?", "sql": "SELECT count(*) FROM rivers"})
    assert status == 200 and taught["examples"] >= 1
    assert request(server, "POST", "/api/examples", {"db": "api_geo", "question": "q?", "sql": "DROP TABLE rivers"})[0] \
        == 400
    status, payload = request(server, "POST", "/api/examples", {"db": "api_geo", "question": "q?",
                                                                "sql": "SELECT nme FROM rivers"})
    assert status == 400 and "no such column" in payload["error"]  # only a query that runs is taught
    status, payload = request(server, "POST", "/api/examples", {"db": "api_geo", "question": "Rivers longer than 1000?",
                                                                "sql": "SELECT name FROM rivers WHERE length_km > 1000"})
    assert status == 400 and "returns no rows" in payload["error"]  # nor one that cannot be checked (issue 30)


@pytest.mark.parametrize("headers,code,message", [
    ({"Host": "evil.example"}, 403, "must name 127.0.0.1/localhost"),  # DNS rebinding
    ({"Origin": "http://evil.example"}, 403, "come from no other site"),  # another site's page
    ({"Content-Type": "text/plain"}, 415, "application/json"),  # a form post without preflight
    ({"Content-Length": "-1"}, 400, "bad Content-Length"),
])
def test_requests_from_elsewhere_are_refused(api, headers: dict, code: int, message: str) -> None:  # type: ignore[no-untyped-def]
    body = {"db": "api_geo", "question": "q?", "sql": "SELECT 1"}
    status, payload = request(api[0], "POST", "/api/examples", body, headers=headers)
    assert status == code and message in payload["error"]
    own = {"Origin": api[0].url}
    assert request(api[0], "POST", "/api/sql", {"db": "api_geo", "sql": "SELECT 1 AS x"}, headers=own)[0] == 200


def test_ipv6_loopback(serve_graph) -> None:  # type: ignore[no-untyped-def]
    try:
        server = serve_graph(None, host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    assert server.url.startswith("http://[::1]:")
    assert request(server, "GET", "/api/health")[1]["ok"] is True


def test_openapi_and_docs(api) -> None:  # type: ignore[no-untyped-def]
    server, _lm = api
    status, spec = request(server, "GET", "/api/openapi.json")
    assert status == 200 and spec["openapi"] == "3.1.0"
    assert set(spec["paths"]) == {"/api/health", "/api/databases", "/api/databases/{db}/tables/{table}",
                                  "/api/databases/{db}/graph", "/api/select", "/api/ask", "/api/sql",
                                  "/api/examples"}
    assert spec["paths"]["/api/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]["required"] \
        == ["question"]  # no db: routed (issue 33)
    status, page = request(server, "GET", "/api/docs")
    assert status == 200 and "<code>/api/ask</code>" in page and "question*" in page
    t0 = time.perf_counter()
    assert request(server, "GET", "/api/health")[1]["ok"] is True
    assert time.perf_counter() - t0 < scaled(5)
