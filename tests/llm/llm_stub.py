"""A misbehaving OpenAI-ish HTTP endpoint for fault tests (stdlib only).

A real server on 127.0.0.1 so faults travel through the real ``openai``
client and socket stack.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET_KEY = "sk-kgsqltest-9f8e7d6c5b4a3210-DO-NOT-LEAK"


def chat_body(text: str | None = "SELECT 1;", *, usage: dict | None | bool = True,
              finish_reason: str = "stop", model: str = "stub-model") -> dict[str, Any]:
    """A minimal OpenAI chat.completion body."""
    body: dict[str, Any] = {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": text}}],
    }
    if usage is True:
        body["usage"] = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15,
                         "prompt_tokens_details": {"cached_tokens": 8}}
    elif isinstance(usage, dict):
        body["usage"] = usage
    return body


@dataclass
class Reply:
    """What the stub does for one request."""

    status: int = 200
    body: Any = None              # dict -> JSON; bytes/str -> sent raw
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False            # close the socket without answering


Action = Reply | Callable[[dict[str, Any]], Reply]


class StubServer:
    """OpenAI-ish endpoint that answers from a script, recording every request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._script: list[Action] = []
        self._default: Action = Reply(body=chat_body())
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw or b"{}")
                except ValueError:
                    payload = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = {"path": self.path, "headers": headers, "json": payload}
                with stub._lock:
                    stub.requests.append(req)
                    action = stub._script.pop(0) if stub._script else stub._default
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                done = False

                def finished() -> None:
                    # count a request as in flight until just before its answer is sent,
                    # so a client that got its answer never sees it still counted
                    nonlocal done
                    if not done:
                        done = True
                        with stub._lock:
                            stub.in_flight -= 1

                try:
                    reply = action(req) if callable(action) else action
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    finished()
                    if reply.drop:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    body = reply.body if reply.body is not None else b""
                    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else (
                        body.encode() if isinstance(body, str) else body)
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (timeout tests)
                finally:
                    finished()

            do_GET = do_POST

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def script(self, *actions: Action) -> "StubServer":
        """Answer the next requests with these, then fall back to the default."""
        with self._lock:
            self._script = list(actions)
        return self

    def always(self, action: Action) -> "StubServer":
        with self._lock:
            self._default = action
        return self

    @property
    def hits(self) -> int:
        return len(self.requests)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
