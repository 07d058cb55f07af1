"""crawl fetch --warc-dir: the seed's WARC/1.0 output, read back with warcio and fastwarc."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator

from ccrawl.cli.main import main
from ccrawl.testing.synthweb import SynthWeb


def _fetch(capsys: pytest.CaptureFixture[str], web: SynthWeb, path: str, warc: Path, *extra: str) -> dict[str, object]:
    code = main(["crawl", "fetch", web.url("site0.test", path), "--warc-dir", str(warc),
                 "--resolve", "*.test=127.0.0.1", "-o", "json", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    record: dict[str, object] = json.loads(out.out)
    return record


def _records(path: Path) -> list[tuple[dict[str, str], bytes, object]]:
    out = []
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh, check_digests=True):
            body = rec.content_stream().read()
            assert not rec.digest_checker.problems, rec.digest_checker.problems
            out.append((dict(rec.rec_headers.headers), body, rec.http_headers))
    return out


def _b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def test_plain_page_warc_layout(web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = _fetch(capsys, web, "/p/1", tmp_path, "--robots")
    warc = Path(str(rec["warc_file"]))
    assert warc.parent == tmp_path and warc.name.endswith(".warc.gz") and warc.is_file()
    assert not list(tmp_path.glob("*.open"))
    records = _records(warc)
    assert [h["WARC-Type"] for h, _, _ in records] == ["warcinfo", "request", "response"]
    info, req, resp = (h for h, _, _ in records)
    assert all(raw.startswith(b"WARC/1.0\r\n") for raw in _raw_heads(warc))
    assert req["WARC-Concurrent-To"] == resp["WARC-Record-ID"]
    assert req["WARC-Warcinfo-ID"] == resp["WARC-Warcinfo-ID"] == info["WARC-Record-ID"]
    assert resp["WARC-IP-Address"] == "127.0.0.1" and resp["WARC-Target-URI"] == rec["url"]
    body = records[2][1]
    assert resp["WARC-Payload-Digest"] == _b32(body) == rec["digest"]
    assert resp["WARC-Block-Digest"].startswith("sha1:") and "WARC-Truncated" not in resp
    assert rec["content_length"] == len(body) and b"</html>" in body
    assert rec["robots"] == "checked"


def _raw_heads(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes())
    return [b"WARC/1.0\r\n" + part.split(b"\r\n\r\n", 1)[0] for part in data.split(b"WARC/1.0\r\n")[1:]]


def test_decoded_body_gets_rewritten_headers(web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = _fetch(capsys, web, "/fault/encoding/gzip", tmp_path)
    records = _records(Path(str(rec["warc_file"])))
    _, body, http = records[2]
    assert rec["decoded"] is True and body.lstrip().startswith(b"<!DOCTYPE html")
    assert http.get_header("Content-Encoding") is None  # type: ignore[attr-defined]
    assert http.get_header("X-Crawler-Content-Encoding") == "gzip"  # type: ignore[attr-defined]
    assert http.get_header("Content-Length") == str(len(body))  # type: ignore[attr-defined]
    assert http.get_header("Transfer-Encoding") is None  # type: ignore[attr-defined]


def test_body_cap_sets_warc_truncated(web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = _fetch(capsys, web, "/fault/big?mb=11", tmp_path)
    records = _records(Path(str(rec["warc_file"])))
    headers, body, http = records[2]
    assert rec["truncated"] is True and len(body) == 10 * 1024 * 1024
    assert headers["WARC-Truncated"] == "length"
    assert http.get_header("X-Crawler-Content-Length") == str(11 * 1024 * 1024)  # type: ignore[attr-defined]


def test_fastwarc_reads_and_verifies(web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = _fetch(capsys, web, "/fault/redirect/2", tmp_path)
    assert rec["final_url"] and rec["redirects"]
    with open(str(rec["warc_file"]), "rb") as fh:
        seen = []
        for r in FastIterator(fh, parse_http=False):
            seen.append(r.record_type)
            assert r.verify_block_digest()
    with open(str(rec["warc_file"]), "rb") as fh:
        for r in FastIterator(fh, parse_http=True, record_types=WarcRecordType.response):
            assert r.verify_payload_digest()
            assert r.headers["WARC-Target-URI"] == rec["final_url"]
            assert r.http_headers.status_code == 200
    assert seen == [WarcRecordType.warcinfo, WarcRecordType.request, WarcRecordType.response]


def test_robots_disallowed_is_error_exit(web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crawl", "fetch", web.url("rdeny-0.test", "/p/0"), "--robots", "--warc-dir", str(tmp_path),
                 "--resolve", "*.test=127.0.0.1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 1 and "robots" in json.loads(out.out)["error"]
    assert not list(tmp_path.iterdir())
