"""The MCP server over stdin/stdout, answering every request line (see :mod:`kgsql.mcp.wire`).

Used instead of the SDK's stdio transport, which leaves a malformed line
unanswered and stops on a reply it cannot encode. While serving, the wire
lives on private copies of fd 0 and fd 1; fd 0 reads the null device and fd 1
writes to stderr, so a stray print or a child process (a SQL worker) cannot
put a byte between two frames.
"""
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.lowlevel
from anyio import CancelScope
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from kgsql.mcp.wire import MAX_LINE_BYTES, encode, read_line, too_long

__all__ = ["WireLines", "WireOutput", "serve_stdio"]


@contextmanager
def _wire_descriptors() -> Iterator[tuple[int, int]]:
    """Private (non-inheritable) copies of fd 0 and fd 1 for the wire; both restored on exit."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    blocking = os.get_blocking(wire_out)  # a flag of the open file (the client's pipe): restored below
    mode = os.fstat(wire_out).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        os.set_blocking(wire_out, False)  # a long reply is written as the client reads, never blocking the loop
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.set_blocking(wire_out, blocking)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


class _Polled:
    """A file descriptor waited on through the event loop, so that no thread is left blocked on the
    wire when serving ends. A regular file or the null device, which epoll refuses, is used
    directly: it never blocks anyway."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pollable = True

    async def _until(self, ready: Callable[[int], Awaitable[None]]) -> None:
        if self._pollable:
            try:
                await ready(self.fd)
                return
            except OSError:
                self._pollable = False
        await anyio.lowlevel.checkpoint()


class WireLines(_Polled):
    """The lines of the input, each at most :data:`MAX_LINE_BYTES` long."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self._buffer = bytearray()
        self._scanned = 0  # no newline before this offset of the buffer
        self._eof = False

    async def next(self) -> bytes | None:
        """The next line with its newline; ``b""`` at the end of input; None for a line over
        :data:`MAX_LINE_BYTES` (read to its end and dropped, never held whole)."""
        too_long = False
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0 or self._eof:
                cut = end + 1 if end >= 0 else len(self._buffer)
                line = bytes(self._buffer[:cut])
                del self._buffer[:cut]
                self._scanned = 0
                return None if too_long or len(line) > MAX_LINE_BYTES else line
            if len(self._buffer) > MAX_LINE_BYTES:
                too_long = True
                self._buffer.clear()
            self._scanned = len(self._buffer)
            await self._until(anyio.wait_readable)
            chunk = os.read(self.fd, 65536)  # readable: returns what is there without blocking
            self._eof = not chunk
            self._buffer += chunk


class WireOutput(_Polled):
    """The output: whole lines, written as the reader takes them."""

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            await self._until(anyio.wait_writable)
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                continue


async def _read_wire(lines: WireLines, inbound: MemoryObjectSendStream[SessionMessage | Exception],
                     replies: MemoryObjectSendStream[SessionMessage]) -> None:
    """Lines to the SDK, or straight to an error reply; the end of input closes the inbound stream."""
    async with inbound, replies:
        while True:
            line = await lines.next()
            if line == b"":
                return
            incoming = too_long() if line is None else read_line(line)
            try:
                if incoming.reply is not None:
                    await replies.send(SessionMessage(incoming.reply))
                if incoming.message is not None:
                    await inbound.send(SessionMessage(incoming.message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the server has stopped: nothing is left to read for


async def _write_wire(output: WireOutput, outbound: MemoryObjectReceiveStream[SessionMessage],
                      scope: CancelScope) -> None:
    """Every message as one line; a client that stopped reading ends the connection."""
    async with outbound:
        async for session_message in outbound:
            try:
                await output.write(encode(session_message.message))
            except (BrokenPipeError, ConnectionResetError):
                scope.cancel()
                return


async def _serve(server: Any) -> None:
    lowlevel = server._lowlevel_server  # what the SDK's own run_stdio_async serves; no public accessor
    with _wire_descriptors() as (wire_in, wire_out):
        inbound_send, inbound_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outbound_send, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_wire, WireLines(wire_in), inbound_send, outbound_send.clone())
            tasks.start_soon(_write_wire, WireOutput(wire_out), outbound_receive, tasks.cancel_scope)
            async with outbound_send, inbound_receive:
                await lowlevel.run(inbound_receive, outbound_send, lowlevel.create_initialization_options())


def serve_stdio(server: Any) -> None:
    """Serve ``server`` (an ``MCPServer``) on stdin/stdout until the input ends."""
    anyio.run(_serve, server)
