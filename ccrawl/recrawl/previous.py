"""Validators from an earlier pass (``--previous``), for a conditional refetch.

For every URL an earlier capture directory holds with an ``etag`` or a ``last_modified``, the
new request carries ``If-None-Match`` / ``If-Modified-Since``; a 304 becomes a row with
``unchanged`` true and no body. To read the body such a row refers to, join back on ``url`` to
the earlier pass and take its row with a body (see docs/recrawl.md). The earlier pass is read
column-wise (url, etag, last_modified, error only), newest file last so its validators win.
"""

from __future__ import annotations

from pathlib import Path

from ccrawl.errors import InputError, UsageError


def load_validators(directory: str) -> dict[str, tuple[str, str]]:
    """url -> (etag, last_modified) from every ``.parquet`` capture file under ``directory``."""
    import pyarrow.parquet as pq

    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"--previous {directory} is not a directory of capture files")
    files = sorted(root.rglob("*.parquet"), key=lambda p: p.stat().st_mtime)
    if not files:
        raise InputError(f"--previous {directory} holds no .parquet capture files")
    out: dict[str, tuple[str, str]] = {}
    for f in files:
        try:
            table = pq.read_table(f, columns=["url", "etag", "last_modified", "error"])
        except Exception as exc:
            raise InputError(f"--previous: {f} cannot be read as a capture file: {exc}") from exc
        for url, etag, lm, err in zip(*(table.column(i).to_pylist() for i in range(4)), strict=True):
            if not err and (etag or lm):
                out[url] = (etag or "", lm or "")
    return out
