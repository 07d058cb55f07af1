"""``ccrawl index build|search``: a local BM25 full-text index (parsing and rendering only).

The index is :mod:`ccrawl.store.textindex` (tantivy segments on disk, memory bounded by the
writer's heap); ``--dir`` defaults to ``<data dir>/index``.
"""

from __future__ import annotations

from pathlib import Path

import click

from ccrawl.cli.common import ALLOW_PRIVATE, Run, allow_private, command, op_option
from ccrawl.errors import NothingMatched


@click.group("index", help="Build and query a local BM25 full-text search index.")
def index() -> None:
    pass


def _dir(run: Run, given: str | None) -> str:
    return given or str(Path(run.settings.data_dir) / "index")


@command("build", help="Build the index from documents (--input: JSONL, - for stdin, Parquet from recrawl run or "
         "markdown export, WARC/WET, or a directory of them) or live-fetched --urls.")
@click.option("--dir", "directory", default=None, help="Index directory [<data dir>/index]")
@click.option("--input", "input_", default=None, help="JSONL (url, text, title, language; - for stdin), Parquet "
              "(recrawl run, markdown export), WARC/WET, or a directory of them")
@click.option("--urls", default=None, help="Comma-separated URLs to fetch, extract and index")
@op_option("index.build", "workers", "--workers", "-j", type=click.IntRange(1, 512), show_default=True,
           help="Fetch concurrency for --urls")
@op_option("index.build", "heap_mb", type=click.IntRange(16, 4096), show_default=True,
           help="Writer memory: segments are flushed when it is reached")
@click.option("--resolve", multiple=True, help="For --urls: resolver override HOST=IP or '*.suffix=IP' (repeatable)")
@ALLOW_PRIVATE
def build(run: Run, directory: str | None, input_: str | None, urls: str | None, workers: int, heap_mb: int,
          resolve: tuple[str, ...], allow_private_addresses: bool | None) -> None:
    from ccrawl import ops
    from ccrawl.fetch.config import parse_resolve

    op = ops.get("index.build")
    url_list = [u.strip() for u in (urls or "").split(",") if u.strip()]
    records = op(dir=_dir(run, directory), input=input_, urls=url_list, workers=workers, heap_mb=heap_mb,
                 allow_private_addresses=allow_private(run, allow_private_addresses),
                 timeout=float(run.settings.timeout or 30.0), delay=0.0, resolve=parse_resolve(resolve),
                 ctx=run.context(run.warn))
    run.emit(records, columns=op.columns, single=True)


@command("search", help="Query the index: terms ORed, ranked by BM25 (exit 3 when nothing matches).")
@click.argument("query")
@click.option("--dir", "directory", default=None, help="Index directory [<data dir>/index]")
def search(run: Run, query: str, directory: str | None) -> None:
    from ccrawl import ops

    op = ops.get("index.search")
    limit = run.output.limit or 100
    shown = run.emit(op(query=query, dir=_dir(run, directory), limit=limit), columns=op.columns)
    if shown == 0:
        raise NothingMatched(f"no document in the index matches {query!r}")


index.add_command(build)
index.add_command(search)
