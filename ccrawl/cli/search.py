"""``ccrawl search`` (alias ``cdx``): query the URL index for captures of a URL or pattern.

Parsing and rendering only: the query, the push-down, the paging and the memory budget live in
:mod:`ccrawl.commoncrawl.cdx` behind the ``cc.search`` / ``cc.estimate`` operations.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ccrawl.cli.common import Run, command

F = TypeVar("F", bound=Callable[..., object])

_HELP = (
    "Query the URL index (CDX) for captures of a URL or pattern.\n\n"
    "A trailing /* matches everything under a path, *.example.com a whole domain. --status, --mime, --lang, "
    "--filter, --url-contains and --url-not-contains are sent to the index server and checked again here; "
    "--at, --latest-only and --dedup run here under --max-buffer. --explain prints the request the server "
    "answers, what was pushed, what was applied here and the bytes read."
)


def _options(func: F) -> F:
    decorators = [
        click.argument("url"),
        click.option("--match", type=click.Choice(["exact", "prefix", "host", "domain"]),
                     help="Match type; by default *.x means domain, x/* prefix, anything else exact"),
        click.option("--status", help="HTTP status, e.g. 200 (or !404 to exclude one)"),
        click.option("--mime", help="Media type prefix, e.g. text/html"),
        click.option("--lang", help="ISO 639-3 language code, e.g. eng"),
        click.option("--filter", "filters", multiple=True, help="Raw CDX filter, [!][=|~]field:value (repeatable)"),
        click.option("--url-contains", multiple=True, help="Keep URLs containing this substring (repeatable)"),
        click.option("--url-not-contains", multiple=True, help="Drop URLs containing this substring (repeatable)"),
        click.option("--from", "from_ts", help="Earliest capture date, e.g. 2023 or 2023-06-01"),
        click.option("--to", "to_ts", help="Latest capture date"),
        click.option("--no-push-filters", is_flag=True, help="Keep the URL substring filters here, off the wire"),
        click.option("--at", help="Per URL, the capture closest to this date (e.g. 2023-06)"),
        click.option("--latest-only", is_flag=True, help="Per URL, the newest capture"),
        click.option("--dedup", is_flag=True, help="Drop captures whose payload digest was already seen"),
        click.option("--sort", type=click.Choice(["newest", "oldest"]), help="Order by capture time"),
        click.option("--max-buffer", type=int, default=5_000_000, show_default=True,
                     help="Records --at, --latest-only and --dedup hold in memory before spilling to TMPDIR"),
        click.option("--estimate", is_flag=True, help="Estimate the size of the result instead of listing it"),
        click.option("--locations", is_flag=True, help="Print filename, offset, length (JSONL for fetch -)"),
        click.option("--explain", is_flag=True, help="Print where each filter runs and the bytes read"),
        click.option("--strict", is_flag=True, help="Fail the run if an index page cannot be read"),
        click.option("--retries", type=int, help="Attempts per index page (and per request) [config retries]"),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def _exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so the spill files in TMPDIR are removed on the way out."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def _search(run: Run, url: str, **flags: Any) -> None:
    from ccrawl import ops

    _exit_on_sigterm()
    ctx = run.context()
    retries = flags.pop("retries")
    if retries is not None:
        ctx = ctx.with_client(retries=retries)
    crawl = run.settings.crawl or "latest"
    if flags.pop("estimate"):
        op = ops.get("cc.estimate")
        run.emit(op(url=url, crawl=crawl, match=flags["match"], ctx=ctx),
                 columns=op.columns)
        return
    op = ops.get("cc.search")
    locations = bool(flags["locations"])
    batches = op.batches(
        url=url,
        crawl=crawl,
        match=flags["match"],
        status=flags["status"],
        mime=flags["mime"],
        lang=flags["lang"],
        filters=flags["filters"],
        url_contains=flags["url_contains"],
        url_not_contains=flags["url_not_contains"],
        from_ts=flags["from_ts"],
        to_ts=flags["to_ts"],
        push_filters=not flags["no_push_filters"],
        at=flags["at"],
        latest_only=flags["latest_only"],
        dedup=flags["dedup"],
        sort=flags["sort"],
        max_buffer=flags["max_buffer"],
        strict=flags["strict"],
        explain=flags["explain"],
        locations=locations,
        limit=run.output.limit,
        workers=max(1, min(int(run.settings.workers or 2), 4)),
        ctx=ctx,
    )
    from ccrawl.commoncrawl.cdx import LOCATION_COLUMNS

    run.emit_batches(batches, columns=LOCATION_COLUMNS if locations else op.columns)


@command("search", help=_HELP)
@_options
def search(run: Run, url: str, **flags: object) -> None:
    _search(run, url, **flags)


@command("cdx", help="Alias of search. " + _HELP)
@_options
def cdx(run: Run, url: str, **flags: object) -> None:
    _search(run, url, **flags)
