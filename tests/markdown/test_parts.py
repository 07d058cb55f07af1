"""The pool converts a downloaded shard in parts its workers read themselves: the same rows and counts
as one pass, or one pass when the parts cannot prove they cover the file exactly."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccrawl.errors import InputError
from ccrawl.markdown import parts
from ccrawl.markdown.convert import ConvertedDoc, Converter
from ccrawl.markdown.export import Exporter, ExportOptions
from ccrawl.markdown.parts import FilePart, check_parts, convert_part, convert_parts, join_parts, plan_parts
from ccrawl.markdown.sources import ReadStats, file_docs
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.procs import descendants, still_running_after
from tests.markdown.conftest import DEU, ENG, VIE, Page, _warc, html


@pytest.fixture(scope="module")
def pool() -> Iterator[Converter]:
    with Converter("h2m", 2) as converter:
        yield converter


def _pages(n: int, seed: int = 5) -> list[Page]:
    rng = random.Random(seed)
    texts = [ENG, DEU, VIE]
    out = []
    for i in range(n):
        kind = rng.random()
        if kind < 0.08:
            out.append(Page(f"https://x{i}.example.com/gone", b"<html><body>gone</body></html>", status=404))
        elif kind < 0.14:
            out.append(Page(f"https://x{i}.example.com/a.pdf", b"%PDF-1.4 not html", mime="application/pdf"))
        elif kind < 0.25 and out:
            out.append(Page(f"https://x{i}.example.com/copy", out[rng.randrange(len(out))].body))  # same digest
        else:
            text = " ".join(rng.choice(texts) for _ in range(rng.randint(1, 4)))
            out.append(Page(f"https://x{i}.example.com/p", html(f"Page {i}", f"{text} Number {i}.")))
    return out


def _sequential(path: Path, kind: str, dedup: bool) -> tuple[list[ConvertedDoc], ReadStats]:
    stats = ReadStats()
    docs = list(Converter("h2m", 1).convert(file_docs(path, kind=kind, dedup_digest=dedup, stats=stats,
                                                      skip_errors=False, warn=print)))
    return docs, stats


@pytest.mark.parametrize("kind", ["warc", "wet"])
@pytest.mark.parametrize("dedup", [False, True])
def test_parts_give_the_sequential_rows_and_counts_at_every_part_size(pool: Converter, tmp_path: Path, kind: str,
                                                                      dedup: bool) -> None:
    path = tmp_path / f"shard.{kind}.gz"
    path.write_bytes(_warc(_pages(60), kind))
    want, want_stats = _sequential(path, kind, dedup)
    assert want_stats.duplicates > 0 or not dedup  # the shard really has payloads served twice
    size = path.stat().st_size
    # parts smaller than a record (most parts hold no record start), about a record, several records, one part
    for part_bytes in (97, 1_500, 9_000, None):
        results, problem = convert_parts(pool, path, kind=kind, dedup_digest=dedup, part_bytes=part_bytes)
        assert problem == "", part_bytes
        assert len(results) == len(plan_parts(size, 2, part_bytes))
        stats = ReadStats()
        got = list(join_parts(results, stats, dedup))
        assert got == want, part_bytes
        assert stats == want_stats, part_bytes


def test_plan_covers_the_file_in_order_without_overlap() -> None:
    for size in (0, 1, 10, 4 << 20, (4 << 20) + 1, 1 << 30, 3 << 30):
        for workers in (2, 3, 8):
            ranges = plan_parts(size, workers)
            assert ranges[0][0] == 0 and ranges[-1][1] == size
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
            assert all(stop - start <= parts.MAX_PART_BYTES for start, stop in ranges)
            assert all(stop - start >= min(size, parts.MIN_PART_BYTES) // 2 for start, stop in ranges)
    assert plan_parts(1 << 20, 8) == [(0, 1 << 20)]  # a small file is one part: no seam to check


def test_candidate_scan_finds_every_magic_once_across_block_edges(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    rng = random.Random(3)
    data = bytearray(rng.randbytes(5_000))
    for at in rng.sample(range(0, 4_990), 60):
        data[at:at + 4] = b"\x1f\x8b\x08" + bytes([rng.choice([0, 4, 8, 0x20, 0xE0])])
    path = tmp_path / "noise"
    path.write_bytes(bytes(data))
    want = [i for i in range(len(data) - 3) if data[i:i + 3] == b"\x1f\x8b\x08" and data[i + 3] & 0xE0 == 0]
    for block in (4, 5, 7, 64, 1 << 20):
        monkeypatch.setattr(parts, "_SCAN", block)
        for start in (0, 1, 2_500):
            with path.open("rb") as fh:
                assert list(parts._candidates(fh, start)) == [i for i in want if i >= start], (block, start)


def _raw_record(url: str, body: bytes) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Date: 2099-01-01T00:00:00Z\r\n"
            f"WARC-Record-ID: <urn:uuid:{abs(hash(url)):032x}>\r\nContent-Type: application/http; msgtype=response"
            f"\r\nContent-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


def _member_inside_member(tmp_path: Path) -> tuple[Path, int, int]:
    """A shard whose first record carries, as stored bytes, a whole gzip member of a WARC record:
    a scan that lands inside it finds a member that checks out. Returns the path, where the outer
    record's member ends, and where the inner member starts."""
    inner = gzip.compress(_raw_record("https://inner.example.com/", html("Inner", ENG)), mtime=0)
    filler = b"<!-- " + b"x" * 60_000 + b" -->"
    outer_body = html("Outer", ENG).replace(b"</body>", filler + inner + filler + b"</body>")
    outer = gzip.compress(_raw_record("https://outer.example.com/", outer_body), compresslevel=0, mtime=0)
    rest = b"".join(gzip.compress(_raw_record(f"https://r{i}.example.com/", html(f"R{i}", DEU)), mtime=0)
                    for i in range(6))
    path = tmp_path / "nested.warc.gz"
    path.write_bytes(outer + rest)
    return path, len(outer), outer.index(inner)


def test_a_member_stored_inside_another_is_seen_as_a_bad_seam(tmp_path: Path) -> None:
    path, outer_end, inner_at = _member_inside_member(tmp_path)
    size = path.stat().st_size
    cut = inner_at - 1_000  # a part starting inside the outer record, before the member it carries
    head = convert_part(FilePart(str(path), 0, cut, "warc", False, "h2m"))
    tail = convert_part(FilePart(str(path), cut, size, "warc", False, "h2m"))
    assert head.next == outer_end  # the sequential reader's next record
    assert tail.first == inner_at  # the scan took the stored member for a boundary...
    # Two guards catch it: the reader stumbles on the outer member's tail after the inner one...
    assert "damaged record" in tail.unclean and check_parts([head, tail], size) != ""
    # ...and, had it not, the seam: the part before ends where the one after does not start.
    tail.unclean = ""
    problem = check_parts([head, tail], size)
    assert f"ends at {outer_end}" in problem and f"starts at {inner_at}" in problem
    assert next(d.url for d in tail.docs) == "https://inner.example.com/"


def _crawl(root: Path, crawl: str, blobs: list[bytes]) -> None:
    paths = []
    for i, blob in enumerate(blobs):
        rel = f"crawl-data/{crawl}/segments/1/warc/CC-MAIN-p-{i:05d}.warc.gz"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(blob)
        paths.append(rel)
    (root / f"crawl-data/{crawl}/warc.paths.gz").write_bytes(gzip.compress("\n".join(paths).encode()))


def _export(fakecc: FakeCCServer, tmp_path: Path, crawl: str, name: str, workers: int,
            part_bytes: int | None = None, **kw: Any) -> tuple[Exporter, list[str]]:
    log: list[str] = []
    opts = ExportOptions(out=tmp_path / name, crawl=crawl, shards="all", push=False, workers=workers,
                         client_options=fakecc.client_options(), **kw)
    exporter = Exporter(opts, log=log.append)
    exporter.part_bytes = part_bytes
    list(exporter.run())
    return exporter, log


def _rows(out: Path) -> list[list[dict[str, Any]]]:
    return [pq.read_table(f).to_pylist() for f in sorted((out / "data").rglob("*.parquet"))]


def _written(out: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()]
    return [e for e in events if e["event"] == "unit_written"]


def test_workers_read_their_own_parts_and_write_the_one_pass_rows(fakecc: FakeCCServer, tmp_path: Path) -> None:
    crawl = "CC-MAIN-2099-31"
    _crawl(Path(fakecc.site.root), crawl, [_warc(_pages(40, seed=s), "warc") for s in (1, 2)])
    one, _ = _export(fakecc, tmp_path, crawl, "one", 1, dedup_digest=True)
    pooled, _ = _export(fakecc, tmp_path, crawl, "pooled", 2, part_bytes=5_000, dedup_digest=True)
    assert _rows(tmp_path / "pooled") == _rows(tmp_path / "one")
    assert pooled.stats.as_dict() | {"seconds": 0} == one.stats.as_dict() | {"seconds": 0}
    assert [e["parts"] for e in _written(tmp_path / "one")] == [0, 0]  # no pool: read here
    assert all(e["parts"] > 3 for e in _written(tmp_path / "pooled"))  # the workers read the file
    _limited, _ = _export(fakecc, tmp_path, crawl, "limited", 2, part_bytes=5_000, limit=7)
    assert [e["parts"] for e in _written(tmp_path / "limited")] == [0, 0]  # --limit counts in one pass
    assert [len(r) for r in _rows(tmp_path / "limited")] == [7, 7]


def test_a_stored_member_inside_a_record_sends_the_shard_back_to_one_pass(fakecc: FakeCCServer,
                                                                          tmp_path: Path) -> None:
    crawl = "CC-MAIN-2099-32"
    path, _, _ = _member_inside_member(tmp_path)
    _crawl(Path(fakecc.site.root), crawl, [path.read_bytes()])
    _export(fakecc, tmp_path, crawl, "one", 1)
    _, log = _export(fakecc, tmp_path, crawl, "pooled", 2, part_bytes=20_000)
    assert _rows(tmp_path / "pooled") == _rows(tmp_path / "one")
    assert [r["url"] for r in _rows(tmp_path / "one")[0]][:2] == ["https://outer.example.com/", "https://r0.example.com/"]
    (event,) = _written(tmp_path / "pooled")
    assert event["parts"] == 0 and event["parts_fallback"].startswith("the part at ")
    assert any("read again in one pass" in line for line in log)


def test_a_damaged_member_gives_the_one_pass_skips_and_errors(fakecc: FakeCCServer, tmp_path: Path) -> None:
    crawl = "CC-MAIN-2099-33"
    members = [gzip.compress(_raw_record(f"https://d{i}.example.com/", html(f"D{i}", ENG)), mtime=0)
               for i in range(8)]
    bad = bytearray(members[4])
    bad[len(bad) // 2] ^= 0xFF  # the CRC no longer matches (or the deflate data breaks)
    members[4] = bytes(bad)
    _crawl(Path(fakecc.site.root), crawl, [b"".join(members)])
    one, one_log = _export(fakecc, tmp_path, crawl, "one", 1, skip_errors=True)
    pooled, pooled_log = _export(fakecc, tmp_path, crawl, "pooled", 2, part_bytes=1_000, skip_errors=True)
    assert _rows(tmp_path / "pooled") == _rows(tmp_path / "one")
    assert len(_rows(tmp_path / "one")[0]) == 7 and one.stats.bad_records == pooled.stats.bad_records == 1
    assert [line for line in pooled_log if line.startswith("parse: ")] == [
        line for line in one_log if line.startswith("parse: ")] != []
    (event,) = _written(tmp_path / "pooled")
    assert event["parts"] == 0 and event["parts_fallback"]
    with pytest.raises(InputError, match="bad WARC record"):
        _export(fakecc, tmp_path, crawl, "strict", 2, part_bytes=1_000)


_CLEAN = _warc(_pages(24, seed=9), "warc")


def _one_pass(path: Path) -> tuple[list[ConvertedDoc], ReadStats]:
    stats = ReadStats()
    docs = list(Converter("h2m", 1).convert(file_docs(path, kind="warc", dedup_digest=True, stats=stats,
                                                      skip_errors=True, warn=lambda _m: None)))
    return docs, stats


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=st.lists(st.tuples(st.integers(0, len(_CLEAN) - 1), st.integers(1, 255)), max_size=3),
       truncate=st.one_of(st.none(), st.integers(1, len(_CLEAN) - 1)),
       part_bytes=st.integers(50, 40_000))
def test_parts_either_match_one_pass_or_say_why(tmp_path: Path, damage: list[tuple[int, int]], truncate: int | None,
                                                part_bytes: int) -> None:
    data = bytearray(_CLEAN)
    for at, xor in damage:
        data[at] ^= xor
    if truncate is not None:
        del data[truncate:]
    path = tmp_path / "fuzz.warc.gz"
    path.write_bytes(bytes(data))
    try:
        want, want_stats = _one_pass(path)
    except InputError:  # not WARC at offset 0: one pass stops there, so the parts must not stand in for it
        want, want_stats = None, ReadStats()
    inline = Converter("h2m", 1)  # map runs each part in this process: the same code as a worker
    results, problem = convert_parts(inline, path, kind="warc", dedup_digest=True, part_bytes=part_bytes)
    if not damage and truncate is None:
        assert problem == ""  # a clean file never falls back, whatever the cut
    if want is None:
        assert problem != ""
    if problem == "":
        stats = ReadStats()
        assert list(join_parts(results, stats, True)) == want
        assert stats == want_stats


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_sigkilled_export_leaves_no_pool_process_behind(cc_env: dict[str, str], fakecc: FakeCCServer,
                                                         tmp_path: Path) -> None:
    crawl = "CC-MAIN-2099-34"
    _crawl(Path(fakecc.site.root), crawl, [_warc(_pages(30, seed=s), "warc") for s in range(6)])
    fakecc.faults.latency = 0.3  # each shard takes a moment to arrive, so the kill lands with the pool up
    cmd = [sys.executable, "-m", "ccrawl", "-c", crawl, "markdown", "export", "--shards", "all", "--push=false",
           "--out", str(tmp_path / "md"), "--workers", "2"]
    proc = subprocess.Popen(cmd, env=cc_env, cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        pool: list[int] = []
        while time.monotonic() < deadline and len(pool) < 3:  # the fork server and two workers
            pool = descendants(proc.pid)
            time.sleep(0.05)
        assert len(pool) >= 3, "the pool never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        fakecc.faults.latency = 0.0
        if proc.poll() is None:
            proc.kill()
    left = still_running_after(pool, 15)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
