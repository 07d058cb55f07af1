"""WARC runs: ISO 28500 records that warcio and fastwarc both read and verify."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator

from ccrawl.recrawl import run_recrawl
from ccrawl.testing.synthweb import SynthWeb


def test_warc_run_writes_linked_verified_records_and_skips_failures(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    cat = web.catalog()
    pages = web.page_urls()[:20]
    urls = pages + cat["unknown-host"][:1] + cat["encoding"][:1]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    s = run_recrawl(str(wl), column="url", out=str(out), state=str(state), format="warc", writers=2, delay=0,
                    workers=16, timeout=5, resolve=web.resolve, batch=4, shard_size=20_000)
    assert s.done and s.fetched == len(urls) and s.failed == 1 and s.extract_shares == {}
    files = sorted(out.glob("*.warc.gz"))
    # both writers got rows; rotation itself is the next test (a burst of rows can all land in the
    # open files before the first seal round, which the seed allows)
    assert len(files) >= 2 and not list(out.glob("*.tmp"))
    responses: dict[str, str] = {}
    requests: dict[str, str] = {}
    infos = 0
    for f in files:
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                kind = rec.rec_type
                rid = rec.rec_headers.get_header("WARC-Record-ID")
                if kind == "warcinfo":
                    infos += 1
                    assert b"canon/1" in rec.content_stream().read()
                elif kind == "response":
                    responses[rid] = rec.rec_headers.get_header("WARC-Target-URI")
                    assert rec.rec_headers.get_header("WARC-IP-Address") == "127.0.0.1"
                    assert rec.rec_headers.get_header("WARC-Payload-Digest").startswith("sha1:")
                    rec.content_stream().read()
                elif kind == "request":
                    requests[rec.rec_headers.get_header("WARC-Concurrent-To")] = rec.rec_headers.get_header(
                        "WARC-Target-URI")
        n = 0
        with open(f, "rb") as fh:
            for rec in FastIterator(fh, parse_http=False):
                n += 1
                assert rec.verify_block_digest()
        with open(f, "rb") as fh:
            for rec in FastIterator(fh, parse_http=True, record_types=WarcRecordType.response):
                assert rec.verify_payload_digest()
        assert n > 1
    assert infos == len(files)
    assert sorted(responses.values()) == sorted(pages + cat["encoding"][:1]), "no record for the failed fetch"
    assert requests == responses, "every request names its response with WARC-Concurrent-To"
    assert json.loads(state.read_text())["warc_files"] == {}


def test_warc_truncated_body_is_marked(web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any) -> None:
    wl = write_worklist(tmp_path / "wl", [web.page_urls()[0]], parts=1)
    out = tmp_path / "out"
    run_recrawl(str(wl), column="url", out=str(out), format="warc", delay=0, workers=4, resolve=web.resolve,
                max_body=1000)
    with open(next(out.glob("*.warc.gz")), "rb") as fh:
        seen = [(r.rec_headers.get_header("WARC-Truncated"), len(r.content_stream().read()))
                for r in ArchiveIterator(fh) if r.rec_type == "response"]
    assert seen == [("length", 1000)]


def test_warc_files_rotate_at_shard_size_of_uncompressed_payload(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    """``--shard-size`` counts uncompressed payload (the HTTP exchanges), not gzipped bytes.

    Pages of one host, 150 ms apart, so seal rounds land between rows and the files rotate.
    Every file but the last holds at least 12,000 bytes of record blocks, while its gzipped
    size is smaller than that: counting gzipped bytes would have rotated later.
    """
    one_host = [u for u in web.page_urls() if "//site0." in u]
    wl = write_worklist(tmp_path / "wl", one_host, parts=1)
    out = tmp_path / "out"
    shard_size = 12_000
    s = run_recrawl(str(wl), column="url", out=str(out), format="warc", writers=1, delay=0.15, workers=4,
                    timeout=5, resolve=web.resolve, shard_size=shard_size)
    assert s.done and s.fetched == len(one_host) >= 10
    files = sorted(out.glob("*.warc.gz"))
    assert len(files) >= 3, f"{len(files)} WARC files for {len(one_host)} pages at --shard-size {shard_size}"
    responses = 0
    payloads = []
    for f in files:
        with open(f, "rb") as fh:
            records = [rec for rec in ArchiveIterator(fh) if rec.rec_type in ("request", "response")]
        responses += sum(1 for rec in records if rec.rec_type == "response")
        payloads.append(sum(rec.length for rec in records))
    assert responses == len(one_host)
    assert all(p >= shard_size for p in payloads[:-1]), payloads
    assert any(f.stat().st_size < shard_size for f in files[:-1]), [f.stat().st_size for f in files]
