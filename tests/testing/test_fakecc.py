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

REPO = Path(__file__).resolve().parents[2]


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


def _start(args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Start ``python -m ccrawl.testing.fakecc``; its URL and its two start-up lines on stderr."""
    import os
    import queue
    import threading

    proc = subprocess.Popen([sys.executable, "-m", "ccrawl.testing.fakecc", "--port", "0", "--records", "4",
                             "--files", "1", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(cwd), **env}, cwd=cwd)
    assert proc.stdout is not None and proc.stderr is not None
    err = proc.stderr
    got: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [got.put(err.readline().strip()) for _ in range(2)], daemon=True).start()
    url = proc.stdout.readline().strip()
    lines = []
    for _ in range(2):
        try:
            lines.append(got.get(timeout=20))
        except queue.Empty:
            lines.append("")  # a line it never printed
    return proc, url, lines


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_a_signal_stops_it_and_removes_its_temporary_bucket(tmp_path: Path, signum: str) -> None:
    # SIGTERM used to leave the whole bucket behind in $TMPDIR.
    import signal

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc, url, lines = _start([], {"TMPDIR": str(tmpdir)}, tmp_path)
    try:
        bucket = Path(lines[0].split("serving ", 1)[1].split(" with crawls")[0])
        assert bucket.parent == tmpdir and (bucket / "collinfo.json").is_file()
        assert _get(f"{url}/collinfo.json")[0] == 200
        proc.send_signal(getattr(signal, signum))
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    assert not bucket.exists() and list(tmpdir.iterdir()) == []


def _news_list(url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_DATA_ENDPOINT": url,
           "CCRAWL_COLLINFO_ENDPOINT": f"{url}/collinfo.json", "CCRAWL_CDX_ENDPOINT": url,
           "CCRAWL_DATA_DIR": str(tmp_path / "ccdata"), "CCRAWL_CONFIG_DIR": str(tmp_path / "cfg"),
           "CCRAWL_BACKOFF": "0.01", "CCRAWL_BACKOFF_MAX": "0.05"}
    return subprocess.run([sys.executable, "-m", "ccrawl", "news", "list", "--year", "2026", "--month", "7",
                           "-o", "jsonl"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


def test_cc_news_without_the_corpus_answers_an_error_naming_what_is_missing(tmp_path: Path) -> None:
    # It used to 404, which `news list` reports as a month Common Crawl does not have.
    nowhere = tmp_path / "no-corpus"
    proc, url, lines = _start(["--root", str(tmp_path / "bucket")], {"CCRAWL_CORPUS": str(nowhere)}, tmp_path)
    try:
        assert lines[1] == (f"fakecc: no CC-NEWS (its requests answer 424): CCRAWL_CORPUS={nowhere} holds no "
                            "html-eval/pages: point it at the shared corpus (the directory holding html-eval/)")
        status, _, body = _get(f"{url}/crawl-data/CC-NEWS/2026/07/warc.paths.gz")
        assert status == 424 and b"<Code>NoCorpus</Code>" in body and str(nowhere).encode() in body
        done = _news_list(url, tmp_path)
    finally:
        proc.terminate()
        proc.wait(10)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "HTTP 424 fakecc has no CC-NEWS" in done.stderr and f"CCRAWL_CORPUS={nowhere}" in done.stderr
    assert "no manifest" not in done.stderr


def test_cc_news_finds_the_corpus_beside_the_checkout_without_the_variable(corpus_dir: Path, tmp_path: Path) -> None:
    if corpus_dir.resolve() not in [c.resolve() for c in _candidates_from(tmp_path)]:
        pytest.skip(f"the shared corpus at {corpus_dir} is not beside this checkout (CCRAWL_CORPUS points elsewhere)")
    env = {"CCRAWL_CORPUS": ""}
    proc, url, lines = _start(["--root", str(tmp_path / "bucket")], env, tmp_path)
    try:
        assert lines[1].startswith("fakecc: CC-NEWS months from the shared corpus at ")
        done = _news_list(url, tmp_path)
    finally:
        proc.terminate()
        proc.wait(10)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows and all(r["path"].startswith("crawl-data/CC-NEWS/2026/07/") for r in rows)


def _candidates_from(cwd: Path) -> list[Path]:
    import os

    from ccrawl.testing.fakecc.news import corpus_candidates

    old = Path.cwd()
    os.chdir(cwd)
    try:
        return corpus_candidates()
    finally:
        os.chdir(old)


def test_the_corpus_is_also_looked_for_beside_the_current_directory(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    candidates = _candidates_from(checkout)
    assert tmp_path.resolve() / "shared" / "corpus" in candidates  # ../shared/corpus from the checkout
    assert REPO.parent / "shared" / "corpus" in candidates  # ../shared/corpus beside this repo, as tests look
