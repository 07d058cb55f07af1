"""Downloading whole archive files (``download``): resumable, concurrent, checksummed as they stream.

Each file is written to ``<dest>.part`` and renamed to ``<dest>`` when every byte the server
announced has arrived, so a file under its final name is always complete and a rerun skips it.
A ``.part`` left by a killed run is resumed with a Range request from its current size (its bytes
are hashed first, so the checksum still covers the whole file). A connection lost part way is
resumed the same way, up to the client's ``retries``. The SHA-256 is computed as the bytes stream
past, never by reading the finished file back.

Destinations keep the bucket's tree (``<out>/crawl-data/CC-MAIN-.../x.warc.gz``) unless ``flat``,
which keeps the file name alone; two paths with the same name under ``flat`` are refused rather
than letting one overwrite the other. ``place`` replaces both with a function of the path: the
dataset library passes its ``<library>/<crawl>/<kind>/<file>`` layout this way
(:func:`ccrawl.store.library.download_relpath`) and records the rows' sha256 in its manifest.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from pathlib import Path

from ccrawl.errors import CcrawlError, InputError, TemporaryFailure, Unreachable, UsageError
from ccrawl.jsontypes import Record
from ccrawl.net.client import CCClient, HTTPStatusError, TruncatedBody

COLUMNS = ("path", "file", "status", "bytes", "sha256")


def destination(out_dir: Path, path: str, *, flat: bool) -> Path:
    """Where ``path`` (a bucket path or URL) lands under ``out_dir``."""
    rel = path.split("://", 1)[1].split("/", 1)[1] if "://" in path else path
    rel = rel.lstrip("/")
    if not rel or ".." in Path(rel).parts:
        raise InputError(f"{path!r} is not a bucket path (crawl-data/...)")
    return out_dir / (Path(rel).name if flat else rel)


def _hash_existing(path: Path) -> hashlib._Hash:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest


class ResumableBody:
    """The body of ``url`` from byte ``start`` on, read once: a connection that drops part way is
    reopened with a Range request from the bytes already given, up to the client's retry count;
    past that a :class:`TemporaryFailure` whose last words are ``then`` (``{received}`` is filled in).
    ``received`` is where the body has got to, ``losses`` how many connections dropped."""

    def __init__(self, cc: CCClient, url: str, *, start: int = 0, then: str = "run it again") -> None:
        self.cc = cc
        self.url = url
        self.received = start
        self.losses = 0
        self.then = then

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        while True:
            try:
                async with self.cc.stream(self.url, start=self.received) as stream:
                    total = stream.total_size
                    async for chunk in stream.chunks():
                        self.received += len(chunk)
                        yield chunk
                if total is not None and self.received < total:
                    raise TruncatedBody(f"{self.url}: {self.received} of {total} bytes")
                return
            except HTTPStatusError as exc:
                if exc.status == 416 and self.received > 0:
                    return  # every byte had come; only the end of the body was lost
                raise
            except TruncatedBody as exc:
                self.losses += 1
                if self.losses > self.cc.retries:
                    raise TemporaryFailure(f"{self.url}: the connection kept dropping ({exc}); "
                                           + self.then.format(received=self.received)) from exc
                await asyncio.sleep(self.cc.retry_delay(self.losses - 1, None))


async def download_one(cc: CCClient, path: str, dest: Path, *, digest: bool = True) -> Record:
    """Fetch ``path`` into ``dest`` (resuming a ``.part``); returns the row ``download`` prints.

    ``digest=False`` skips the SHA-256 (the row's ``sha256`` is None): for a caller that reads the
    file once and deletes it, whose integrity check is the gzip CRC of every member it inflates.
    """
    if dest.exists():
        return {"path": path, "file": str(dest), "status": "exists", "bytes": dest.stat().st_size, "sha256": None}
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    resumed = part.exists() and part.stat().st_size > 0
    hasher = (_hash_existing(part) if resumed else hashlib.sha256()) if digest else None
    have = part.stat().st_size if resumed else 0
    # cc.stream refuses a 200 to a Range request, so what is appended always continues the .part
    body = ResumableBody(cc, cc.data_url(path), start=have, then="run it again to resume from byte {received}")
    with open(part, "ab" if have else "wb") as fh:
        async with contextlib.aclosing(body.chunks()) as chunks:
            async for chunk in chunks:
                fh.write(chunk)
                if hasher is not None:
                    hasher.update(chunk)
    os.replace(part, dest)
    status = "resumed" if resumed or body.losses else "downloaded"
    return {"path": path, "file": str(dest), "status": status, "bytes": body.received,
            "sha256": hasher.hexdigest() if hasher is not None else None}


async def download_all(
    cc: CCClient,
    paths: Iterable[str],
    *,
    out_dir: Path | str,
    flat: bool = False,
    workers: int = 8,
    place: Callable[[str], Path] | None = None,
) -> AsyncIterator[Record]:
    """Download every path with ``workers`` in flight; rows arrive in completion order.

    A file that fails (404, a 5xx that never clears) gets a row with ``status`` ``failed: ...``
    and the rest carry on; a transport failure (:class:`Unreachable`) ends the run.
    """
    if workers < 1:
        raise UsageError(f"-j {workers}: need at least one worker")
    out = Path(out_dir)
    plan: list[tuple[str, Path]] = []
    seen: dict[Path, str] = {}
    for path in paths:
        dest = place(path) if place is not None else destination(out, path, flat=flat)
        if dest in seen and seen[dest] != path:
            fix = "download them into separate libraries" if place is not None else "drop --flat"
            raise UsageError(f"{path} and {seen[dest]} would both be written to {dest}; {fix}")
        if dest not in seen:
            seen[dest] = path
            plan.append((path, dest))
    queue: asyncio.Queue[Record | BaseException] = asyncio.Queue()
    todo = iter(plan)

    async def worker() -> None:
        for path, dest in todo:
            try:
                row = await download_one(cc, path, dest)
            except Unreachable as exc:
                await queue.put(exc)
                return
            except CcrawlError as exc:
                row = {"path": path, "file": str(dest), "status": f"failed: {exc}", "bytes": 0, "sha256": None}
            await queue.put(row)

    tasks = [asyncio.ensure_future(worker()) for _ in range(min(workers, max(1, len(plan))))]
    try:
        for _ in range(len(plan)):
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
