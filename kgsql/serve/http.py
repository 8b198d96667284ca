"""The service's small HTTP API under ``/api/`` (stdlib server, JSON in and out, loopback by default).

    GET  /api/health                        {"ok": true, "pid": ...}
    GET  /api/databases                     [{"name", "tables", "spatial"}]
    GET  /api/databases/{db}/tables/{t}     columns, keys, descriptions, sample values
    POST /api/select {"db", "question"}     the schema selection for a question
    POST /api/ask    {"db", "question", "method"?, "evidence"?, "sets"?, "limits"?, "trace"?}   the answer
    POST /api/sql    {"db", "sql"}          rows through the read-only guard
    GET  /api/databases/{db}/graph          tables, columns and join edges (what the page draws)
    POST /api/examples {"db", "question", "sql"}   teach a right pair (mined, kept as an example)
    GET  /                                  the web page (kgsql/serve/web)
    GET  /api/openapi.json, /api/docs       the API described (OpenAPI 3.1) and readable

Bounded: request bodies over 64 KiB are refused (413), at most ``max_busy``
requests run at once (503 beyond), questions reach the model one at a time.
Errors are ``{"error": "one line"}`` with 400 (bad input), 404 (unknown
name) or 500; a kgsql error never becomes a traceback on the wire.
"""
from __future__ import annotations

import json
import os
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

from kgsql.errors import InputError, KgsqlError, UnknownNameError
from kgsql.secrets import redact
from kgsql.serve.service import Service

MAX_BODY = 64 * 1024
MAX_BUSY = 4

_TABLE = re.compile(r"^/api/databases/([^/]+)/tables/([^/]+)$")
_PICTURE = re.compile(r"^/api/databases/([^/]+)/graph$")
WEB = Path(__file__).parent / "web"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript"),
          "/app.css": ("app.css", "text/css"),
          "/vendor/cytoscape.min.js": ("vendor/cytoscape.min.js", "text/javascript")}


def _text(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{key}' must be a non-empty string")
    return value


def routes(service: Service) -> dict[tuple[str, str], Callable[[dict[str, Any]], Any]]:
    """(method, path) -> handler of the parsed JSON body."""
    def ask(b: dict[str, Any]) -> Any:
        sets, limits = b.get("sets") or {}, b.get("limits") or {}
        if not isinstance(sets, dict) or not isinstance(limits, dict):
            raise InputError("'sets' and 'limits' must be objects of method options")
        method = _text(b, "method", required=False) or "kgsql"
        evidence = b.get("evidence")
        if evidence is not None and not isinstance(evidence, str):
            raise InputError("'evidence' must be a string")
        return service.ask(_text(b, "db"), _text(b, "question"), method=method,  # type: ignore[arg-type]
                           evidence=evidence or None, sets=sets, limits=limits,
                           trace=bool(b.get("trace")))

    return {
        ("GET", "/api/health"): lambda b: {"ok": True, "pid": os.getpid(), **service.describe()},
        ("GET", "/api/databases"): lambda b: service.databases(),
        ("POST", "/api/select"): lambda b: service.select(_text(b, "db"), _text(b, "question")),  # type: ignore[arg-type]
        ("POST", "/api/ask"): ask,
        ("POST", "/api/sql"): lambda b: service.sql(_text(b, "db"), _text(b, "sql")),  # type: ignore[arg-type]
        ("POST", "/api/examples"): lambda b: service.teach(_text(b, "db"), _text(b, "question"),  # type: ignore[arg-type]
                                                           _text(b, "sql")),  # type: ignore[arg-type]
        ("GET", "/api/openapi.json"): lambda b: openapi(),
    }


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class ApiServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its service and how busy it may get.

    Unless ``allow_remote``, a request must name a loopback host and come from no other web
    origin, so a page the user opens elsewhere cannot reach the service (cross-site requests,
    DNS rebinding)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: Service, *, max_busy: int = MAX_BUSY,
                 allow_remote: bool = False) -> None:
        self.service = service
        self.routes = routes(service)
        self.slots = threading.BoundedSemaphore(max_busy)
        self.allow_remote = allow_remote
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

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

    def _serve(self, verb: str) -> None:
        path = self.path.split("?", 1)[0]
        if not self.server.trusted(self.headers.get("Host"), self.headers.get("Origin")):
            self.close_connection = True
            self._json(403, {"error": "requests must name 127.0.0.1/localhost and come from no other site "
                                      "(kgsql serve --allow-remote to serve other hosts)"})
            return
        if verb == "GET" and path == "/api/docs":
            self._send(200, docs_page().encode("utf-8"), "text/html; charset=utf-8")
            return
        if verb == "GET" and path in STATIC:
            name, kind = STATIC[path]
            try:
                self._send(200, (WEB / name).read_bytes(), kind)
            except OSError:
                self._json(404, {"error": f"{name} is not installed (./run install copies the web page's "
                                          f"graph library with npm)"})
            return
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._json(400, {"error": "bad Content-Length"})
            return
        if length > MAX_BODY:
            self.close_connection = True
            self._json(413, {"error": f"request body over {MAX_BODY // 1024} KiB"})
            return
        if verb == "POST" and not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self.close_connection = True
            self._json(415, {"error": "POST bodies must be sent as Content-Type: application/json"})
            return
        try:
            raw = self.rfile.read(length) if length else b""  # read before taking a slot
        except OSError:
            self.close_connection = True
            return
        if path == "/api/health":  # always answers, however busy: ask uses it to find the service
            self._json(*self._dispatch(verb, path, raw))
            return
        if not self.server.slots.acquire(blocking=False):
            self._json(503, {"error": "the service is busy; try again"})
            return
        try:
            status, payload = self._dispatch(verb, path, raw)
        finally:
            self.server.slots.release()
        self._json(status, payload)

    def _dispatch(self, verb: str, path: str, raw: bytes) -> tuple[int, Any]:
        try:
            body = json.loads(raw or b"{}")
        except ValueError as exc:
            return 400, {"error": f"not JSON: {exc}"}
        try:
            if not isinstance(body, dict):
                raise InputError("the request body must be a JSON object")
            table = _TABLE.match(path)
            if verb == "GET" and table:
                return 200, self.server.service.table(unquote(table.group(1)), unquote(table.group(2)))
            picture = _PICTURE.match(path)
            if verb == "GET" and picture:
                return 200, self.server.service.picture(unquote(picture.group(1)))
            handler = self.server.routes.get((verb, path))
            if handler is None:
                known = sorted({p for _v, p in self.server.routes})
                return 404, {"error": f"no route {verb} {path} (see /api/docs; routes: {', '.join(known)})"}
            return 200, handler(body)
        except UnknownNameError as exc:
            return 404, {"error": redact(str(exc))}
        except (InputError, KgsqlError) as exc:
            return 400, {"error": redact(str(exc))}
        except Exception as exc:  # noqa: BLE001 - a bug answers 500, the service stays up
            return 500, {"error": f"internal error: {type(exc).__name__}: {redact(str(exc))[:200]}"}

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8"), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
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
                              "sets": "object", "limits": "object", "trace": "boolean"}, ["db", "question"]),
            "/api/sql": post("Run SQL through the read-only guard", {"db": "string", "sql": "string"},
                             ["db", "sql"]),
        },
    }


def _responses() -> dict[str, Any]:
    return {"200": {"description": "JSON result"}, "400": {"description": "bad input: {error}"},
            "404": {"description": "unknown database, table or route: {error}"},
            "413": {"description": "body over 64 KiB"}, "503": {"description": "busy"}}


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
