"""The on-disk cache of small Common Crawl documents: collinfo.json and path manifests.

One file per URL under ``<cache_dir>/http/``, named by the SHA-256 of the URL, written to a
temporary name and renamed so a reader never sees half a file. The file's mtime is when it was
fetched, which is all the freshness logic needs: callers decide how old is too old, and may take
a copy at any age when the network is down (see :mod:`ccrawl.commoncrawl.crawls`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CachedBody:
    """A body read from the cache, and how many seconds ago it was fetched."""

    body: bytes
    age: float


class DiskCache:
    """URL -> bytes on disk; ``enabled=False`` makes every lookup miss and every store a no-op."""

    def __init__(self, directory: Path | str | None, *, enabled: bool = True) -> None:
        self.directory = Path(directory) / "http" if directory is not None else None
        self.enabled = enabled and directory is not None

    def path_for(self, url: str) -> Path:
        assert self.directory is not None
        return self.directory / hashlib.sha256(url.encode("utf-8")).hexdigest()

    def get(self, url: str, *, max_age: float | None = None) -> CachedBody | None:
        """The cached body of ``url`` when present and no older than ``max_age`` (None: any age)."""
        if not self.enabled:
            return None
        path = self.path_for(url)
        try:
            age = max(0.0, time.time() - path.stat().st_mtime)
            if max_age is not None and age > max_age:
                return None
            return CachedBody(path.read_bytes(), age)
        except OSError:
            return None

    def put(self, url: str, body: bytes) -> None:
        """Store ``body`` for ``url``; a cache that cannot be written is skipped, never fatal."""
        if not self.enabled:
            return
        path = self.path_for(url)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
            os.replace(tmp, path)
        except OSError:
            return

    def touch_age(self, url: str, age: float) -> None:
        """Make the cached copy of ``url`` look ``age`` seconds old (tests and ``cache`` tooling)."""
        path = self.path_for(url)
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
