"""Trap budgets: a host that generates unbounded URLs gets ``host_budget * (1 + in-degree)`` of them,
where the in-degree counts the registered domains linking to it; a registered domain spread over
endless subdomains is held by the domain budget. A real crawl against a trap site on loopback."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from ccrawl.crawl.parts import crawl_run
from ccrawl.crawl.run import CrawlOptions


class TrapSite:
    """Every ``.test`` name on one port: ``trap.test`` and ``popular.test`` are calendars (each page links
    to the next days and a session variant), ``subN.spread.test`` links to the next subdomain, and
    ``a/b/c.test`` are ordinary sites linking to each other and to ``popular.test``."""

    def __init__(self) -> None:
        self.port = 0
        self.hits: dict[str, int] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    async def _page(self, request: web.Request) -> web.Response:
        host = request.host.split(":")[0]
        self.hits[host] = self.hits.get(host, 0) + 1
        path = request.path
        if host in ("trap.test", "popular.test"):
            day = int(path.rsplit("/", 1)[1]) if path.startswith("/cal/") else 0
            links = [f"/cal/{day + 1}", f"/cal/{day + 2}", f"/cal/{day + 1}?session={day * 7 + 1}"]
        elif host.endswith(".spread.test"):
            n = int(host.split(".")[0][3:])
            links = [self.url(f"sub{n + 1}.spread.test"), self.url(f"sub{n + 2}.spread.test", "/x")]
        else:
            links = [self.url(h) for h in ("a.test", "b.test", "c.test") if h != host]
            links += [self.url("popular.test", "/cal/0")]
        body = "".join(f'<a href="{href}">x</a>' for href in links)
        return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")

    def __enter__(self) -> TrapSite:
        self._thread.start()

        async def start() -> int:
            app = web.Application()
            app.router.add_route("GET", "/{tail:.*}", self._page)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

        self.port = asyncio.run_coroutine_threadsafe(start(), self._loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)


@pytest.fixture(scope="module")
def trap() -> Iterator[TrapSite]:
    with TrapSite() as site:
        yield site


def _admitted(state: Path, table: str, key: str) -> dict[str, tuple[int, int]]:
    db = sqlite3.connect(state)
    try:
        rows = db.execute(f"SELECT {key}, admitted, indeg FROM {table}")
        return {str(k).split(":")[0]: (int(a), int(d)) for k, a, d in rows}  # hosts carry the port
    finally:
        db.close()


def test_a_calendar_trap_gets_its_budget_and_the_crawl_ends(trap: TrapSite, tmp_path: Path) -> None:
    seeds = [trap.url("trap.test", "/cal/0"), trap.url("a.test"), trap.url("b.test"), trap.url("c.test"),
             trap.url("sub0.spread.test")]
    opts = CrawlOptions(state=tmp_path / "state.db", out=None, delay=0.0, max_depth=10_000, workers=8,
                        resolve={"*.test": "127.0.0.1"}, robots=False, host_budget=10, domain_budget=15)
    summary = crawl_run(opts, seeds)
    assert summary.finished  # the traps cannot keep the crawl going
    hosts = _admitted(tmp_path / "state.db", "hosts", "host")
    domains = _admitted(tmp_path / "state.db", "domains", "domain")
    # trap.test: only the seed's vote, 10 * (1 + 1) URLs; popular.test: three linking domains, 10 * (1 + 3)
    assert hosts["trap.test"] == (20, 1)
    assert hosts["popular.test"] == (40, 3)
    # spread.test: every subdomain is a new host, the registered domain's budget holds: 15 * (1 + 1)
    assert domains["spread.test"] == (30, 1)
    assert trap.hits["trap.test"] == 20 and trap.hits["popular.test"] == 40
    assert sum(n for h, n in trap.hits.items() if h.endswith(".spread.test")) == 30


def test_links_routed_between_fetch_processes_carry_their_vote(trap: TrapSite, tmp_path: Path) -> None:
    """With --fetchers 2, b.test's partition is not popular.test's (place() below): b.test's link to it goes
    through the outbox with b.test as its source, so popular.test's in-degree counts three linking domains,
    as with one process. (How many of its URLs that buys depends on when the vote lands: a URL refused
    while it had two votes is not asked again unless a later page links to it.)"""
    from ccrawl.crawl.frontier import place

    assert place("b.test", 1, 2)[1] != place("popular.test", 1, 2)[1]  # the vote has to travel
    seeds = [trap.url("trap.test", "/cal/0"), trap.url("a.test"), trap.url("b.test"), trap.url("c.test"),
             trap.url("sub0.spread.test")]
    opts = CrawlOptions(state=tmp_path / "state.db", out=None, delay=0.0, max_depth=10_000, workers=8, fetchers=2,
                        resolve={"*.test": "127.0.0.1"}, robots=False, host_budget=10, domain_budget=15)
    summary = crawl_run(opts, seeds)
    assert summary.finished
    hosts = {**_admitted(tmp_path / "state.db", "hosts", "host"),
             **_admitted(tmp_path / "state.db.part1", "hosts", "host")}
    domains = {**_admitted(tmp_path / "state.db", "domains", "domain"),
               **_admitted(tmp_path / "state.db.part1", "domains", "domain")}
    assert hosts["popular.test"][1] == 3 and domains["popular.test"][1] == 3  # a.test, c.test, b.test's routed
    assert hosts["a.test"][1] == 3  # the seed, c.test here and b.test from the other process
    assert 30 <= hosts["popular.test"][0] <= 40
    assert hosts["trap.test"] == (20, 1) and domains["spread.test"] == (30, 1)


def test_budgets_off_lets_the_trap_run_to_the_page_limit(trap: TrapSite, tmp_path: Path) -> None:
    opts = CrawlOptions(state=tmp_path / "state.db", out=None, delay=0.0, max_depth=10_000, workers=8,
                        resolve={"*.test": "127.0.0.1"}, robots=False, host_budget=0, max_pages=150)
    summary = crawl_run(opts, [trap.url("trap.test", "/cal/0")])
    assert not summary.finished and summary.fetched == 150


def _cli_run(trap: TrapSite, tmp_path: Path, *flags: str) -> tuple[dict[str, object], str]:
    import json
    import os
    import subprocess
    import sys

    seeds = tmp_path / "seeds.txt"
    seeds.write_text(trap.url("popular.test", "/cal/0") + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "ccrawl", "-o", "jsonl", "crawl", "run", "--seeds", str(seeds),
         "--state", str(tmp_path / "state.db"), "--delay", "0", "--max-depth", "10000", "--no-robots",
         "--max-pages", "200", "--resolve", "*.test=127.0.0.1", *flags],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_the_budget_flags_reach_the_crawl_and_the_run_says_what_they_cut(trap: TrapSite, tmp_path: Path) -> None:
    record, err = _cli_run(trap, tmp_path, "--host-budget", "7")
    # one vote (the seed's): 7 * (1 + 1) URLs queued, the calendar's other links counted as cut
    assert record["admitted"] == 14 and record["fetched"] == 14 and record["finished"] is True
    cut = [line for line in err.splitlines() if "not queued" in line]
    assert len(cut) == 1 and "trap budget (7 / 20000" in cut[0] and "--host-budget" in cut[0]
    assert int(cut[0].split("crawl run: ")[1].split()[0]) > 0


def test_host_budget_zero_turns_the_budgets_off_from_the_command_line(trap: TrapSite, tmp_path: Path) -> None:
    record, err = _cli_run(trap, tmp_path, "--host-budget", "0")
    assert record["fetched"] == 200 and record["finished"] is False  # the page limit, not a budget, ended it
    assert "not queued" not in err


def test_a_negative_budget_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "ccrawl", "crawl", "run", "--seeds", "-", "--state",
                           str(tmp_path / "s.db"), "--domain-budget", "-1"], capture_output=True, text=True,
                          input="", timeout=60)
    assert proc.returncode == 2 and "--domain-budget" in proc.stderr and "Traceback" not in proc.stderr
