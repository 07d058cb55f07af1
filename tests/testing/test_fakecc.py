"""The fake Common Crawl itself: offsets that match its index, Range rules no kinder than S3, faults."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator

from ccrawl.testing.fakecc import KINDS, FakeCCServer, SiteSpec, build_site


@pytest.fixture(scope="module")
def fakecc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    with FakeCCServer(tmp_path_factory.mktemp("fakecc"), SiteSpec(records=20, files=4)) as server:
        yield server


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_every_indexed_capture_is_one_whole_record_at_its_offset(fakecc: FakeCCServer) -> None:
    for cap in fakecc.site.captures:
        data = (fakecc.site.root / cap["filename"]).read_bytes()
        piece = data[int(cap["offset"]) : int(cap["offset"]) + int(cap["length"])]
        (record,) = list(ArchiveIterator(io.BytesIO(piece), parse_http=True))
        assert record.headers["WARC-Target-URI"] == cap["url"]
        assert str(record.http_headers.status_code) == cap["status"]


def test_the_site_is_deterministic(tmp_path: Path) -> None:
    spec = SiteSpec(records=5, files=2)
    a, b = build_site(tmp_path / "a", spec), build_site(tmp_path / "b", spec)
    assert a.captures == b.captures
    name = a.captures[0]["filename"]
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_two_years_of_crawls_and_a_manifest_for_every_kind(fakecc: FakeCCServer) -> None:
    status, _, body = _get(f"{fakecc.url}/collinfo.json")
    crawls = json.loads(body)
    assert status == 200 and len(crawls) >= 4
    assert {c["id"][8:12] for c in crawls} == {"2024", "2025"}
    assert crawls[0]["cdx-api"] == f"{fakecc.url}/{crawls[0]['id']}-index"
    for kind in KINDS:
        status, _, body = _get(f"{fakecc.url}/crawl-data/{crawls[0]['id']}/{kind}.paths.gz")
        paths = gzip.decompress(body).decode().split()
        assert status == 200 and paths
        if kind != "segment":
            assert _get(f"{fakecc.url}/{paths[0]}", {"Range": "bytes=0-0"})[0] == 206


def test_range_rules(fakecc: FakeCCServer) -> None:
    path = fakecc.site.captures[0]["filename"]
    whole = (fakecc.site.root / path).read_bytes()
    url = f"{fakecc.url}/{path}"
    status, headers, body = _get(url, {"Range": "bytes=10-19"})
    assert (status, body, headers["Content-Range"]) == (206, whole[10:20], f"bytes 10-19/{len(whole)}")
    assert _get(url, {"Range": "bytes=-5"})[2] == whole[-5:]
    assert _get(url, {"Range": f"bytes={len(whole) - 3}-"})[2] == whole[-3:]
    # Several ranges: the whole file with 200, as S3 answers; past the end: 416.
    assert _get(url, {"Range": "bytes=0-1,5-6"})[:3:2] == (200, whole)
    status, headers, _ = _get(url, {"Range": f"bytes={len(whole)}-"})
    assert status == 416 and headers["Content-Range"] == f"bytes */{len(whole)}"
    status, headers, body = _get(f"{fakecc.url}/crawl-data/nope.warc.gz")
    assert status == 404 and b"NoSuchKey" in body


def test_faults_fire_the_given_number_of_times_and_are_logged(fakecc: FakeCCServer) -> None:
    fakecc.faults.clear()
    fakecc.faults.add("status", path="collinfo", times=2, status=503, retry_after=1)
    statuses = [_get(f"{fakecc.url}/collinfo.json")[0] for _ in range(3)]
    assert statuses == [503, 503, 200]
    assert [r.status for r in fakecc.faults.requests("collinfo")] == [503, 503, 200]
    fakecc.faults.add("truncate", path="collinfo")
    with pytest.raises(Exception):  # noqa: B017 - http.client raises IncompleteRead, urllib may wrap it
        _get(f"{fakecc.url}/collinfo.json")
    fakecc.faults.add("drop", path="collinfo")
    with pytest.raises(Exception):  # noqa: B017
        _get(f"{fakecc.url}/collinfo.json")
    assert _get(f"{fakecc.url}/collinfo.json")[0] == 200
    fakecc.faults.clear()


def test_latency_is_added_to_every_request(fakecc: FakeCCServer) -> None:
    import time

    fakecc.faults.latency = 0.05
    started = time.monotonic()
    for _ in range(3):
        _get(f"{fakecc.url}/collinfo.json")
    assert time.monotonic() - started >= 0.15
    fakecc.faults.clear()


def test_runs_from_the_shell_and_prints_its_url(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccrawl.testing.fakecc", "--port", "0", "--root", str(tmp_path), "--records", "4",
         "--files", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert _get(f"{url}/collinfo.json")[0] == 200
    finally:
        proc.terminate()
        proc.wait(10)
