"""Capture shards written the way the crawl seals them, and checkpoints the way it writes them."""

from __future__ import annotations

import json
import os
from pathlib import Path

TOKEN = "hf_test_token"  # the same token as conftest.py, which test modules cannot import


def capture_rows(start: int, count: int, *, fail_every: int = 5, host_prefix: str = "site") -> list[dict]:
    """Rows in the capture schema: every ``fail_every``-th a dns failure, every 7th a 304."""
    from ccrawl.recrawl.schema import capture_row

    rows = []
    for i in range(start, start + count):
        url = f"https://{host_prefix}{i}.example/"
        if fail_every and i % fail_every == 0:
            rows.append(capture_row({"url": url, "host": f"{host_prefix}{i}.example", "error": "dns",
                                     "fetched_at": 1_700_000_000_000 + i,
                                     "meta_json": json.dumps({"error_detail": "no such host"})}))
        elif i % 7 == 0:
            rows.append(capture_row({"url": url, "host": f"{host_prefix}{i}.example", "status": 304,
                                     "unchanged": True, "fetched_at": 1_700_000_000_000 + i}))
        else:
            body = f"<html><title>page {i}</title><p>hello {i}</p></html>".encode()
            rows.append(capture_row(
                {"url": url, "host": f"{host_prefix}{i}.example", "status": 200, "fetched_at": 1_700_000_000_000 + i,
                 "content_type": "text/html", "body": body, "body_length": len(body)},
                {"title": f"page {i}", "markdown": f"hello {i}", "text": f"hello {i}", "word_count": 2,
                 "extractor": "h2m@test"},
            ))
    return rows


def write_shard(directory: Path, name: str, rows: list[dict]) -> Path:
    """Seal a shard the way the crawl does: write ``name.parquet.tmp``, then rename it."""
    import pyarrow.parquet as pq

    from ccrawl.recrawl.schema import rows_to_table

    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"{name}.parquet"
    tmp = directory / f"{name}.parquet.tmp"
    pq.write_table(rows_to_table(rows), tmp, compression="zstd")
    os.replace(tmp, final)
    return final


def write_state(path: Path, *, shard: int = 0, shards: int = 1, part: int = 0, row: int = 0, done: bool = False,
                fetched: int = 0) -> Path:
    """A checkpoint with the fields the recrawl engine writes (see ccrawl.recrawl.checkpoint)."""
    path.write_text(json.dumps({"version": 1, "worklist": {}, "shard": shard, "shards": shards, "part": part,
                                "row": row, "done": done, "fetched": fetched}))
    return path
