"""Each request's operation in a child process of its own: bounded in number, time and memory.

``serve`` and ``mcp`` never run an operation on the thread that answers requests. A request that
passes binding gets a child process (from a fork server that has the operations imported, so a
start costs milliseconds), in a process group of its own. The child runs the operation and sends
its records back through a pipe as JSON lines, in frames; the parent forwards them. Because the
work is a process:

- a client that goes away, a wall-clock budget that runs out, or a memory ceiling that is crossed
  ends it for certain (SIGTERM to the group, which interrupts DuckDB and runs the operation's
  ``finally`` blocks when it can, then SIGKILL after a grace period), including an operation that
  has emitted nothing and one stuck in native code;
- native code that holds the GIL for a long time stalls that child, never the server;
- the number of operations running at once is capped; past it a request is refused at once
  (:class:`Busy`, 503), and ``/health`` keeps answering.

Frames on the pipe: one byte of type, four bytes of length (big-endian), the payload. ``R``: one
or more records as JSON lines; ``N``: a notice (text for the server's stderr); ``E``: an error,
``{"status": int, "body": {...}}``; ``D``: done. A child that dies without ``D`` or ``E`` ended
abnormally, and the parent says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ccrawl.errors import EXIT_TEMPORARY, CcrawlError
from ccrawl.serve.errors import OverBudget

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
    from types import FrameType

    from ccrawl.ops import Operation

_HEAD = struct.Struct(">cI")
_FLUSH_BYTES = 64 << 10
_FLUSH_SECONDS = 0.02
_POLL_SECONDS = 0.2
#: how children start unless a Runner says otherwise; a script that registers operations at run time
#: in the server's own process sets "fork" so that its children see them
START_METHOD = "forkserver"


class Busy(CcrawlError):
    """Every slot for operations is taken: try again shortly."""

    exit_code = EXIT_TEMPORARY


@dataclass(frozen=True, slots=True)
class Budget:
    """What one operation may take: wall-clock seconds, memory (RSS of its process tree), and how
    many may run at once."""

    seconds: float = 600.0
    memory_mb: int = 2048
    concurrent: int = 4
    grace: float = 1.0  #: seconds between SIGTERM and SIGKILL
    queue_seconds: float = 10.0  #: how long a request waits for a free slot before it is refused
    queue_length: int = 64  #: requests that may wait at once; the next is refused at once


@dataclass(slots=True)
class Frame:
    kind: str  # "R" records (bytes of JSON lines), "N" notice, "E" error, "D" done
    data: bytes


# ---------------------------------------------------------------------------------------------
# the child


class _Out:
    """Frames to the parent on a blocking pipe. Records are gathered up to 64 KiB; a thread sends
    what is gathered once it is 20 ms old, so a record never waits on the operation's next one."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf: list[bytes] = []
        self.size = 0
        self.since = 0.0
        self.lock = threading.Lock()
        threading.Thread(target=self._tick, name="ccrawl-op-flush", daemon=True).start()

    def _tick(self) -> None:
        while True:
            time.sleep(_FLUSH_SECONDS)
            with self.lock:
                if self.buf and time.monotonic() - self.since >= _FLUSH_SECONDS:
                    try:
                        self._flush()
                    except OSError:
                        return

    def _send(self, kind: bytes, data: bytes) -> None:
        view = memoryview(_HEAD.pack(kind, len(data)) + data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def _flush(self) -> None:
        if self.buf:
            data, self.buf, self.size = b"".join(self.buf), [], 0
            self._send(b"R", data)

    def record(self, line: bytes) -> None:
        with self.lock:
            if not self.buf:
                self.since = time.monotonic()
            self.buf.append(line)
            self.size += len(line)
            if self.size >= _FLUSH_BYTES:
                self._flush()

    def _control(self, kind: bytes, data: bytes) -> None:
        with self.lock:
            self._flush()
            self._send(kind, data)

    def notice(self, text: str) -> None:
        self._control(b"N", text.encode("utf-8", "replace"))

    def error(self, status: int, body: Mapping[str, object]) -> None:
        self._control(b"E", json.dumps({"status": status, "body": body}).encode("utf-8"))

    def done(self) -> None:
        self._control(b"D", b"")


#: characters that end a line for some readers (str.splitlines, JavaScript before ES2019) but may stand raw
#: inside a JSON string: escaped on the wire so that one record is always one line, however it is split
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029",
                              "\x0b": "\\u000b", "\x0c": "\\u000c", "\x1c": "\\u001c", "\x1d": "\\u001d",
                              "\x1e": "\\u001e"})


def wire_line(json_text: str) -> bytes:
    """One NDJSON line: ``json_text`` (valid JSON) with every Unicode line break escaped, and a newline."""
    return (json_text.translate(_LINE_BREAKS) + "\n").encode("utf-8")


_RAW_BREAKS = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def wire_lines(jsonl: bytes) -> bytes:
    """JSON lines (UTF-8) as :func:`wire_line` puts each on the wire. In JSON text written by ``json.dumps``
    the only line breaks that can stand raw are U+0085, U+2028 and U+2029 (it escapes every control
    character), so replacing their UTF-8 bytes is the same translation."""
    for char, escaped in _RAW_BREAKS:
        jsonl = jsonl.replace(char.encode("utf-8"), escaped.encode("ascii"))
    return jsonl


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM in the child: stop DuckDB's running queries, then unwind (finally blocks run)."""
    with contextlib.suppress(Exception):
        from ccrawl.store import duck

        interrupt_all = getattr(duck, "interrupt_all", None)
        if interrupt_all is not None:
            interrupt_all()
    raise SystemExit(143)


def _close_inherited(keep: int) -> None:
    """A forked child closes what it got from the server (listening and client sockets above all: a
    copy held here would keep a client's connection open after the server let it go)."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in fds:
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def wants_notice(op: Operation) -> bool:
    """True when ``op`` says things to its user (a ``notice``, or the context carrying one)."""
    return any(p.name in ("notice", "ctx") for p in op.params)


def with_notice(op: Operation, kwargs: Mapping[str, object], notice: Callable[[str], None]) -> dict[str, object]:
    """``kwargs`` with the operation's notices going to ``notice`` (a frame to the client)."""
    from ccrawl.ops.context import OpContext, context

    names = {p.name for p in op.params}
    out = dict(kwargs)
    if "ctx" in names:
        given = out.get("ctx")
        out["ctx"] = context(given if isinstance(given, OpContext) else None).with_notice(notice)
    if "notice" in names:
        out["notice"] = notice
    return out


def _child(name: str, kwargs: dict[str, object], wants_notice: bool, conn: Connection, forked: bool) -> None:
    """The child's body: run the operation ``name`` and frame what it yields onto ``conn``."""
    os.setpgid(0, 0)
    os.dup2(2, 1)  # stdout may be a protocol stream (mcp over stdio): anything printed goes to stderr
    if forked:
        _close_inherited(keep=conn.fileno())
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)  # a fork of the server must not wake the server's loop
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ccrawl import ops
    from ccrawl.output import to_json
    from ccrawl.serve.errors import error_body

    out = _Out(conn.fileno())
    produced = 0
    try:
        if wants_notice:
            kwargs = with_notice(ops.get(name), kwargs, out.notice)
        op = ops.get(name)
        records = op.batches(**kwargs) if op.batch_func is not None else op(**kwargs)
        for record in records:
            if isinstance(record, Mapping):
                out.record(wire_line(to_json(record)))
                produced += 1
            else:  # an Arrow record batch: its JSON lines written at once
                from ccrawl.batchout import batch_jsonl

                out.record(wire_lines(batch_jsonl(record)))
                produced += record.num_rows
        out.done()
    except BrokenPipeError:
        pass  # the parent has gone: nobody to tell
    except BaseException as exc:  # every error becomes a frame; the parent decides what the client sees
        if isinstance(exc, SystemExit) and exc.code == 143:
            return
        status, body = error_body(exc)
        with contextlib.suppress(BrokenPipeError):
            out.error(status, body)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# the parent


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and every process below it (Linux /proc; 0 where unreadable)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * page
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", "rb") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass(slots=True)
class Runner:
    """Starts children for operations within a :class:`Budget`.

    ``start_method`` "forkserver" (the servers' choice: a clean process with the operations
    imported, so a child inherits no socket of the server's) or "fork" (a child sees operations
    registered at run time, as tests register them).
    """

    budget: Budget = field(default_factory=Budget)
    start_method: str = ""  #: "" is :data:`START_METHOD`
    notice: Callable[[str], None] | None = None
    running: set[BaseProcess] = field(default_factory=set)
    waiting: int = 0
    _ctx: Any = None
    _slots: asyncio.Semaphore | None = None

    def __post_init__(self) -> None:
        self.start_method = self.start_method or START_METHOD
        self._ctx = multiprocessing.get_context(self.start_method)
        if self.start_method == "forkserver":
            self._ctx.set_forkserver_preload(["ccrawl.serve.preload"])

    def warm(self) -> None:
        """Start the fork server now (it imports every operation), not at the first request."""
        if self.start_method == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()

    async def stream(self, name: str, kwargs: Mapping[str, object], *,
                     wants_notice: bool) -> AsyncGenerator[Frame, None]:
        """The operation's frames, ``E`` and ``D`` included; raises :class:`Busy` when no slot frees up in
        time and :class:`OverBudget` when a budget ran out (after the records already given). Use it
        under ``contextlib.aclosing`` so that a consumer that stops (a cancelled request) ends the child
        at once rather than when the generator is collected."""
        await self._take_slot()
        try:
            async with contextlib.aclosing(self._run(name, kwargs, wants_notice=wants_notice)) as frames:
                async for frame in frames:
                    yield frame
        finally:
            assert self._slots is not None
            self._slots.release()

    async def _take_slot(self) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.budget.concurrent)
        busy = (f"the server is running {self.budget.concurrent} operations, its limit, and {self.waiting} more "
                "wait; try again shortly")
        if self._slots.locked() and self.waiting >= self.budget.queue_length:
            raise Busy(busy)
        self.waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), self.budget.queue_seconds)
        except TimeoutError:
            raise Busy(busy) from None
        finally:
            self.waiting -= 1

    async def _run(self, name: str, kwargs: Mapping[str, object], *,
                   wants_notice: bool) -> AsyncGenerator[Frame, None]:
        loop = asyncio.get_running_loop()
        reader_end, writer_end = self._ctx.Pipe(duplex=False)
        forked = self.start_method == "fork"
        proc = self._ctx.Process(target=_child, args=(name, dict(kwargs), wants_notice, writer_end, forked),
                                 name=f"ccrawl-op:{name}")
        self.running.add(proc)
        started = loop.run_in_executor(None, proc.start)
        try:
            await asyncio.shield(started)
            writer_end.close()
            reader = asyncio.StreamReader(limit=1 << 30)
            pipe = os.fdopen(os.dup(reader_end.fileno()), "rb", buffering=0)
            reader_end.close()
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
            try:
                async with contextlib.aclosing(self._frames(proc, reader)) as frames:
                    async for frame in frames:
                        yield frame
            finally:
                transport.close()
        finally:
            self.running.discard(proc)
            if not started.done():  # cancelled while the child was starting: let it start, then end it
                with contextlib.suppress(BaseException):
                    await started
            await self._end(proc)

    async def _frames(self, proc: BaseProcess, reader: asyncio.StreamReader) -> AsyncGenerator[Frame, None]:
        deadline = time.monotonic() + self.budget.seconds
        ceiling = self.budget.memory_mb << 20
        watch = asyncio.ensure_future(self._watch(proc, deadline, ceiling))
        head: asyncio.Future[bytes] | None = None
        try:
            while True:
                head = asyncio.ensure_future(reader.readexactly(_HEAD.size))
                done, _ = await asyncio.wait({head, watch}, return_when=asyncio.FIRST_COMPLETED)
                if head not in done:
                    watch.result()  # raises OverBudget
                try:
                    kind, length = _HEAD.unpack(head.result())
                    data = await reader.readexactly(length) if length else b""
                except asyncio.IncompleteReadError:
                    await self._end(proc)
                    raise CcrawlError(f"the operation's process ended abnormally (exit {proc.exitcode})") from None
                frame = Frame(kind.decode("ascii"), data)
                if frame.kind == "N":
                    if self.notice is not None:
                        self.notice(data.decode("utf-8", "replace"))
                    continue
                yield frame
                if frame.kind in ("D", "E"):
                    return
        finally:
            for task in (watch, head):
                if task is not None and not task.done():
                    task.cancel()
                if task is not None:
                    with contextlib.suppress(BaseException):
                        await task

    async def _watch(self, proc: BaseProcess, deadline: float, ceiling: int) -> None:
        """Returns never; raises :class:`OverBudget` when the time or the memory runs out."""
        while True:
            await asyncio.sleep(_POLL_SECONDS)
            if time.monotonic() > deadline:
                raise OverBudget(f"the operation ran past the server's limit of {self.budget.seconds:g} s and was "
                                 "stopped", 504)
            if proc.pid is not None and tree_rss(proc.pid) > ceiling:
                raise OverBudget(f"the operation went over the server's memory ceiling of {self.budget.memory_mb:,} "
                                 "MiB and was stopped", 507)

    async def _end(self, proc: BaseProcess) -> None:
        """Make sure the child and its process group are gone: SIGTERM, a grace period, SIGKILL."""
        if proc.pid is None:
            return
        if proc.exitcode is None:
            _kill_group(proc.pid, signal.SIGTERM)
            end = time.monotonic() + self.budget.grace
            while proc.exitcode is None and time.monotonic() < end:
                await asyncio.sleep(0.02)
        _kill_group(proc.pid, signal.SIGKILL)  # the group's other processes too, even when the child is gone
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, proc.join, 5)

    def stop_all(self) -> None:
        """Kill every running child's group at once (the server is stopping)."""
        for proc in list(self.running):
            if proc.pid is not None:
                _kill_group(proc.pid, signal.SIGKILL)


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
