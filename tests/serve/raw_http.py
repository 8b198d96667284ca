"""HTTP by hand for the service tests: any bytes out, the answer parsed, nothing a client library would fix up.

Each request is one connection to a loopback address: the request is sent, the
write side is closed (so the server never waits for more), and the answer is
read to the end.
"""
from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    """One HTTP response: status, headers (lower-case names) and the raw body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def exchange(address: tuple[str, int], data: bytes, *, timeout_s: float = 60.0) -> Answer:
    """Send ``data`` as it is and read the whole answer (ConnectionError if none came)."""
    with socket.create_connection(address, timeout=timeout_s) as conn:
        try:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may answer and close before it has read everything
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return parse(b"".join(chunks))


def parse(raw: bytes) -> Answer:
    """The first final answer in ``raw`` (a ``100 Continue`` before it is skipped)."""
    while raw.startswith(b"HTTP/1.1 1"):
        raw = raw.partition(b"\r\n\r\n")[2]
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    if not sep or not lines[0].startswith("HTTP/"):
        raise ConnectionError(f"no HTTP answer: {raw[:120]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    return Answer(int(lines[0].split()[1]), headers, body[:int(length)] if length is not None else body)


def request(address: tuple[str, int], verb: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, *, timeout_s: float = 60.0) -> Answer:
    """A well-formed HTTP/1.1 request (``Host`` names the address; JSON content type when there is a body)."""
    fields = {"Host": f"{address[0]}:{address[1]}", "Connection": "close"}
    if body is not None:
        fields.update({"Content-Type": "application/json", "Content-Length": str(len(body))})
    fields.update(headers or {})
    head = f"{verb} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return exchange(address, head.encode("latin-1") + (body or b""), timeout_s=timeout_s)


def post_json(address: tuple[str, int], path: str, payload: Any, *, timeout_s: float = 60.0) -> Answer:
    return request(address, "POST", path, json.dumps(payload).encode(), timeout_s=timeout_s)


def is_json_error(answer: Answer) -> bool:
    """An error answered the service's way: a JSON body ``{"error": "one line"}``."""
    if answer.headers.get("content-type") != "application/json":
        return False
    try:
        message = answer.json().get("error")
    except (ValueError, AttributeError):
        return False
    return isinstance(message, str) and bool(message) and "\n" not in message
