"""Operations of the discovery crawl: seed, fetch one URL, run the frontier, and the daily budget.

``crawl.run`` and ``crawl.fetch`` write (WARC files, a state file) and are marked so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

from ccrawl.errors import UsageError
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, Network, ReadPath, Value, WritePath
from ccrawl.ops.context import OpContext, context

Record = dict[str, Any]
Notice = Callable[[str], None]

SEED_COLUMNS = ("url", "host", "harmonic_pos", "tier")
STATUS_COLUMNS = ("tier", "interval", "criteria", "hosts", "host_visits_per_day", "pages_per_day", "share",
                  "pages_per_host_visit")
FETCH_COLUMNS = ("url", "final_url", "status", "content_type", "content_length", "digest", "ip_address",
                 "fetched_at", "duration_ms", "truncated", "decoded", "redirects", "robots", "error", "warc_file")
RUN_COLUMNS = ("fetched", "archived", "failed", "robots_skipped", "admitted", "duplicates", "pages_per_second",
               "seconds", "warc_files", "recovered_done", "requeued", "aborted_files", "total_fetched", "queued",
               "seen", "finished", "fetchers", "max_depth")


@operation("crawl.seed", summary="Seed URLs from the web graph's host rank table, one per host", columns=SEED_COLUMNS)
def crawl_seed(
    graph: Value[str | None] = None,
    max_seeds: Annotated[int, Cap.VALUE, Bounds(0, 10**9)] = 10_000_000,
    max_tier: Annotated[int, Cap.VALUE, Bounds(0, 100)] = 5,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Hosts in harmonic order as ``https://host/``, stopping at ``max_seeds`` or past ``max_tier``."""
    from ccrawl.commoncrawl.webgraph import reverse_host
    from ccrawl.crawl.tiers import seed_tier
    from ccrawl.ops.webgraph import host_rank_rows

    if max_tier == 1:
        raise UsageError(
            "--max-tier 1: tier 1 needs a measured change rate above 0.8 and a seed has none, so no seed "
            "can be tier 1; use --max-tier 2 for the top million hosts")
    if not 2 <= max_tier <= 5:
        raise UsageError(f"--max-tier {max_tier}: give 2 to 5 (5 = every host)")
    if max_seeds < 0:
        raise UsageError("--max-seeds must be >= 0")
    for count, row in enumerate(host_rank_rows(graph=graph, ctx=ctx)):
        if max_seeds and count >= max_seeds:
            return
        tier = seed_tier(row.harmonic_pos)
        if tier > max_tier:
            return  # the table is in harmonic order: every later host is in this tier or a higher one
        host = reverse_host(row.name_rev)
        yield {"url": f"https://{host}/", "host": host, "harmonic_pos": row.harmonic_pos, "tier": tier}


@operation("crawl.status", summary="Daily page budget across the five recrawl tiers", columns=STATUS_COLUMNS)
def crawl_status(throughput: Annotated[float, Cap.VALUE, Bounds(0, 1e12)] = 10_000.0) -> Iterator[Record]:
    from ccrawl.crawl.tiers import daily_budget

    yield from daily_budget(throughput)


FRONTIER_COLUMNS = ("state", "parts", "seen", "queued", "unsealed", "hosts", "hosts_pending", "outbox", "fetched",
                    "seeds_loaded", "shard", "next_due", "next_due_in_s", "queued_by_depth")


@operation("crawl.frontier", summary="What a crawl state file's frontier holds: queued, seen, hosts, next due",
           columns=FRONTIER_COLUMNS)
def crawl_frontier(state: ReadPath[str]) -> Iterator[Record]:
    """One record for the state file ``state`` (every partition of it), read-only, beside a running crawl too."""
    from ccrawl.crawl.state import frontier_status

    yield frontier_status(state)


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)) if ms else ""


@operation("crawl.fetch", summary="Fetch one URL (robots.txt optional) and archive it to WARC",
           columns=FETCH_COLUMNS, writes=True)
def crawl_fetch(
    url: Value[str],
    robots: Value[bool] = False,
    warc_dir: WritePath[str | None] = None,
    timeout: Limit[float] = 30.0,
    max_body: Limit[int] = 10 * 1024 * 1024,
    resolve: Network[Mapping[str, str] | None] = None,
    user_agent: Network[str] = "",
    allow_private_addresses: Network[bool] = False,
) -> Iterator[Record]:
    from ccrawl.crawl.warc import WarcFiles, stored_body
    from ccrawl.fetch import FetchConfig, Fetcher, run
    from ccrawl.fetch.config import DEFAULT_USER_AGENT
    from ccrawl.fetch.result import sha1_base32

    config = FetchConfig(delay=0.0, robots=robots, max_redirects=5, timeout=timeout, max_body=max_body,
                         resolve=dict(resolve or {}), user_agent=user_agent or DEFAULT_USER_AGENT,
                         allow_private_addresses=allow_private_addresses)

    async def one() -> Any:
        async with Fetcher(config) as fetcher:
            return await fetcher.fetch(url)

    result = run(one())
    record: Record = dict.fromkeys(FETCH_COLUMNS)
    record.update(url=url, final_url=result.final_url or None, fetched_at=_iso(result.fetched_at) or None,
                  duration_ms=result.fetch_duration_ms, robots=("checked" if robots else "not checked"),
                  redirects=list(result.redirects) or None)
    if not result.ok:
        record.update(error=result.error, status=None)
        detail = result.error_detail
        record["error"] = f"{result.error}: {detail}" if detail else result.error
        yield record
        return
    stored = stored_body(result, max_body)
    record.update(status=result.status, content_type=result.content_type or None,
                  content_length=len(stored.body), digest="sha1:" + sha1_base32(stored.body),
                  ip_address=result.ip_address or None, truncated=stored.truncated, decoded=stored.decoded)
    if warc_dir:
        writer = WarcFiles(Path(warc_dir), prefix="ccrawl-fetch", max_body=max_body)
        writer.write(result)
        record["warc_file"] = str(writer.directory / writer.seal())
    yield record


@operation("crawl.run", summary="Run or resume a discovery crawl from seeds, with WARC output",
           columns=RUN_COLUMNS, writes=True)
def crawl_run(
    seeds: Value[Iterable[str]],
    state: WritePath[str],
    out: WritePath[str | None] = None,
    delay: Limit[float] = 1.0,
    max_depth: Annotated[int | None, Cap.VALUE, Bounds(0, 10**4)] = None,
    max_pages: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    max_redirects: Annotated[int, Cap.VALUE, Bounds(0, 100)] = 5,
    same_host: Value[bool] = False,
    robots: Value[bool] = True,
    warc_size: Limit[int] = 1_000_000_000,
    prefix: Value[str] = "ccrawl",
    shard: Annotated[int, Cap.VALUE, Bounds(0, 10**6 - 1)] = 0,
    shards: Annotated[int, Cap.VALUE, Bounds(1, 10**6)] = 1,
    workers: Limit[int] = 64,
    timeout: Limit[float] = 30.0,
    resolve: Network[Mapping[str, str] | None] = None,
    user_agent: Network[str] = "",
    fetchers: Limit[int | None] = None,
    allow_private_addresses: Network[bool] = False,
    host_budget: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 5000,
    domain_budget: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 20000,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """``max_depth`` None is :data:`ccrawl.crawl.run.DEFAULT_MAX_DEPTH`, and the run says so; the context's
    ``progress`` is how the run shows its progress, its ``notice`` where its lines go."""
    from ccrawl.crawl.parts import crawl_run as run_crawl
    from ccrawl.crawl.run import BLOCKED_ADDRESS, DEFAULT_MAX_DEPTH, TOO_MANY_REDIRECTS, CrawlOptions
    from ccrawl.fetch.addresses import HOW_TO_ALLOW
    from ccrawl.fetch.config import DEFAULT_USER_AGENT

    depth_note = "--max-depth" if max_depth is not None else "default; --max-depth N to change, 0 = seeds only"
    max_depth = DEFAULT_MAX_DEPTH if max_depth is None else max_depth
    options = CrawlOptions(
        state=Path(state), out=Path(out) if out else None, delay=delay, max_depth=max_depth, max_pages=max_pages,
        same_host=same_host, robots=robots, warc_size=warc_size, prefix=prefix, shard=shard, shards=shards,
        workers=workers, timeout=timeout, resolve=dict(resolve or {}), user_agent=user_agent or DEFAULT_USER_AGENT,
        fetchers=fetchers, max_redirects=max_redirects, allow_private_addresses=allow_private_addresses,
        progress=context(ctx).progress, host_budget=host_budget, domain_budget=domain_budget,
    )
    say = context(ctx).notice
    scope = "the seeds' hosts" if same_host else "any host"
    say(f"crawl run: depth limit {max_depth} ({depth_note}), links followed to {scope}")
    summary = run_crawl(options, seeds, say)
    if summary.aborted_files:
        say(f"crawl run: {len(summary.aborted_files)} unsealed WARC file(s) from a killed run renamed *.aborted; "
            f"their {summary.requeued} URL(s) were queued again")
    if not robots:
        say("crawl run: robots.txt was NOT checked (--no-robots)")
    blocked = summary.errors.get(BLOCKED_ADDRESS, 0)
    if blocked:
        say(f"crawl run: {blocked} URL(s) not fetched, the first: {summary.refused}" if summary.refused else
            f"crawl run: {blocked} URL(s) refused: loopback, private or link-local addresses; {HOW_TO_ALLOW}")
    cut = summary.errors.get(TOO_MANY_REDIRECTS, 0)
    if cut:
        say(f"crawl run: {cut} redirect chain(s) longer than --max-redirects {max_redirects} were not followed "
            f"(failed fetches, errors.{TOO_MANY_REDIRECTS})")
    if summary.over_budget:
        say(f"crawl run: {summary.over_budget} link(s) not queued: their host or registered domain had used its "
            f"trap budget ({host_budget} / {domain_budget} URLs per linking domain; --host-budget and "
            f"--domain-budget raise them, 0 turns them off)")
    yield {**summary.as_record(), "max_depth": max_depth}
