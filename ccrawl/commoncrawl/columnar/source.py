"""Where the index parts' bytes come from: ranged HTTP reads through the polite client, or local files.

A :class:`RangeSource` answers ``tail(part)`` (the last bytes, where the Parquet footer lives, plus
the file size) and ``read(part, start, length)``, and counts every byte it moved. Both engines read
through one: the native engine with :class:`SparseFile` (a file object pyarrow reads, fetching only
the ranges asked for), DuckDB through :class:`RangeFileSystem` (an fsspec filesystem), so their byte
counts compare like for like.

:class:`HttpSource` drives a :class:`~ccrawl.net.client.CCClient` on an event loop of its own thread,
so pyarrow's worker threads can block on a read. Columnar scans are exempt from the request-rate
budget (a scan is thousands of small footer reads); the retries, the adaptive concurrency and the
on-disk cache still apply: a part's tail is cached (parts never change once published).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ccrawl.errors import InputError
from ccrawl.net.rangefile import RangeFile

#: The first read of a part: its last 16 KiB. A part the filter rules out costs this and nothing
#: more (a footer bigger than it costs one more read of exactly the rest, :meth:`RangeSource.footer`).
#: 64 KiB (Arrow's own speculative read) would bring a small part's page index along and save a round
#: trip a surviving part, but on the fake's small index it quadruples the bytes a domain query reads
#: (4% -> 12%), against the "a part that holds nothing costs its footer" rule; see bench/README.md.
TAIL_BYTES = 16 << 10
#: At most this many bytes of tails are held in memory (2,048 parts' worth).
TAIL_MEMORY = 128 << 20
#: A driver's step on more bytes than this runs on a thread of the pool rather than the I/O loop: decoding
#: them takes long enough to be worth the hand-off, and decodes then run side by side.
HEAVY_STEP = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
T = TypeVar("T")

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

Job = tuple[Any, str, "list[tuple[int, int]] | None"]
"""``(token, part, ranges)``: read those byte ranges of the part (none of them in its tail), or with
ranges None its tail (:meth:`RangeSource.run_job`)."""


class Driver(Protocol):
    """What :meth:`RangeSource.drive` runs: the jobs to start with, and for each finished job the next ones."""

    def start(self) -> list[Job]: ...

    def done(self, token: Any, result: Any, error: BaseException | None) -> list[Job]: ...


@dataclass(slots=True)
class SourceStats:
    """What a scan moved: bytes and requests over the wire, and tails served from the cache."""

    bytes_read: int = 0
    requests: int = 0
    cache_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, n: int) -> None:
        with self._lock:
            self.bytes_read += n
            self.requests += 1


def footer_length(part: str, size: int, tail: bytes) -> int:
    """The length of the FileMetaData that ends ``tail`` (the last bytes of a file of ``size``), checked."""
    if tail[-4:] != b"PAR1" or len(tail) < 8:
        raise InputError(f"{part}: not a Parquet file (no PAR1 at its end)")
    n = int.from_bytes(tail[-8:-4], "little")
    if n + 8 > size:
        raise InputError(f"{part}: the footer length {n} is past the start of the file")
    return n


class RangeSource:
    """Ranged reads of index parts; subclasses say how. ``size`` is known once ``tail`` ran."""

    def __init__(self) -> None:
        self.stats = SourceStats()
        # Tails held in memory, least recently used first, at most TAIL_MEMORY bytes of them (a scan
        # of every crawl opens tens of thousands of parts); sizes are kept for good.
        self._tails: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        self._tail_bytes = 0
        self._sizes: dict[str, int] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # threads for drivers' steps, made when first needed

    def tail(self, part: str) -> tuple[int, bytes]:
        """(file size, its last min(size, TAIL_BYTES) bytes)."""
        with self._lock:
            hit = self._tails.get(part)
            if hit is not None:
                self._tails.move_to_end(part)
                return hit
        got = self._fetch_tail(part)
        self._keep_tail(part, got)
        return got

    def _keep_tail(self, part: str, got: tuple[int, bytes]) -> None:
        with self._lock:
            self._sizes[part] = got[0]
            old = self._tails.pop(part, None)
            if old is not None:
                self._tail_bytes -= len(old[1])
            self._tails[part] = got
            self._tail_bytes += len(got[1])
            while self._tail_bytes > TAIL_MEMORY and len(self._tails) > 1:
                _, (_, dropped) = self._tails.popitem(last=False)
                self._tail_bytes -= len(dropped)

    def prefetch_tails(self, parts: Sequence[str]) -> None:
        """Fetch the tails of ``parts`` not held yet; :class:`HttpSource` has them in flight at once."""
        for part in parts:
            self.tail(part)

    def size(self, part: str) -> int:
        with self._lock:
            known = self._sizes.get(part)
        return known if known is not None else self.tail(part)[0]

    def footer(self, part: str) -> bytes:
        """The Parquet footer of ``part``: FileMetaData, its 4-byte length and ``PAR1``."""
        size, tail = self.tail(part)
        n = footer_length(part, size, tail)
        if n + 8 <= len(tail):
            return tail[len(tail) - n - 8 :]
        return self.read(part, size - n - 8, n + 8 - len(tail)) + tail

    def read(self, part: str, start: int, length: int) -> bytes:
        """Bytes ``[start, start + length)``; served from the tail when it holds them."""
        if length <= 0:
            return b""
        size, tail = self.tail(part)
        tail_start = size - len(tail)
        if start >= tail_start:
            return tail[start - tail_start : start - tail_start + length]
        if start + length > tail_start:
            # Straddles the tail: fetch only the part before it.
            head = self._fetch(part, start, tail_start - start)
            return head + tail[: start + length - tail_start]
        return self._fetch(part, start, length)

    def read_many(self, part: str, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Several ``(start, length)`` reads of one part; :class:`HttpSource` has them in flight at once."""
        return [self.read(part, start, length) for start, length in ranges]

    def run_job(self, job: Job) -> Any:
        """One job, here and now: ``(token, part, None)`` is the part's ``(size, tail)``, ``(token, part,
        ranges)`` those ranges' bytes, in order."""
        _, part, ranges = job
        return self.tail(part) if ranges is None else self.read_many(part, ranges)

    def drive(self, driver: Driver, *, workers: int = 4) -> None:
        """Run ``driver``: its first jobs, and as each job completes, the driver's step on it and the jobs
        that step asks for. Here a pool of ``workers`` threads runs each job and its step (reads from
        disk, decoding in parallel); :class:`HttpSource` does better."""
        self._driver_pool(workers)
        self.launch(driver, driver.start())

    def launch(self, driver: Driver, jobs: Sequence[Job]) -> None:
        """More jobs for a driver :meth:`drive` runs, from any thread."""
        pool = self._driver_pool(1)
        for job in jobs:
            pool.submit(self._run_and_step, driver, job)

    def _run_and_step(self, driver: Driver, job: Job) -> None:
        try:
            result, error = self.run_job(job), None
        except Exception as exc:  # the driver hands it to its caller
            result, error = None, exc
        self.launch(driver, driver.done(job[0], result, error))

    def _driver_pool(self, workers: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ccrawl-columnar")
            return self._pool

    def _fetch_tail(self, part: str) -> tuple[int, bytes]:
        raise NotImplementedError

    def _fetch(self, part: str, start: int, length: int) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)


class LocalSource(RangeSource):
    """Parts on disk (a downloaded copy, or a test's): ``part`` is a path under ``root``."""

    def __init__(self, root: Path | str) -> None:
        super().__init__()
        self.root = Path(root)

    def path(self, part: str) -> Path:
        return self.root / part

    def _fetch_tail(self, part: str) -> tuple[int, bytes]:
        path = self.path(part)
        size = path.stat().st_size
        n = min(size, TAIL_BYTES)
        with open(path, "rb") as fh:
            fh.seek(size - n)
            data = fh.read(n)
        self.stats.add(len(data))
        return size, data

    def _fetch(self, part: str, start: int, length: int) -> bytes:
        with open(self.path(part), "rb") as fh:
            fh.seek(start)
            data = fh.read(length)
        self.stats.add(len(data))
        return data


class HttpSource(RangeSource):
    """Parts over HTTP(S) through :class:`~ccrawl.net.client.CCClient`, on a loop thread of its own."""

    def __init__(self, client_options: Mapping[str, Any], *, connections: int = 8) -> None:
        super().__init__()
        from ccrawl.net.client import CCClient

        options = dict(client_options)
        options["rate"] = 0
        options["global_rate"] = 0  # columnar scans are exempt from the request budget
        options["max_connections"] = max(1, connections)
        self.client = CCClient(**options)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="ccrawl-columnar-io", daemon=True)
        self._thread.start()
        self.run(self.client.open())

    def run(self, coro: Coroutine[object, object, T]) -> T:
        if threading.current_thread() is self._thread:
            coro.close()
            # A driver's step (run on the loop) read something it did not ask for as a job: waiting here
            # for the loop would wait for ever.
            raise RuntimeError("ccrawl: a columnar read outside the planned jobs (a bug); please report it")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def url(self, part: str) -> str:
        return str(self.client.data_url(part))

    def _cached_tail(self, part: str) -> tuple[str, tuple[int, bytes] | None]:
        key = f"{self.url(part)}#tail{TAIL_BYTES}"
        cached = self.client.cache.get(key)
        if cached is not None and len(cached.body) > 16:
            self.stats.cache_hits += 1
            return key, (int.from_bytes(cached.body[:16], "big"), cached.body[16:])
        return key, None

    async def _get_tail(self, part: str, key: str) -> tuple[int, bytes]:
        url = self.url(part)
        resp = await self.client.get(url, headers={"Range": f"bytes=-{TAIL_BYTES}", "Accept-Encoding": "identity"},
                                     accept=(200, 206))
        if resp.status == 200:
            size, data = len(resp.body), resp.body[-TAIL_BYTES:]
        else:
            m = _CONTENT_RANGE.match(resp.headers.get("content-range", ""))
            if not m:
                raise InputError(f"{url}: a ranged read came back without Content-Range")
            size, data = int(m.group(3)), resp.body
        self.stats.add(len(data))
        self.client.cache.put(key, size.to_bytes(16, "big") + data)
        return size, data

    def _fetch_tail(self, part: str) -> tuple[int, bytes]:
        key, hit = self._cached_tail(part)
        if hit is not None:
            return hit
        got: tuple[int, bytes] = self.run(self._get_tail(part, key))
        return got

    def prefetch_tails(self, parts: Sequence[str]) -> None:
        with self._lock:
            missing = [p for p in dict.fromkeys(parts) if p not in self._tails]
        wanted: list[tuple[str, str]] = []
        for part in missing:
            key, hit = self._cached_tail(part)
            if hit is not None:
                self._keep_tail(part, hit)
            else:
                wanted.append((part, key))
        if not wanted:
            return

        async def gather() -> list[tuple[int, bytes]]:
            return list(await asyncio.gather(*(self._get_tail(part, key) for part, key in wanted)))

        for (part, _), got in zip(wanted, self.run(gather()), strict=True):
            self._keep_tail(part, got)

    def _fetch(self, part: str, start: int, length: int) -> bytes:
        data: bytes = self.run(self.client.get_range(self.url(part), start, length))
        self.stats.add(len(data))
        return data

    def read_many(self, part: str, ranges: list[tuple[int, int]]) -> list[bytes]:
        if len(ranges) < 2:
            return [self.read(part, start, length) for start, length in ranges]
        size, tail = self.tail(part)
        return self.run(self._read_ranges(part, size - len(tail), tail, ranges))

    async def _read_ranges(self, part: str, tail_start: int, tail: bytes, ranges: list[tuple[int, int]]) -> list[bytes]:
        """``ranges`` of ``part`` at once: what is before ``tail_start`` over the wire, the rest from ``tail``."""
        url = self.url(part)
        remote = [(s, min(n, tail_start - s)) for s, n in ranges if n > 0 and s < tail_start]
        got = await asyncio.gather(*(self.client.get_range(url, s, n) for s, n in remote)) if remote else []
        out: list[bytes] = []
        k = 0
        for s, n in ranges:
            if n <= 0:
                out.append(b"")
            elif s >= tail_start:
                out.append(tail[s - tail_start : s - tail_start + n])
            else:
                head = got[k]
                k += 1
                self.stats.add(len(head))
                out.append(head + tail[: s + n - tail_start] if s + n > tail_start else head)
        return out

    def drive(self, driver: Driver, *, workers: int = 4) -> None:
        """Run ``driver`` on the loop thread: every job's requests in flight at once, and as a job's bytes land,
        the driver's step on them there and then (no thread hand-off a read), or, when they are more than
        HEAVY_STEP bytes to decode, on a pool of ``workers`` threads, so big decodes run side by side."""
        self._driver_pool(workers)
        self.launch(driver, driver.start())

    def launch(self, driver: Driver, jobs: Sequence[Job]) -> None:
        if jobs:
            self.loop.call_soon_threadsafe(self._start, driver, list(jobs))

    def _start(self, driver: Driver, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.loop.create_task(self._job(driver, job))

    async def _job(self, driver: Driver, job: Job) -> None:
        token, part, ranges = job
        result: Any = None
        error: BaseException | None = None
        try:
            if ranges is None:
                with self._lock:
                    result = self._tails.get(part)
                if result is None:
                    key, result = self._cached_tail(part)
                    if result is None:
                        result = await self._get_tail(part, key)
                    self._keep_tail(part, result)
            else:
                url = self.url(part)
                result = list(await asyncio.gather(*(self.client.get_range(url, s, n) for s, n in ranges)))
                for data in result:
                    self.stats.add(len(data))
        except asyncio.CancelledError as exc:  # the loop is going away: the driver must still hear of it
            driver.done(token, None, exc)
            raise
        except Exception as exc:  # the driver hands it to its caller
            error = exc
        if ranges is not None and error is None and sum(map(len, result)) >= HEAVY_STEP:
            jobs = await self.loop.run_in_executor(self._pool, driver.done, token, result, error)
        else:
            jobs = driver.done(token, result, error)
        self._start(driver, jobs)

    def close(self) -> None:
        super().close()
        if self.loop.is_running():
            self.run(self.client.close())
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
        self.loop.close()


class SparseFile(RangeFile):
    """A read-only file over a :class:`RangeSource` part: each ``read`` becomes one ranged read.

    ``blocks`` are bytes already fetched, by start offset (filled by a prefetch); reads inside one are free.
    """

    def __init__(self, source: RangeSource, part: str, blocks: dict[int, bytes] | None = None) -> None:
        super().__init__(lambda start, length: source.read(part, start, length), source.size(part), name=part,
                         blocks=blocks)
        self.source = source
        self.part = part


def fsspec_filesystem(source: RangeSource, protocol: str = "ccrange") -> Any:
    """An fsspec filesystem whose paths are ``ccrange://<part>``, reading through ``source``."""
    from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

    class RangeFile(AbstractBufferedFile):  # type: ignore[misc]
        def _fetch_range(self, start: int, end: int) -> bytes:
            return source.read(self.path, start, end - start)

    class RangeFileSystem(AbstractFileSystem):  # type: ignore[misc]
        cachable = False

        def __init__(self) -> None:
            super().__init__()
            self.protocol = protocol

        @classmethod
        def _strip_protocol(cls, path: str) -> str:
            path = str(path)
            return path.split("://", 1)[1] if "://" in path else path

        def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
            path = self._strip_protocol(path)
            return {"name": path, "size": source.size(path), "type": "file"}

        def modified(self, path: str) -> Any:
            import datetime as dt

            return dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # parts never change once published

        def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
            info = self.info(path)
            return [info] if detail else [info["name"]]

        def _open(self, path: str, mode: str = "rb", block_size: Any = None, **kwargs: Any) -> Any:
            path = self._strip_protocol(path)
            return RangeFile(self, path, mode, block_size=block_size or (1 << 20), cache_type="none",
                             size=source.size(path))

    fs = RangeFileSystem()
    fs.protocol = protocol
    return fs


SourceFactory = Callable[[], RangeSource]
