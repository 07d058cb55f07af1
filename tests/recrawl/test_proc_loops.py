"""Each pipeline process's loop alone, in this process, with in-memory queues and real rings.

The writer loop and the extract loop run in a thread of the test with a shared-memory ring fed
by the test, a real control pipe and a list for the parent's events; what they write (a real
Parquet or WARC file) and what they report (typed events) is checked. The fetch loop alone is in
``test_hostsched.py``. Message types round-trip through pickle as they do across processes.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.recrawl.extractproc import _TitleTextEngine, extract_loop
from ccrawl.recrawl.messages import (
    CaptureRow,
    Credit,
    Drained,
    DurableRows,
    Exit,
    ExtractReport,
    Seal,
    StopFeed,
    WorkBatch,
    WorkItem,
    WriterReport,
)
from ccrawl.recrawl.ring import Ring
from ccrawl.recrawl.schema import COLUMN_NAMES
from ccrawl.recrawl.writerproc import WriterConfig, write_loop

MB = 1024 * 1024
CTX = mp.get_context("spawn")


class Events:
    """The parent's events queue in memory: ``put`` from the loop's thread, ``wait_for`` from the test."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._cv = threading.Condition()

    def put(self, ev: Any) -> None:
        pickle.loads(pickle.dumps(ev))  # every event must cross a process boundary as it is
        with self._cv:
            self.items.append(ev)
            self._cv.notify_all()

    def wait_for(self, kind: type, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for ev in self.items:
                    if isinstance(ev, kind):
                        return ev
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {kind.__name__} event in {self.items}")
                self._cv.wait(left)


def row(seq: int, url: str, *, status: int = 200, ctype: str = "text/html", error: str = "") -> CaptureRow:
    from ccrawl.recrawl.messages import RowHeader

    cols = {"url": url, "host": "a.test", "status": status, "fetched_at": 1_700_000_000_000 + seq,
            "content_type": ctype, "body_length": 0, "digest": "", "unchanged": False, "etag": "",
            "last_modified": "", "error": error, "meta_json": "{}", "ttfb_ms": 1, "fetch_duration_ms": 2,
            "final_url": "", "ip_address": "127.0.0.1", "resp_headers": "{}", "req_headers": "{}"}
    return CaptureRow(RowHeader(seq), cols)


def test_messages_are_slotted_and_survive_pickle() -> None:
    for msg in (WorkBatch([WorkItem(1, "http://a.test/")]), StopFeed(), Seal(3), Exit(), Credit(0, 300),
                DurableRows(1, None, "sync"), Drained(2)):
        assert not hasattr(msg, "__dict__"), type(msg).__name__
        assert pickle.loads(pickle.dumps(msg)) == msg
    r = row(7, "http://a.test/x")
    back = CaptureRow.unpack(r.pack())
    assert back == r and not any(k.startswith("_") for k in back.columns)
    with pytest.raises(TypeError):
        CaptureRow.unpack(pickle.dumps(({"_seq": 1}, b"")))


def test_writer_loop_alone_writes_parquet_and_reports_durable_rows_at_the_seal(tmp_path: Path) -> None:
    ring = Ring(CTX, 4 * MB)
    rx, tx = CTX.Pipe(duplex=False)
    events = Events()
    cfg = WriterConfig("parquet", str(tmp_path), "t-w0", {"ccrawl.run_id": "test"}, shard_size=1 << 40, sync_rows=2)
    thread = threading.Thread(target=write_loop, args=(0, ring, rx, events, 1, cfg), daemon=True)
    thread.start()
    bodies = [b"<html>one</html>", b"<html>two</html>", b""]
    for i, body in enumerate(bodies):
        r = row(i, f"http://a.test/{i}", error="" if body else "timeout", status=200 if body else 0)
        r.columns["body_length"] = len(body)
        ring.put(r.pack(), body)
    ring.put_eof()
    events.wait_for(Drained)
    assert not [e for e in events.items if isinstance(e, DurableRows)], "Parquet rows are durable only at a seal"
    tx.send(Seal(0, final=True))
    tx.send(Exit())
    thread.join(20)
    durable = events.wait_for(DurableRows)
    assert durable.reason == "seal:final" and sorted(durable.durable.seqs) == [0, 1, 2] and durable.durable.sealed
    final = events.wait_for(WriterReport)
    assert final.final and final.stats.rows == 3
    table = pq.read_table(durable.durable.tmp_path)
    assert table.column_names == list(COLUMN_NAMES)
    assert table.column("body").to_pylist() == bodies
    assert table.column("error").to_pylist() == ["", "", "timeout"]
    assert pq.read_metadata(durable.durable.tmp_path).metadata[b"ccrawl.run_id"] == b"test"
    ring.close()


def test_writer_loop_alone_syncs_warc_rows_in_batches(tmp_path: Path) -> None:
    ring = Ring(CTX, 4 * MB)
    rx, tx = CTX.Pipe(duplex=False)
    events = Events()
    cfg = WriterConfig("warc", str(tmp_path), "t-w0", {"software": "t"}, shard_size=1 << 40, sync_rows=2)
    thread = threading.Thread(target=write_loop, args=(0, ring, rx, events, 1, cfg), daemon=True)
    thread.start()
    for i in range(4):
        r = row(i, f"http://a.test/{i}")
        r.header.target_url = r.columns["url"]
        r.header.request_head = b"GET /%d HTTP/1.1\r\nHost: a.test\r\n\r\n" % i
        r.header.response_head = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"
        ring.put(r.pack(), b"body")
    ring.put_eof()
    events.wait_for(Drained)
    synced = sorted(s for e in events.items if isinstance(e, DurableRows) and e.durable for s in e.durable.seqs)
    assert synced == [0, 1, 2, 3], "every WARC row is durable at a sync before the writer drains"
    tx.send(Seal(0, final=True))
    tx.send(Exit())
    thread.join(20)
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    sealed = [e.durable for e in events.items if isinstance(e, DurableRows) and e.durable and e.durable.sealed]
    with open(sealed[0].tmp_path, "rb") as fh:
        records = list(ArchiveIterator(fh, record_types=WarcRecordType.response))
    assert len(records) == 4
    ring.close()


def test_extract_loop_alone_renders_html_and_passes_the_rest_through() -> None:
    ring_in, ring_out = Ring(CTX, 4 * MB), Ring(CTX, 4 * MB)
    events = Events()
    html = row(1, "http://a.test/page")
    pdf = row(2, "http://a.test/doc.pdf", ctype="application/pdf")
    failed = row(3, "http://a.test/gone", error="dns", status=0)
    ring_in.put(html.pack(), b"<html><title>Hello</title><body><p>one two three</p></body></html>")
    ring_in.put(pdf.pack(), b"%PDF-1.4")
    ring_in.put(failed.pack(), b"")
    ring_in.put_eof()
    thread = threading.Thread(target=extract_loop, args=(0, ring_in, [ring_out], events, _TitleTextEngine(), 1),
                              daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive()
    out: dict[int, CaptureRow] = {}
    eof = False
    while not eof:
        descs = ring_out.read_descriptors(timeout=5)
        assert descs is not None
        for d in descs:
            if Ring.is_eof(d):
                eof = True
                continue
            blob, _ = ring_out.read(d)
            ring_out.release(d)
            r = CaptureRow.unpack(blob)
            out[r.header.seq] = r
    assert out[1].columns["title"] == "Hello" and out[1].columns["extractor"] == "selectolax-text@1"
    assert "extractor" not in out[2].columns and "extractor" not in out[3].columns
    report = events.wait_for(ExtractReport)
    assert report.final and report.stats.rows == 3 and report.stats.rendered == 1
    ring_in.close()
    ring_out.close()
