"""Every way a request can go wrong answers ``{"error": "one line"}`` with its status, and nothing reaches the log
as a traceback (issue 35, item 5): deep nesting, lone surrogates, other verbs, protocol errors, clients that hang
up, and SQL that holds its own slots rather than the server's."""
from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from raw_http import exchange, is_json_error, post_json, request

from kgsql.errors import BusyError
from kgsql.llm.scripted import ScriptedLM
from kgsql.serve.client import call
from kgsql.serve.http import ApiServer


@pytest.fixture(scope="module")
def server(schema_graph, serve_graph, example_db: Path) -> ApiServer:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="err_geo")
    return serve_graph(ScriptedLM(default="SELECT 1"), max_busy=2, max_sql=2)


def address(server: ApiServer) -> tuple[str, int]:
    return server.server_address[0], server.server_address[1]


@pytest.mark.parametrize("body", [b"[" * 3000, b'{"a":' * 3000, b'{"db": "err_geo", "sql": ' + b"[" * 1500])
def test_deep_nesting_is_400(server: ApiServer, body: bytes, capfd: pytest.CaptureFixture[str]) -> None:
    answer = request(address(server), "POST", "/api/sql", body)
    assert answer.status == 400 and is_json_error(answer) and "nest" in answer.json()["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_nesting_within_the_parser_but_too_deep_is_400(server: ApiServer) -> None:
    deep = b'{"db": "err_geo", "question": "q?", "sets": ' + b'{"a":' * 200 + b"1" + b"}" * 201
    answer = request(address(server), "POST", "/api/ask", deep)
    assert answer.status == 400 and "nest" in answer.json()["error"]


@pytest.mark.parametrize("path,body", [
    ("/api/sql", b'{"db": "err_geo", "sql": "SELECT \'\\ud800\'"}'),
    ("/api/select", b'{"db": "err_geo", "question": "\\udfff which river?"}'),
    ("/api/sql", b'{"db": "err_\\ud800", "sql": "SELECT 1"}'),
])
def test_lone_surrogate_is_400(server: ApiServer, path: str, body: bytes) -> None:
    answer = request(address(server), "POST", path, body)
    assert answer.status == 400 and is_json_error(answer) and "surrogate" in answer.json()["error"]


@pytest.mark.parametrize("verb,path,status,allow", [
    ("PUT", "/api/sql", 405, "POST"),
    ("DELETE", "/api/databases", 405, "GET"),
    ("PATCH", "/api/databases/err_geo/tables/rivers", 405, "GET"),
    ("OPTIONS", "/api/ask", 405, "POST"),
    ("POST", "/api/health", 405, "GET"),
    ("GET", "/api/examples", 405, "POST"),
    ("PUT", "/api/nothing", 404, None),
    ("OPTIONS", "*", 404, None),
])
def test_other_verbs_answer_json(server: ApiServer, verb: str, path: str, status: int, allow: str | None) -> None:
    answer = request(address(server), verb, path, b"{}")
    assert answer.status == status and is_json_error(answer)
    assert answer.headers.get("allow") == allow


def test_head_answers_405_without_a_body(server: ApiServer) -> None:
    answer = request(address(server), "HEAD", "/api/health")
    assert answer.status == 405 and answer.headers["allow"] == "GET" and answer.body == b""
    assert answer.headers["content-type"] == "application/json"


@pytest.mark.parametrize("data,status", [
    (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
    (b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    (b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Many: 1\r\n" * 120 + b"\r\n", 431),
    (b"NONSENSE\r\n\r\n", 400),
    (b"\r\n\r\n", 400),  # a blank request line (the standard library closes without an answer)
    (b"GET /api/health HTTP/x.y\r\n\r\n", 400),
    (b"GET /api/health HTTP/2.0\r\n\r\n", 505),
    (b"GET /api/health\r\n", 505),  # HTTP/0.9: no status line would carry the answer
    (b"BREW /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
    (b"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n5\r\n{}   \r\n0\r\n\r\n", 411),
    (b"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
     b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}", 400),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)) + b"\r\n\r\n", 400),  # TLS on HTTP
])
def test_protocol_errors_answer_json(server: ApiServer, data: bytes, status: int,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    answer = exchange(address(server), data)
    assert answer.status == status and is_json_error(answer), answer
    assert "<html" not in answer.body.decode("utf-8", "replace").lower()
    assert "Traceback" not in capfd.readouterr().err


def test_clients_that_hang_up_leave_no_traceback(server: ApiServer, capfd: pytest.CaptureFixture[str]) -> None:
    """A client that resets the connection before, while or after the service answers: nothing in the log."""
    host, port = address(server)
    for i in range(40):
        conn = socket.create_connection((host, port), timeout=10)
        path = "/api/openapi.json" if i % 2 else "/api/databases"
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        if i % 4 == 3:
            time.sleep(0.05)  # the answer is on its way
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        conn.close()
    deadline = time.monotonic() + 120  # the reset requests' handlers may still hold the read slots under load
    while request((host, port), "GET", "/api/databases").status == 503 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert request((host, port), "GET", "/api/health").status == 200
    assert request((host, port), "GET", "/api/databases").status == 200  # every slot given back
    assert "Traceback" not in capfd.readouterr().err


def test_a_slow_query_holds_an_sql_slot_not_the_server(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two SQL requests in flight take both SQL slots: the third gets 503 at once, every other route answers."""
    entered, release = threading.Semaphore(0), threading.Event()

    def slow_sql(db: str, sql: str) -> dict[str, Any]:
        entered.release()
        release.wait(60)
        return {"columns": ["x"], "rows": [[1]], "truncated": False, "elapsed_s": 0.0}

    monkeypatch.setattr(server.service, "sql", slow_sql)
    where = address(server)
    answers: list[int] = []
    slow = [threading.Thread(target=lambda: answers.append(post_json(where, "/api/sql", {"db": "err_geo",
                                                                                        "sql": "SELECT 1"}).status))
            for _ in range(2)]
    for thread in slow:
        thread.start()
    try:
        assert entered.acquire(timeout=60) and entered.acquire(timeout=60)
        refused = post_json(where, "/api/sql", {"db": "err_geo", "sql": "SELECT 1"})
        assert refused.status == 503 and is_json_error(refused) and "busy" in refused.json()["error"]
        for path in ("/api/health", "/api/databases", "/api/databases/err_geo/tables/rivers",
                     "/api/databases/err_geo/graph", "/api/openapi.json"):
            assert request(where, "GET", path).status == 200, path
        assert request(where, "GET", "/").status in (200, 404)  # the page (404: its library is not installed)
    finally:
        release.set()
        for thread in slow:
            thread.join(60)
    assert answers == [200, 200]


def test_every_sql_worker_busy_is_503(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import kgsql.db.isolate

    def busy(*_args: Any, **_kwargs: Any) -> Any:
        raise BusyError("every SQL worker is busy; try again shortly")

    monkeypatch.setattr(kgsql.db.isolate, "execute_isolated", busy)
    answer = post_json(address(server), "/api/sql", {"db": "err_geo", "sql": "SELECT 1"})
    assert answer.status == 503 and answer.json() == {"error": "every SQL worker is busy; try again shortly"}
    with pytest.raises(BusyError, match="every SQL worker is busy"):  # what a library caller of the service gets
        call(server.url, "POST", "/api/sql", {"db": "err_geo", "sql": "SELECT 1"})


def test_sql_runs_in_the_killable_worker(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import kgsql.db.isolate

    calls: list[tuple[str, dict[str, Any]]] = []
    real = kgsql.db.isolate.execute_isolated

    def spy(db: Any, sql: str, **kwargs: Any) -> Any:
        calls.append((sql, kwargs))
        return real(db, sql, **kwargs)

    monkeypatch.setattr(kgsql.db.isolate, "execute_isolated", spy)
    answer = post_json(address(server), "/api/sql", {"db": "err_geo", "sql": "SELECT count(*) FROM rivers"})
    assert answer.status == 200 and calls and calls[0][0] == "SELECT count(*) FROM rivers"
    assert calls[0][1]["timeout_s"] == server.service.sql_timeout_s


def test_a_bug_is_500_in_one_line(server: ApiServer, monkeypatch: pytest.MonkeyPatch,
                                  capfd: pytest.CaptureFixture[str]) -> None:
    def broken() -> Any:
        raise ZeroDivisionError("division by zero\n  in a place")

    monkeypatch.setattr(server.service, "databases", broken)
    answer = request(address(server), "GET", "/api/databases")
    assert answer.status == 500 and answer.json() == {"error": "internal error: ZeroDivisionError: division by zero "
                                                               "in a place"}
    logged = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert logged == ["kgsql serve: GET /api/databases: internal error: ZeroDivisionError: division by zero in a place"]
