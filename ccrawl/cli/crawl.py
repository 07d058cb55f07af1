"""``ccrawl crawl seed|fetch|run|status``: the discovery crawl (see docs/crawl.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import click

from ccrawl.cli.common import (
    ALLOW_PRIVATE,
    InputLineError,
    Run,
    allow_private,
    command,
    echo_err,
    op_option,
    op_type,
    read_stdin_values,
)
from ccrawl.cli.rank import graph_option
from ccrawl.errors import UsageError


@click.group("crawl", help="Discovery crawl: seed, fetch, run with a resumable frontier and WARC output, status.")
def crawl() -> None:
    pass


def _resolve(entries: tuple[str, ...]) -> dict[str, str]:
    from ccrawl.fetch.config import parse_resolve

    return parse_resolve(entries)


_RESOLVE = click.option("--resolve", multiple=True, metavar="PATTERN=IP",
                        help="Resolve matching hosts to IP (e.g. '*.test=127.0.0.1'), for servers you run")


@command("seed", help="Seed URLs from the web-graph rank table, one per host, most central first.")
@graph_option
@op_option("crawl.seed", "max_seeds", show_default=True, help="Maximum hosts to emit")
@op_option("crawl.seed", "max_tier", show_default=True,
           help="Skip hosts with a tier above this (2-5; 1 is unreachable from a seed)")
def crawl_seed(run: Run, graph: str | None, max_seeds: int, max_tier: int) -> None:
    from ccrawl import ops

    op = ops.get("crawl.seed")
    run.emit(op(graph=graph, max_seeds=max_seeds, max_tier=max_tier, ctx=run.context()),
             columns=op.columns)


@command("status", help="With --state: what a crawl's frontier holds (queued, seen, hosts, next due, queued per "
         "depth). Without: the daily crawl budget across the five recrawl tiers at a sustained throughput.")
@click.option("--state", default=None,
              help="A crawl run state file: show its frontier (read-only; a running crawl too)")
@click.option("--throughput", type=float, default=None, help="Pages per second sustained, for the budget [10000]")
def crawl_status(run: Run, state: str | None, throughput: float | None) -> None:
    from ccrawl import ops

    if state is not None:
        if throughput is not None:
            raise UsageError("--throughput sizes the tier budget; it does not apply to --state")
        op = ops.get("crawl.frontier")
        run.emit(op(state=state), columns=op.columns, single=True)
        return
    op = ops.get("crawl.status")  # without --throughput, the operation's default
    run.emit(op(**({} if throughput is None else {"throughput": throughput})), columns=op.columns)


@command("fetch", help="Fetch one URL (redirects up to 5 hops, 10 MB cap, SHA-1 digest); --warc-dir archives it.")
@click.argument("url")
@op_option("crawl.fetch", "robots", help="Check robots.txt before fetching")
@op_option("crawl.fetch", "warc_dir", type=click.Path(file_okay=False), help="Write the fetch to a WARC file here")
@_RESOLVE
@ALLOW_PRIVATE
def crawl_fetch(run: Run, url: str, robots: bool, warc_dir: str | None, resolve: tuple[str, ...],
                allow_private_addresses: bool | None) -> None:
    from ccrawl import ops

    op = ops.get("crawl.fetch")
    records = list(op(url=url, robots=robots, warc_dir=warc_dir, timeout=float(run.settings.timeout or 30.0),
                      resolve=_resolve(resolve), allow_private_addresses=allow_private(run, allow_private_addresses)))
    run.emit(records, columns=op.columns, single=True)
    if records and records[0].get("error"):
        from ccrawl.errors import CcrawlError

        raise CcrawlError(f"{url}: {records[0]['error']}")


def _seed_lines(seeds: str, run: Run) -> Iterator[str]:
    import sys

    def values(stream: Iterable[bytes]) -> Iterator[str]:
        for item in read_stdin_values(stream, field="url"):
            if isinstance(item, InputLineError):
                run.warn(f"--seeds: {item}")
                continue
            yield item

    if seeds == "-":
        yield from values(sys.stdin.buffer)
        return
    path = Path(seeds)
    if not path.is_file():
        raise UsageError(f"--seeds {seeds}: no such file")
    with path.open("rb") as fh:
        yield from values(fh)


@command("run", help="Run a crawl from a seed file, with a resumable frontier and WARC output.")
@click.option("--seeds", required=True, help="Seed file: crawl seed JSONL or one URL per line, - for stdin")
@click.option("--out", default=None, help="Directory to write WARC files into (empty: fetch without archiving)")
@op_option("crawl.run", "state", required=True, help="Frontier state file, so a run resumes after a restart")
@click.option("--delay", default="1s", show_default=True, help="Minimum spacing between two requests to one host")
@click.option("--max-depth", type=op_type("crawl.run", "max_depth"), default=None,
              help="Link hops from a seed; a redirect target is one hop deeper [3: a seed, its redirect and links "
                   "two levels on; 0 = the seeds only]")
@op_option("crawl.run", "max_pages", show_default=True,
           help="Stop once this many fetches are done for good: pages in sealed WARC files, failures, robots "
                   "skips (0 = no limit); pages a kill lost are fetched again by the next run")
@click.option("--max-redirects", type=op_type("crawl.run", "max_redirects"), default=None,
              help="Redirects followed per chain; a longer chain is a failed fetch [setting crawl_max_redirects, 5]")
@op_option("crawl.run", "same_host", is_flag=True, help="Stay on the hosts the seeds named")
@op_option("crawl.run", "robots", "--robots/--no-robots", show_default=True, help="Check robots.txt (RFC 9309)")
@click.option("--warc-size", default="1GB", show_default=True, help="Rotate to a new WARC file past this size")
@op_option("crawl.run", "prefix", show_default=True, help="File name prefix for the WARC output")
@click.option("--shard", default="0", show_default=True,
              help="Which partition of the seeds and links, 0-based, or auto (from Slurm, Kubernetes or RANK)")
@click.option("--shards", type=int, default=None, help="How many machines split the crawl [1, or the engine's]")
@op_option("crawl.run", "workers", "--workers", "-j", show_default=True,
           help="Fetches in flight (hosts in flight: one request per host at a time)")
@op_option("crawl.run", "fetchers",
           help="Fetch processes, each owning a partition of the registered domains "
                   "[the state file's count, else one per core up to one per 16 workers]")
@op_option("crawl.run", "host_budget", show_default=True,
           help="Trap budget: URLs a host may have queued per registered domain linking to it, plus one "
                   "(0 = no budgets); links past it are not queued, and the run says how many")
@op_option("crawl.run", "domain_budget", show_default=True,
           help="The same for all the hosts of a registered domain together")
@_RESOLVE
@ALLOW_PRIVATE
def crawl_run(run: Run, seeds: str, out: str | None, state: str, delay: str, max_depth: int | None, max_pages: int,
              max_redirects: int | None, same_host: bool, robots: bool, warc_size: str, prefix: str, shard: str,
              shards: int | None, workers: int, fetchers: int | None, host_budget: int, domain_budget: int,
              resolve: tuple[str, ...], allow_private_addresses: bool | None) -> None:
    from ccrawl import ops
    from ccrawl.cli.commoncrawl import parse_size
    from ccrawl.net.client import seconds
    from ccrawl.scale.engine import resolve_shard

    assignment = resolve_shard(shard, shards)
    if assignment.source != "flag" or assignment.count > 1:
        echo_err(f"crawl run: {assignment.describe()}")
    op = ops.get("crawl.run")
    records = op(seeds=_seed_lines(seeds, run), state=state, out=out or None, delay=seconds(delay, name="--delay"),
                 max_depth=max_depth, max_pages=max_pages, same_host=same_host, robots=robots,
                 max_redirects=run.settings.crawl_max_redirects if max_redirects is None else max_redirects,
                 warc_size=parse_size(warc_size, "--warc-size"), prefix=prefix, shard=assignment.index,
                 shards=assignment.count, workers=workers, fetchers=fetchers,
                 timeout=float(run.settings.timeout or 30.0),
                 resolve=_resolve(resolve), allow_private_addresses=allow_private(run, allow_private_addresses),
                 host_budget=host_budget, domain_budget=domain_budget, ctx=run.context())
    run.emit(records, columns=op.columns, single=True)


for _cmd in (crawl_seed, crawl_fetch, crawl_run, crawl_status):
    crawl.add_command(_cmd)
