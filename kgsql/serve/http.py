"""The service's small HTTP API under ``/api/`` (stdlib server, JSON in and out, loopback by default).

    GET  /api/health                        {"ok": true, "pid": ...}
    GET  /api/databases                     [{"name", "tables", "spatial"}]
    GET  /api/databases/{db}/tables/{t}     columns, keys, descriptions, sample values
    POST /api/select {"db", "question"}     the schema selection for a question
    POST /api/ask    {"db", "question", "method"?, "evidence"?, "sets"?, "limits"?, "trace"?,
                      "history"? | "conversation"?, "reset"?}   the answer (follow-ups: kgsql.serve.asking;
                                            no "db": routed, the answer's "routing" names it)
    POST /api/sql    {"db", "sql"}          rows through the read-only guard
    GET  /api/databases/{db}/graph          tables, columns and join edges (what the page draws)
    POST /api/examples {"db", "question", "sql"}   teach a right pair (mined, kept as an example)
    GET  /                                  the web page (kgsql/serve/web)
    GET  /api/openapi.json, /api/docs       the API described (OpenAPI 3.1) and readable

Bounded: request bodies over 64 KiB are refused (413); requests that run SQL,
questions and reads each have their own slots (``max_sql``, ``max_busy``,
``max_busy``; 503 at once beyond), so a slow query never holds the routes
that only read; questions reach the model one at a time. Every error, the
standard library's protocol errors included, is ``{"error": "one line"}``
with its status (400 bad input, 403, 404 unknown name or path, 405 another
method, 411, 413, 414, 415, 431, 501, 503 busy, 505; 500 only for a bug), and
nothing reaches the log as a traceback (docs/serve.md lists them).
"""
from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

from kgsql.errors import BusyError, KgsqlError, UnknownNameError
from kgsql.secrets import redact
from kgsql.serve.asking import ask_arguments, text_field as _text
from kgsql.serve.body import parse_body
from kgsql.serve.idle import IdleClock
from kgsql.serve.service import Service

MAX_BODY = 64 * 1024
MAX_BUSY = 4  # reads at once, and questions at once (more of a kind get 503)
MAX_SQL = 4   # requests running SQL at once (each holds one SQL worker process)

_TABLE = re.compile(r"^/api/databases/([^/]+)/tables/([^/]+)$")
_PICTURE = re.compile(r"^/api/databases/([^/]+)/graph$")
WEB = Path(__file__).parent / "web"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript"),
          "/app.css": ("app.css", "text/css"),
          "/chart.js": ("chart.js", "text/javascript"),
          **{f"/vendor/{name}.min.js": (f"vendor/{name}.min.js", "text/javascript")
             for name in ("cytoscape", "vega", "vega-lite", "vega-embed")}}


def routes(service: Service) -> dict[tuple[str, str], Callable[[dict[str, Any]], Any]]:
    """(method, path) -> handler of the parsed JSON body."""
    return {
        ("GET", "/api/health"): lambda b: {"ok": True, "pid": os.getpid(), **service.describe()},
        ("GET", "/api/databases"): lambda b: service.databases(),
        ("POST", "/api/select"): lambda b: service.select(_text(b, "db"), _text(b, "question")),  # type: ignore[arg-type]
        ("POST", "/api/ask"): lambda b: service.ask(**ask_arguments(b)),
        ("POST", "/api/sql"): lambda b: service.sql(_text(b, "db"), _text(b, "sql")),  # type: ignore[arg-type]
        ("POST", "/api/examples"): lambda b: service.teach(_text(b, "db"), _text(b, "question"),  # type: ignore[arg-type]
                                                           _text(b, "sql")),  # type: ignore[arg-type]
        ("GET", "/api/openapi.json"): lambda b: openapi(),
    }


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

#: Routes that can take long, and the pool of slots each takes; every other route takes a "read" slot.
#: Separate pools: a slow query or a slow model holds slots of its own kind, never the ones health,
#: databases, tables, the graph and the page answer with.
SLOT_KINDS: dict[tuple[str, str], str] = {("POST", "/api/sql"): "sql", ("POST", "/api/examples"): "sql",
                                          ("POST", "/api/ask"): "question", ("POST", "/api/select"): "question"}
LISTEN_BACKLOG = 1024  # connections the kernel holds until accepted: a burst gets answers (503 at worst), not resets
LINGER_S = 2.0  # after the last answer, how long a closing connection drains what the client still sends
LINGER_BYTES = 1024 * 1024  # and how much of it
MAX_MESSAGE = 1000  # characters of an error message on the wire (an echoed 64 KiB request line is cut)


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` as one bounded line (an error message: a SQL text or a request line may hold newlines)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


class ApiServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its service and how busy it may get.

    Unless ``allow_remote``, a request must name a loopback host and come from no other web
    origin, so a page the user opens elsewhere cannot reach the service (cross-site requests,
    DNS rebinding)."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], service: Service, *, max_busy: int = MAX_BUSY,
                 max_sql: int = MAX_SQL, allow_remote: bool = False) -> None:
        self.service = service
        self.routes = routes(service)
        self.slots = {"read": threading.BoundedSemaphore(max_busy), "question": threading.BoundedSemaphore(max_busy),
                      "sql": threading.BoundedSemaphore(max_sql)}
        self.allow_remote = allow_remote
        self.clock = IdleClock()  # when it was last used (``kgsql serve --idle-stop``)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def verbs(self, path: str) -> tuple[str, ...]:
        """The methods ``path`` answers (none: an unknown path)."""
        if path in STATIC or path == "/api/docs" or _TABLE.match(path) or _PICTURE.match(path):
            return ("GET",)
        return tuple(sorted(verb for verb, route in self.routes if route == path))

    def trusted(self, host: str | None, origin: str | None) -> bool:
        """The request names this machine and, if a browser sent it, came from this service's page."""
        if self.allow_remote:
            return True
        name = (host or "").rsplit(":", 1)[0] if not (host or "").startswith("[") else (host or "").split("]")[0] + "]"
        if name not in LOOPBACK_HOSTS:
            return False
        if origin is None:
            return True
        scheme, _, rest = origin.partition("://")
        origin_host = rest.rsplit(":", 1)[0] if not rest.startswith("[") else rest.split("]")[0] + "]"
        return scheme == "http" and origin_host in LOOPBACK_HOSTS and rest.endswith(f":{self.server_address[1]}")

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that failed outside the routes: one line on stderr, nothing for a client that went away
        (the standard library prints a traceback)."""
        error = sys.exc_info()[1]
        if error is None or isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"kgsql serve: a request from {client_address[0]} failed: {type(error).__name__}: "
              f"{one_line(redact(str(error)))}", file=sys.stderr, flush=True)

    def shutdown_request(self, request: Any) -> None:
        """Close so the client still reads the last answer: stop writing, drain what it still sends (bounded),
        then close. Closing with unread bytes (a refused body, the rest of an oversized header) would reset
        the connection, and the client would lose the answer."""
        try:
            request.shutdown(socket.SHUT_WR)
            request.settimeout(LINGER_S)
            left = LINGER_BYTES
            while left > 0 and (chunk := request.recv(min(left, 65536))):
                left -= len(chunk)
        except OSError:
            pass
        self.close_request(request)


class Handler(BaseHTTPRequestHandler):
    server: ApiServer
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stops sending is dropped, never holds a slot

    def log_message(self, *args: Any) -> None:  # the service's own stderr stays quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    # Other methods get JSON too: 405 with Allow on a known path, 404 elsewhere (never the stdlib's HTML 501).
    def do_HEAD(self) -> None:  # noqa: N802
        self._serve("HEAD")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve("PATCH")

    def do_OPTIONS(self) -> None:  # noqa: N802
        self._serve("OPTIONS")

    def parse_request(self) -> bool:
        """The standard library's parse, plus an answer to a blank request line (it closes without one) and
        no HTTP/0.9 (its answers carry no status line, so no error could be told)."""
        if not super().parse_request():
            if not self.requestline.strip():
                self.send_error(400, "empty request line")
            return False
        if self.request_version == "HTTP/0.9":
            self.send_error(505, "HTTP/0.9 is not served: send HTTP/1.0 or HTTP/1.1")
            return False
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the standard library finds (bad request line 400, 414, 431, 501, 505) answered like every
        other error, as ``{"error": "one line"}``, instead of its HTML page."""
        if self.request_version == "HTTP/0.9":  # a request line too broken to name its version
            self.request_version = "HTTP/1.0"
        self.close_connection = True
        default = self.responses.get(code, ("error",))[0]
        self._json(code, {"error": one_line(f"{default}: {message}" if message and message != default
                                            else default)})

    def _serve(self, verb: str) -> None:
        with self.server.clock.working():
            self._answer(verb)

    def _answer(self, verb: str) -> None:
        path = self.path.split("?", 1)[0]
        if not self.server.trusted(self.headers.get("Host"), self.headers.get("Origin")):
            self.close_connection = True
            self._json(403, {"error": "requests must name 127.0.0.1/localhost and come from no other site "
                                      "(kgsql serve --allow-remote to serve other hosts)"})
            return
        raw = self._read_body()
        if raw is None:
            return
        allowed = self.server.verbs(path)
        if not allowed:
            known = sorted({p for _v, p in self.server.routes})
            self._json(404, {"error": one_line(f"no route {verb} {path} (see /api/docs; routes: {', '.join(known)})")})
            return
        if verb not in allowed:
            self._json(405, {"error": one_line(f"{verb} is not served on {path} (allowed: {', '.join(allowed)})")},
                       headers={"Allow": ", ".join(allowed)})
            return
        if verb == "POST" and not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._json(415, {"error": "POST bodies must be sent as Content-Type: application/json"})
            return
        if path == "/api/docs":
            self._send(200, docs_page().encode("utf-8"), "text/html; charset=utf-8")
            return
        if path in STATIC:
            name, kind = STATIC[path]
            try:
                self._send(200, (WEB / name).read_bytes(), kind)
            except OSError:
                self._json(404, {"error": f"{name} is not installed (./run install copies the web page's "
                                          f"libraries with npm)"})
            return
        if path == "/api/health":  # always answers, however busy: ask uses it to find the service
            self._json(*self._dispatch(verb, path, raw))
            return
        slots = self.server.slots[SLOT_KINDS.get((verb, path), "read")]
        if not slots.acquire(blocking=False):  # refused at once, never queued
            self._json(503, {"error": "the service is busy; try again"})
            return
        try:
            status, payload = self._dispatch(verb, path, raw)
        finally:
            slots.release()
        self._json(status, payload)

    def _read_body(self) -> bytes | None:
        """The request body, read before any slot is taken; None when refused (answered and closing)."""
        if self.headers.get("Transfer-Encoding") is not None:  # unread, its chunks would pass for the next request
            self.close_connection = True
            self._json(411, {"error": "send the body with a Content-Length (chunked bodies are not read)"})
            return None
        lengths = set(self.headers.get_all("Content-Length") or ["0"])
        try:
            length = int(lengths.pop() or 0) if len(lengths) == 1 else -1
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._json(400, {"error": "bad Content-Length"})
            return None
        if length > MAX_BODY:
            self.close_connection = True
            self._json(413, {"error": f"request body over {MAX_BODY // 1024} KiB"})
            return None
        try:
            return self.rfile.read(length) if length else b""
        except OSError:  # the client stopped sending or went away: nobody to answer
            self.close_connection = True
            return None

    def _dispatch(self, verb: str, path: str, raw: bytes) -> tuple[int, Any]:
        try:
            body = parse_body(raw)
            table = _TABLE.match(path)
            if verb == "GET" and table:
                return 200, self.server.service.table(unquote(table.group(1)), unquote(table.group(2)))
            picture = _PICTURE.match(path)
            if verb == "GET" and picture:
                return 200, self.server.service.picture(unquote(picture.group(1)))
            return 200, self.server.routes[(verb, path)](body)
        except UnknownNameError as exc:
            return 404, {"error": one_line(redact(str(exc)))}
        except BusyError as exc:
            return 503, {"error": one_line(redact(str(exc)))}
        except KgsqlError as exc:
            return 400, {"error": one_line(redact(str(exc)))}
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 in one line, the service stays up
            message = one_line(f"internal error: {type(exc).__name__}: {redact(str(exc))}")
            print(f"kgsql serve: {verb} {one_line(path, 120)}: {message}", file=sys.stderr, flush=True)
            return 500, {"error": message}

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace"),
                   "application/json", headers)

    def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":  # a HEAD answer has the headers of the body it does not send
            self.wfile.write(data)


def openapi() -> dict[str, Any]:
    """The API as an OpenAPI 3.1 document."""
    def post(summary: str, props: dict[str, str], required: list[str]) -> dict[str, Any]:
        schema = {"type": "object", "required": required,
                  "properties": {k: ({"type": "object"} if v == "object" else {"type": v}) for k, v in props.items()}}
        return {"post": {"summary": summary, "requestBody": {"required": True, "content": {
            "application/json": {"schema": schema}}}, "responses": _responses()}}

    def get(summary: str, params: tuple[str, ...] = ()) -> dict[str, Any]:
        op: dict[str, Any] = {"summary": summary, "responses": _responses()}
        if params:
            op["parameters"] = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                                for p in params]
        return {"get": op}

    return {
        "openapi": "3.1.0",
        "info": {"title": "kgsql service", "version": "1",
                 "description": "A warm kgsql process: schema graph, retriever, model. Read-only."},
        "paths": {
            "/api/health": get("Is the service up"),
            "/api/databases": get("The databases of the schema graph"),
            "/api/databases/{db}/tables/{table}": get("One table: columns, keys, descriptions, values",
                                                      ("db", "table")),
            "/api/databases/{db}/graph": get("Every table with its columns and every join edge (the page's picture)",
                                             ("db",)),
            "/api/examples": post("Keep a right (question, SQL) pair: mined and stored as the database's example",
                                  {"db": "string", "question": "string", "sql": "string"}, ["db", "question", "sql"]),
            "/api/select": post("The schema selection for a question", {"db": "string", "question": "string"},
                                ["db", "question"]),
            "/api/ask": post("Answer a question with SQL (method selectable)",
                             {"db": "string", "question": "string", "method": "string", "evidence": "string",
                              "sets": "object", "limits": "object", "trace": "boolean", "history": "array",
                              "conversation": "string", "reset": "boolean"}, ["question"]),
            "/api/sql": post("Run SQL through the read-only guard", {"db": "string", "sql": "string"},
                             ["db", "sql"]),
        },
    }


def _responses() -> dict[str, Any]:
    return {"200": {"description": "JSON result"}, "400": {"description": "bad input: {error}"},
            "404": {"description": "unknown database, table or route: {error}"},
            "405": {"description": "another method serves this path (see Allow): {error}"},
            "413": {"description": "body over 64 KiB"}, "415": {"description": "not application/json"},
            "503": {"description": "busy (every slot of this kind, or every SQL worker): {error}"}}


def docs_page() -> str:
    """``/api/docs``: every route with its summary and body fields, readable without a client."""
    from html import escape

    rows = []
    for path, ops in openapi()["paths"].items():
        for verb, op in ops.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            fields = ", ".join(f"{k}{'*' if k in body.get('required', []) else ''}"
                               for k in body.get("properties", {}))
            rows.append(f"<tr><td>{verb.upper()}</td><td><code>{escape(path)}</code></td>"
                        f"<td>{escape(op['summary'])}</td><td>{escape(fields)}</td></tr>")
    return ("<!doctype html><meta charset=utf-8><title>kgsql API</title><h1>kgsql service API</h1>"
            "<p>JSON in and out; * marks required fields. Machine-readable: <a href=/api/openapi.json>"
            "/api/openapi.json</a>.</p><table border=1 cellpadding=4><tr><th>verb</th><th>path</th>"
            "<th>what</th><th>body</th></tr>" + "".join(rows) + "</table>")
