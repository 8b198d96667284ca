"""The stdio wire's line rules (kgsql.mcp.wire): what each kind of line is answered with, and replies
that the SDK alone could not encode."""
from __future__ import annotations

import json
import os
import threading

import pytest

pytest.importorskip("mcp", reason="the mcp package (kgsql[mcp]) is not installed")

from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse  # noqa: E402

import anyio  # noqa: E402

from kgsql.mcp.stdio import WireLines, WireOutput  # noqa: E402
from kgsql.mcp.wire import MAX_DEPTH, MAX_LINE_BYTES, encode, read_line  # noqa: E402


def _reply(line: str | bytes) -> tuple[object, int]:
    incoming = read_line(line.encode("utf-8", errors="surrogatepass") if isinstance(line, str) else line)
    assert incoming.message is None and incoming.reply is not None
    return incoming.reply.id, incoming.reply.error.code


def test_each_bad_line_gets_the_error_json_rpc_names() -> None:
    assert _reply("not json") == (None, -32700)
    assert _reply(b"\xff\x80{") == (None, -32700)
    assert _reply("[1, 2]") == (None, -32600)
    assert _reply('{"jsonrpc": "2.0", "id": 3, "method": "x", "params": [1]}') == (3, -32600)
    assert _reply('{"jsonrpc": "1.0", "id": "a", "method": "x"}') == ("a", -32600)
    assert _reply('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}') == (None, -32600)  # not a notification
    assert _reply('{"jsonrpc": "2.0", "id": null, "method": "ping"}') == (None, -32600)


def test_too_deep_is_refused_with_the_top_level_id() -> None:
    for depth in (MAX_DEPTH, 5000, 100_000):
        nested = "[" * depth + "]" * depth
        line = f'{{"jsonrpc": "2.0", "params": {{"a": {nested}, "id": 9}}, "id": "top", "method": "m"}}'
        assert _reply(line) == ("top", -32600)
    assert _reply("[" * 5000 + "]" * 5000) == (None, -32600)


def test_messages_pass_and_notifications_are_never_answered() -> None:
    assert isinstance(read_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n').message, JSONRPCRequest)
    assert isinstance(read_line(b'{"jsonrpc": "2.0", "method": "n"}').message, JSONRPCNotification)
    broken_notification = read_line(b'{"jsonrpc": "2.0", "method": "n", "params": 5}')
    assert broken_notification.message is None and broken_notification.reply is None
    assert read_line(b"  \r\n") == read_line(b"")


def test_surrogates_become_replacement_characters_both_ways() -> None:
    incoming = read_line(b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "m\\udfff", "params": {"\\ud801": "x"}}')
    assert isinstance(incoming.message, JSONRPCRequest)
    assert (incoming.message.id, incoming.message.method) == ("\ufffd", "m\ufffd")
    assert incoming.message.params == {"\ufffd": "x"}
    reply = JSONRPCResponse(jsonrpc="2.0", id=4, result={"content": [{"type": "text", "text": "a\ud800b"}]})
    line = encode(reply)
    assert line.endswith(b"\n") and json.loads(line)["result"]["content"][0]["text"] == "a\ufffdb"
    error = JSONRPCError(jsonrpc="2.0", id=None, error={"code": -32700, "message": "\udc00"})
    assert json.loads(encode(error))["error"]["message"] == "\ufffd"


def _lines_of(fd: int) -> list[bytes | None]:
    async def read_all() -> list[bytes | None]:
        lines, out = WireLines(fd), []
        while (line := await lines.next()) != b"":
            out.append(line)
        return out

    return anyio.run(read_all)


def test_a_line_past_the_limit_is_skipped_to_its_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = b"x" * (MAX_LINE_BYTES * 2 + 5) + b"\n" + b'{"next": 1}\n' + b"x" * (MAX_LINE_BYTES + 1) + b"\nlast"
    path = tmp_path / "wire"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)  # a regular file: read without the event loop's polling
    try:
        from_file = _lines_of(fd)
    finally:
        os.close(fd)
    assert from_file == [None, b'{"next": 1}\n', None, b"last"]
    read_end, write_end = os.pipe()  # a pipe, as a client gives it: polled

    def feed() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            for start in range(0, len(data), 1 << 20):
                pipe.write(data[start:start + (1 << 20)])

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        assert _lines_of(read_end) == from_file
    finally:
        writer.join()
        os.close(read_end)


def test_output_waits_for_a_slow_reader() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    data = b"y" * (1 << 20) + b"\n"  # far more than a pipe holds
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 65536):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        anyio.run(WireOutput(write_end).write, data)
    finally:
        os.close(write_end)
        reader.join()
        os.close(read_end)
    assert bytes(got) == data
