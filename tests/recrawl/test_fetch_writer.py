"""A fetch-only Parquet run's fetch processes write their own rows (``ccrawl.recrawl.fetchwriter``).

First the writer alone, in this process, with rows made in memory: row groups bounded in bytes,
seals that report exactly the rows of the shard they close, rows put during a seal landing in
the next shard, a failed write reported once and never sealed over, and a file identical to the
writer process's. Then the fetch loop with its writer against the synthetic web, taking Seal and
Exit on its inbox as a writer process does; then whole runs (the files, the schema, the summary).
The SIGKILL test of this path is in ``test_stop_and_kill.py``.
"""

from __future__ import annotations

import asyncio
import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.fetch.config import FetchConfig
from ccrawl.fetch.result import FetchResult, sha1_base32
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.fetchproc import Inbox, capture_row, serve
from ccrawl.recrawl.fetchwriter import FetchWriter, WriterFailed
from ccrawl.recrawl.messages import (
    Crash,
    Drained,
    DurableRows,
    Exit,
    FetchReport,
    Seal,
    StopFeed,
    WantSeal,
    WorkBatch,
    WorkItem,
    WriterReport,
)
from ccrawl.recrawl.params import RunParams
from ccrawl.recrawl.schema import CAPTURE_SCHEMA
from ccrawl.recrawl.sinks import ParquetSink
from ccrawl.testing.synthweb import SynthWeb

PROVENANCE = {"ccrawl.version": "test", "ccrawl.run_id": "r1"}


class Events:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def put(self, ev: Any) -> None:
        pickle.loads(pickle.dumps(ev))  # every event must cross a process boundary as it is
        self.items.append(ev)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.items if isinstance(e, kind)]


def a_row(seq: int, size: int = 10_000) -> tuple[Any, bytes]:
    body = bytes([65 + seq % 26]) * size
    result = FetchResult(url=f"http://h{seq % 3}.test/p/{seq}", host=f"h{seq % 3}.test", status=200,
                         fetched_at=1_700_000_000_000 + seq, content_type="text/html", body=body,
                         digest=sha1_base32(body), resp_headers=[("Content-Type", "text/html")],
                         req_headers=[("Host", f"h{seq % 3}.test")], ttfb_ms=3, fetch_duration_ms=5,
                         ip_address="127.0.0.1")
    return capture_row(result, seq, warc=False), body


def writer(tmp_path: Path, events: Events, *, shard_size: int = 1 << 30, group: int = 64_000) -> FetchWriter:
    return FetchWriter(0, str(tmp_path), "ccrawl-run-f0", PROVENANCE, events, shard_size=shard_size,
                       row_group_bytes=group)


def test_rows_become_bounded_row_groups_and_a_seal_makes_exactly_them_durable(tmp_path: Path) -> None:
    events = Events()

    async def main() -> FetchWriter:
        w = writer(tmp_path, events)
        for seq in range(30):
            await w.put(*a_row(seq))
        await w.seal(1)
        await w.seal(2)  # nothing since the last seal: nothing durable, no empty file
        w.close()
        return w

    w = asyncio.run(main())
    first, second = events.of(DurableRows)
    assert first.durable.seqs == list(range(30)) and first.durable.sealed and first.reason == "seal:1"
    assert first.seal_round == 1 and second.durable is None and second.seal_round == 2
    tmp = Path(first.durable.tmp_path)
    assert tmp.name == "ccrawl-run-f0-00000.parquet.tmp" and first.durable.final_path == str(tmp)[:-4]
    assert list(tmp_path.iterdir()) == [tmp], "one file, still .tmp: only the parent renames"
    meta = pq.ParquetFile(tmp).metadata
    assert meta.num_rows == 30 and meta.num_row_groups >= 4, "groups cut at 64 KB of payload"
    assert all(meta.row_group(i).num_rows <= 6 for i in range(meta.num_row_groups))
    # one group filling, one being written, each under its bound: never more than twice it held
    assert 60_000 <= w.held_peak <= 2 * 64_000
    table = pq.read_table(tmp)
    assert table.schema.equals(CAPTURE_SCHEMA, check_metadata=False)
    assert table.column("url").to_pylist() == [f"http://h{s % 3}.test/p/{s}" for s in range(30)]
    assert table.column("digest").to_pylist()[7] == sha1_base32(b"H" * 10_000)
    assert w.stats().rows == 30 and w.stats().in_fetch


def test_the_file_is_the_writer_processes_file_column_for_column(tmp_path: Path) -> None:
    rows = [a_row(seq, 3000 + seq) for seq in range(25)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    async def main() -> Any:
        w = FetchWriter(0, str(tmp_path / "a"), "x", PROVENANCE, Events(), shard_size=1 << 30,
                        row_group_bytes=1 << 24)
        for row, body in rows:
            await w.put(row, body)
        ev = Events()
        w.events = ev
        await w.seal(1)
        w.close()
        return ev.items[0].durable

    mine = asyncio.run(main())
    sink = ParquetSink(tmp_path / "b", "x", PROVENANCE)
    for row, body in rows:
        sink.add(row, body)
    theirs = sink.seal()
    assert theirs is not None
    a, b = pq.ParquetFile(mine.tmp_path), pq.ParquetFile(theirs.tmp_path)
    assert a.schema_arrow.equals(b.schema_arrow, check_metadata=True), "same columns, types and metadata"
    assert a.schema_arrow.metadata[b"ccrawl.run_id"] == b"r1"
    assert a.read().equals(b.read())
    assert (mine.rows, mine.payload, mine.seqs) == (theirs.rows, theirs.payload, theirs.seqs)


def test_asks_for_a_seal_once_past_the_shard_size_and_rows_put_while_sealing_go_to_the_next(
    tmp_path: Path,
) -> None:
    events = Events()

    async def main() -> None:
        w = writer(tmp_path, events, shard_size=50_000)
        for seq in range(8):
            await w.put(*a_row(seq))
        sealing = asyncio.create_task(w.seal(1))
        await asyncio.sleep(0)  # the seal has taken its rows and waits for the writing thread
        for seq in range(8, 14):
            await w.put(*a_row(seq))
        # an ask while a round is in flight would be dropped by the parent: the first row after it asks
        assert len(events.of(WantSeal)) == 1
        await sealing
        await w.put(*a_row(14))
        await w.seal(2)
        w.close()

    asyncio.run(main())
    assert len(events.of(WantSeal)) == 2, "one ask per shard, not one per row past the size"
    first, second = (e.durable for e in events.of(DurableRows))
    assert first.seqs == list(range(8)) and second.seqs == list(range(8, 15))
    assert Path(first.tmp_path).name.endswith("-00000.parquet.tmp")
    assert Path(second.tmp_path).name.endswith("-00001.parquet.tmp")
    assert pq.ParquetFile(first.tmp_path).metadata.num_rows == 8
    assert pq.ParquetFile(second.tmp_path).metadata.num_rows == 7


def test_a_failed_write_is_one_crash_and_no_shard_is_sealed_over_it(tmp_path: Path) -> None:
    events = Events()
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")  # the output "directory" is a file: opening the shard fails

    async def main() -> list[str]:
        w = FetchWriter(0, str(blocker), "x", PROVENANCE, events, shard_size=1 << 30, row_group_bytes=20_000,
                        disk_failure=lambda exc: None)
        raised = []
        for seq in range(10):
            try:
                await w.put(*a_row(seq))
            except WriterFailed:
                raised.append("put")
        try:
            await w.seal(1)
        except WriterFailed:
            raised.append("seal")
        w.close()
        return raised

    raised = asyncio.run(main())
    assert raised and raised[-1] == "seal"
    crashes = events.of(Crash)
    assert len(crashes) == 1 and "NotADirectoryError" in crashes[0].detail and not crashes[0].disk
    assert not events.of(DurableRows), "no row is ever reported durable past a failed write"


def test_a_disk_error_is_reported_as_one(tmp_path: Path) -> None:
    events = Events()
    blocker = tmp_path / "f"
    blocker.write_text("x")

    async def main() -> None:
        w = FetchWriter(3, str(blocker), "x", PROVENANCE, events, shard_size=1 << 30, row_group_bytes=1 << 20,
                        disk_failure=lambda exc: f"disk says {type(exc).__name__}")
        await w.put(*a_row(0))
        with pytest.raises(WriterFailed):
            await w.seal(1)
        w.close()

    asyncio.run(main())
    (crash,) = events.of(Crash)
    assert crash.disk and crash.detail == "disk says NotADirectoryError" and "fetch process 3" in crash.who


def test_fetch_loop_writes_its_rows_and_seals_and_exits_on_its_inbox(web: SynthWeb, tmp_path: Path) -> None:
    urls = web.page_urls()[:40]
    events = Events()
    config = FetchConfig(delay=0, concurrency=8, resolve=web.resolve, timeout=10)

    async def main() -> None:
        w = writer(tmp_path, events, shard_size=60_000)
        inbox = Inbox()
        inbox.queue.put_nowait(WorkBatch([WorkItem(i, u) for i, u in enumerate(urls)]))
        inbox.queue.put_nowait(StopFeed())
        loop = asyncio.create_task(serve(0, inbox, events, w, config, warc=False))
        round_ = 0
        while not events.of(Drained):  # the parent's part: a seal round for every ask
            await asyncio.sleep(0.01)
            asks = len(events.of(WantSeal))
            if asks > round_:
                round_ += 1
                inbox.queue.put_nowait(Seal(round_))
        inbox.queue.put_nowait(Seal(0, final=True))
        inbox.queue.put_nowait(Exit())
        await asyncio.wait_for(loop, 20)

    asyncio.run(main())
    durable = [e.durable for e in events.of(DurableRows) if e.durable is not None]
    seqs = [s for d in durable for s in d.seqs]
    assert sorted(seqs) == list(range(len(urls))), "every row durable exactly once"
    assert len(durable) >= 2 and events.of(DurableRows)[-1].reason == "seal:final"
    got = [u for d in durable for u in pq.read_table(d.tmp_path).column("url").to_pylist()]
    assert Counter(got) == Counter(urls)
    kinds = [type(e) for e in events.items]
    assert kinds.index(Drained) < len(kinds) - 2 and kinds[-2:] == [FetchReport, WriterReport]
    assert events.items[-1].final and events.items[-2].final


def test_default_fetch_only_run_writes_in_the_fetch_processes(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out = tmp_path / "out"
    s = run_recrawl(str(wl), column="url", out=str(out), state=str(tmp_path / "s.json"), no_extract=True,
                    fetchers=2, delay=0, workers=16, timeout=5, shard_size=200_000, resolve=web.resolve,
                    tick_seconds=0.2)
    names = sorted(p.name for p in out.glob("*.parquet"))
    assert names and all("-f0-" in n or "-f1-" in n for n in names), names
    assert any("-f0-" in n for n in names) and any("-f1-" in n for n in names), "each process its own files"
    assert not list(out.glob("*.tmp"))
    table = read_captures(out)
    assert Counter(table.column("url").to_pylist()) == Counter(urls)
    assert s.fetched == len(urls) and s.writers == 2 and s.files and len(s.files) == len(names)
    assert "write" not in s.stage_cpu_ms, "writing is the fetch processes' CPU"
    assert 0 < s.queue_peak_bytes <= s.queue_bound_bytes
    schema = pq.read_schema(out / names[0])
    assert schema.equals(CAPTURE_SCHEMA, check_metadata=False)
    assert {k.decode() for k in schema.metadata} >= {"ccrawl.version", "ccrawl.run_id", "ccrawl.extractor"}

    # --writers asks for writer processes: the ring path, and the same schema and metadata keys
    out2 = tmp_path / "out2"
    run_recrawl(str(wl), column="url", out=str(out2), no_extract=True, writers=1, delay=0, workers=16,
                timeout=5, resolve=web.resolve)
    (theirs,) = out2.glob("*.parquet")
    assert "-w0-" in theirs.name
    other = pq.read_schema(theirs)
    assert other.equals(schema, check_metadata=False) and set(other.metadata) == set(schema.metadata)


def test_who_writes_is_decided_once_from_the_flags() -> None:
    assert RunParams(source="x", out="o", no_extract=True).fetch_writes
    assert not RunParams(source="x", out="o", no_extract=True, writers=2).fetch_writes
    assert not RunParams(source="x", out="o").fetch_writes, "a rendering run has writer processes"
    assert not RunParams(source="x", out="o", no_extract=True, format="warc").fetch_writes
    assert not RunParams(source="x", no_extract=True).fetch_writes, "no output: nothing to write"
    p = RunParams(source="x", out="o", no_extract=True, fetchers=3, workers=64)
    assert p.writers == 3 and p.validate().fetch_writes, "one writer per fetch process, and validate is idempotent"
    from ccrawl.errors import UsageError

    with pytest.raises(UsageError, match="fetch-only Parquet"):
        RunParams(source="x", out="o", fetch_writes=True)


def test_fetch_writer_processes_from_the_cores_and_their_groups_from_queue_mb() -> None:
    from ccrawl.recrawl.pipeline import GROUP_BYTES, fetch_group_bytes
    from ccrawl.recrawl.sizing import stage_processes

    # fetch + write is one stage: its share of the cores, one writer per fetch process
    assert stage_processes(2, 256, extracting=False, fetch_writes=True) == (2, 0, 2)
    assert stage_processes(1, 256, extracting=False, fetch_writes=True) == (1, 0, 1)
    f16, x16, w16 = stage_processes(16, 1024, extracting=False, fetch_writes=True)
    assert 10 < f16 <= 16 and x16 == 0 and w16 == f16
    assert stage_processes(64, 32, extracting=False, fetch_writes=True)[0] == 2, "one per 16 workers at most"
    mb = 1024 * 1024
    big = RunParams(source="x", out="o", no_extract=True, fetchers=2, workers=64, queue_mb=1024)
    assert fetch_group_bytes(big) == GROUP_BYTES
    mid = RunParams(source="x", out="o", no_extract=True, fetchers=2, workers=64, queue_mb=120)
    assert fetch_group_bytes(mid) == 20 * mb, "three groups a process, every process's within --queue-mb"
    tiny = RunParams(source="x", out="o", no_extract=True, fetchers=2, workers=64, queue_mb=8)
    assert fetch_group_bytes(tiny) >= 14 * mb, "never below one largest row (10 MB body + metadata room)"
