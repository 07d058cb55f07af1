"""A fleet of three machines publishing into one repo of the fake Hub, with a kill and a 429 storm.

Each machine is a crawl (simulated here: it seals capture shards of its slice of the work list the way
``recrawl run`` does, ``.parquet.tmp`` renamed to ``.parquet``, then advances its checkpoint) and a real
``ccrawl recrawl publish --watch`` process. The machines share nothing but the repo. Mid-run one
publisher is killed with SIGKILL and restarted, and the Hub answers half the commits with 429 for a
while. At the end every work-list row must be in exactly one published shard, no ledger row may be
lost, and the card's totals must equal the sum of the ledgers and the rows actually in ``data/``.

Two variants: simulated crawls (fast, deterministic shard contents) and three real ``recrawl run``
processes against a loopback site. The figures of a run are printed (``-s`` shows them) and recorded in
bench/README.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ccrawl.datasets.card import card_totals
from ccrawl.hub.ledger import parse_ledger
from ccrawl.testing.fakehub import FakeHub
from ccrawl.url.domain import shard_of
from tests.datasets.capture_shards import TOKEN, capture_rows, write_shard

SHARDS = 3
WORK_ROWS = 900
ROWS_PER_SHARD = 20
REPO = "fleet/recrawl-domains"


def _crawl(machine: int, cap: Path, state: Path, seal_every: float) -> None:
    """Seal this machine's slice of the work list shard by shard, checkpointing after each seal."""
    mine = [i for i in range(WORK_ROWS) if shard_of(f"d{i}.example", SHARDS) == machine]
    done = 0
    for n, start in enumerate(range(0, len(mine), ROWS_PER_SHARD)):
        chunk = mine[start : start + ROWS_PER_SHARD]
        rows = [r for i in chunk for r in capture_rows(i, 1, host_prefix="d")]
        for r, i in zip(rows, chunk, strict=True):
            r["url"], r["host"] = f"https://d{i}.example/", f"d{i}.example"
        write_shard(cap, f"part-{n:05d}", rows)
        done += len(chunk)
        last = start + ROWS_PER_SHARD >= len(mine)
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"shard": machine, "shards": SHARDS, "part": 0, "row": done, "done": last,
                                   "fetched": done}))
        os.replace(tmp, state)
        time.sleep(seal_every)


def _publisher(hub: FakeHub, machine: int, cap: Path, state: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HUB_DISABLE_XET": "1",
           "CCRAWL_BACKOFF": "0.2", "CCRAWL_BACKOFF_MAX": "1"}
    env.pop("CCRAWL_HUB", None)
    cmd = [sys.executable, "-m", "ccrawl", "recrawl", "publish", "--dir", str(cap), "--repo", REPO,
           "--server", f"server{machine + 1}", "--shard", str(machine), "--shards", str(SHARDS),
           "--state", str(state), "--watch", "0.2", "--commit-every", "2", "--max-stall", "60", "-o", "jsonl"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class Fleet:
    """Three publishers against one fake-Hub repo; the crawls are started by the caller."""

    def __init__(self, tmp_path: Path, hub: FakeHub) -> None:
        self.hub = hub
        self.caps = [tmp_path / f"m{m}" / "captures" for m in range(SHARDS)]
        self.states = [tmp_path / f"m{m}" / "recrawl.json" for m in range(SHARDS)]
        for c in self.caps:
            c.mkdir(parents=True)
        self.local = hub.local_repo(REPO)

    def publish_with_a_kill_and_a_storm(self) -> dict[str, Any]:
        """Run the publishers to the end: one SIGKILLed and restarted, half the commits 429 for 6 s."""
        hub = self.hub
        procs = [_publisher(hub, m, self.caps[m], self.states[m]) for m in range(SHARDS)]
        hub.faults.add(storm={"status": 429, "p": 0.5, "seconds": 6.0})
        # Kill server1's publisher with SIGKILL once it has something on the hub, then restart it.
        ledger = "ledger/server1-shard0of3.csv"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.local.exists_repo() and self.local.exists([ledger])[ledger]:
                break
            time.sleep(0.05)
        procs[0].kill()
        hub.faults.add(storm={"status": 429, "p": 0.5, "seconds": 6.0})  # and again from the first commit on
        killed_out, _ = procs[0].communicate(timeout=30)
        procs[0] = _publisher(hub, 0, self.caps[0], self.states[0])
        outputs, retries = [killed_out], 0
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-2000:]
            outputs.append(out)
            summary = re.search(r"(\d+) retries, (\d+) conflicts", err)
            assert summary is not None, err[-2000:]  # every surviving publisher printed its summary line
            retries += int(summary.group(1))
        return {"retries": retries, "records": sum(len(o.splitlines()) for o in outputs)}

    def check(self, expected_urls: set[str], started: float, extra: dict[str, Any]) -> str:
        """Every row exactly once, no ledger row lost, card = ledgers = data; the figures as one line."""
        faults = self.hub.faults.snapshot()
        snap = self.local.snapshot_dir()
        urls: Counter[str] = Counter()
        data_rows = 0
        data_files = sorted(f"data/{p.name}" for p in (snap / "data").glob("*.parquet"))
        for f in data_files:
            table = pq.read_table(snap / f, columns=["url"])
            data_rows += table.num_rows
            urls.update(table.column("url").to_pylist())
        ledgers = {p.name: parse_ledger(p.read_text()) for p in (snap / "ledger").glob("*.csv")}
        ledger_rows = [r for rows in ledgers.values() for r in rows]
        card = card_totals((snap / "README.md").read_text())
        commits = len(self.local.history()) - 1  # minus the initial commit
        duplicates = sum(n - 1 for n in urls.values() if n > 1)
        assert set(urls) == expected_urls  # every work-list row published...
        assert duplicates == 0  # ...exactly once
        assert sorted(ledgers) == [f"server{m + 1}-shard{m}of3.csv" for m in range(SHARDS)]
        assert sorted(r.file for r in ledger_rows) == data_files  # no ledger row lost, none extra
        assert sum(r.rows for r in ledger_rows) == data_rows == len(expected_urls)
        assert (card["rows"], card["shards"], card["machines"], card["done"]) == (data_rows, len(data_files), 3, 3)
        assert faults["injected"].get("storm:429", 0) > 0  # the storm really hit commits
        assert all(caps_empty(c) for c in self.caps)  # every committed shard was deleted locally
        return (
            f"{len(expected_urls)} work rows, {data_rows} published rows in {len(data_files)} shards, {commits} "
            f"commits, {faults['injected'].get('storm:429', 0)} commits answered 429 ({extra['retries']} retried by "
            f"the survivors), {faults['requests'].get('commit-conflict', 0)} parent-commit conflicts, "
            f"{faults['requests'].get('commit', 0)} commit requests, {duplicates} duplicate rows, "
            f"{extra['records']} publish records, {time.monotonic() - started:.1f}s"
        )


def test_three_machines_publish_every_row_exactly_once_through_a_kill_and_a_429_storm(tmp_path: Path) -> None:
    started = time.monotonic()
    with FakeHub(tmp_path / "hub") as hub:
        fleet = Fleet(tmp_path, hub)
        crawls = [threading.Thread(target=_crawl, args=(m, fleet.caps[m], fleet.states[m], 0.15))
                  for m in range(SHARDS)]
        for t in crawls:
            t.start()
        extra = fleet.publish_with_a_kill_and_a_storm()
        for t in crawls:
            t.join(30)
        line = fleet.check({f"https://d{i}.example/" for i in range(WORK_ROWS)}, started, extra)
    print(f"\nfleet (simulated crawls): {line}")


def caps_empty(cap: Path) -> bool:
    return not any(p.name.endswith(".parquet") for p in cap.iterdir())


def _web_server() -> tuple[str, Any]:
    """A loopback site answering any host with a small HTML page after a short think time."""
    import asyncio

    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        await asyncio.sleep(0.01)
        return web.Response(text=f"<html><title>{request.host}</title><p>{'hello ' * 40}</p></html>",
                            content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def stop() -> None:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)

    return f"127.0.0.1:{port}", stop


def _recrawl_run(machine: int, worklist: Path, cap: Path, state: Path) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(worklist), "--column", "url",
           "--out", str(cap), "--state", str(state), "--shard", str(machine), "--shards", str(SHARDS),
           "--resolve", "*.test=127.0.0.1", "--delay", "0", "--shard-size", "16KB", "--batch", "25",
           "--workers", "2", "--fetchers", "1", "--no-extract", "--prefix", f"server{machine + 1}"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_three_recrawl_runs_and_three_publishers_publish_the_whole_work_list(tmp_path: Path) -> None:
    """The same fleet with the real engine: ``recrawl run --shard i --shards 3`` against a loopback site."""
    import pyarrow as pa

    started = time.monotonic()
    address, stop_web = _web_server()
    port = address.split(":")[1]
    urls = [f"http://d{i}.test:{port}/" for i in range(WORK_ROWS)]
    worklist = tmp_path / "worklist"
    worklist.mkdir()
    for p in range(3):
        chunk = urls[p * WORK_ROWS // 3 : (p + 1) * WORK_ROWS // 3]
        pq.write_table(pa.table({"url": chunk}), worklist / f"part-{p:03d}.parquet")
    try:
        with FakeHub(tmp_path / "hub") as hub:
            fleet = Fleet(tmp_path, hub)
            crawls = [_recrawl_run(m, worklist, fleet.caps[m], fleet.states[m]) for m in range(SHARDS)]
            extra = fleet.publish_with_a_kill_and_a_storm()
            for c in crawls:
                _, err = c.communicate(timeout=60)
                assert c.returncode == 0, err[-2000:]
            line = fleet.check(set(urls), started, extra)
    finally:
        stop_web()
    print(f"\nfleet (recrawl run x3): {line}")
