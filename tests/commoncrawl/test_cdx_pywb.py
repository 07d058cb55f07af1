"""The CDX client against pywb, a real CDX server, over a ZipNum index: it speaks the real API.

pywb lives in its own virtualenv (its pins clash with ours): ``$CCRAWL_PYWB_VENV``, else
``../pywb-venv`` beside the repo; the module fixture creates it (``python -m venv`` then
``pip install pywb==2.10.0``) when it is missing, and fails, not skips, when that cannot be done.
pywb is started with ``wayback`` (DESIGN §7) and ``cdx_api_endpoint: -index``, so a crawl's index
is at ``/<crawl>-index`` exactly as on index.commoncrawl.org, and each crawl is a ZipNum
collection with ``max_blocks: 5`` (Common Crawl's page size).

Every query runs against pywb and against the fake index built from the same rows, and the two
must agree, which is also the evidence that the fake is no more generous than the real server.
The known difference: pywb answers an empty 200 where Common Crawl answers 404, and both mean
zero rows to the client.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.cdx import CdxQuery, SearchStats, search
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer, index_warc_tree, write_zipnum
from ccrawl.testing.fakecc.site import SiteSpec, build_site

REPO = Path(__file__).resolve().parents[2]
BLOCK = 5


PYWB = "pywb==2.10.0"  # the version this module was verified against


def _venv() -> Path:
    """``$CCRAWL_PYWB_VENV``, else ``../pywb-venv`` beside the repo (when writable), else ``~/.cache``."""
    if os.environ.get("CCRAWL_PYWB_VENV"):
        return Path(os.environ["CCRAWL_PYWB_VENV"])
    beside = REPO.parent / "pywb-venv"
    if beside.exists() or os.access(REPO.parent, os.W_OK):
        return beside
    return Path.home() / ".cache" / "ccrawl" / "pywb-venv"


def _wayback() -> Path:
    venv = _venv()
    wayback = venv / "bin" / "wayback"
    if wayback.exists():
        return wayback
    steps = [[sys.executable, "-m", "venv", str(venv)], [str(venv / "bin" / "pip"), "install", "-q", PYWB]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.fail(f"could not set up pywb in {venv} ({' '.join(step)}): {done.stderr[-2000:]}")
    return wayback


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, str]]]:
    root = tmp_path_factory.mktemp("pywbsite")
    build_site(root, SiteSpec(records=160, files=4, older_records=20, older_files=1))
    return index_warc_tree(root)


@pytest.fixture(scope="module")
def pywb(rows: dict[str, list[dict[str, str]]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    wayback = _wayback()
    work = tmp_path_factory.mktemp("pywb")
    config = ["cdx_api_endpoint: -index", "collections:"]
    for crawl, crawl_rows in rows.items():
        idx = write_zipnum(crawl_rows, work / "indexes" / crawl, lines_per_block=BLOCK)
        config += [f"  {crawl}:", "    index:", "      type: zipnum", f"      path: {idx}",
                   f"      max_blocks: {BLOCK}"]
    (work / "config.yaml").write_text("\n".join(config) + "\n", encoding="utf-8")
    port = _free_port()
    log = open(work / "wayback.log", "wb")  # noqa: SIM115 - closed after the process ends
    proc = subprocess.Popen([str(wayback), "-p", str(port), "-b", "127.0.0.1"], cwd=work, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    crawl = next(iter(rows))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/{crawl}-index?url=example.com&showNumPages=true", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pywb did not start: {(work / 'wayback.log').read_text(errors='replace')[-2000:]}")
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.fixture(scope="module")
def fake(rows: dict[str, list[dict[str, str]]]) -> Iterator[CdxServer]:
    with CdxServer(CdxIndex({k: list(v) for k, v in rows.items()}, lines_per_block=BLOCK)) as srv:
        yield srv


@pytest.fixture(scope="module")
def newest(rows: dict[str, list[dict[str, str]]]) -> str:
    return max(rows, key=lambda c: len(rows[c]))


def _run(base: str, query: CdxQuery, crawls: list[str], **kw: Any) -> tuple[list[tuple[str, str, int]], SearchStats]:
    stats = SearchStats()
    opts = {"cdx_endpoint": base, "global_rate": 0, "retries": 1, "backoff": 0.001, "no_cache": True}
    got = list(search(query, crawls, client_options=opts, stats=stats, notice=lambda _: None, **kw))
    return [(r["urlkey"], r["timestamp"], r["offset"]) for r in got], stats


@pytest.mark.parametrize("pattern", ["*.example.com", "example.com/*", "example.com", "news.example.net/*"])
def test_page_counts_agree_with_pywb(pywb: str, fake: CdxServer, newest: str, pattern: str) -> None:
    from urllib.parse import quote

    def pages(base: str) -> bytes:
        with urllib.request.urlopen(f"{base}/{newest}-index?url={quote(pattern)}&showNumPages=true") as resp:
            return bytes(resp.read())

    import json

    assert json.loads(pages(pywb)) == json.loads(pages(fake.url))


QUERIES = [
    CdxQuery("*.example.com"),
    CdxQuery("*.example.com", status="200"),
    CdxQuery("*.example.com", filters=("!=status:200",)),
    CdxQuery("example.com/*", mime="text/"),
    CdxQuery("*.example.com", lang="eng"),
    CdxQuery("*.example.com", url_contains=("/data",)),
    CdxQuery("*.example.com", url_not_contains=("/data",)),
    CdxQuery("*.example.com", url_contains=("/data",), push_filters=False),
    CdxQuery("*.example.com", from_ts="20250625", to_ts="20250701"),
    CdxQuery("example.com", match="host"),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "|".join(f"{k}={v}" for k, v in q.params()))
def test_search_over_pywb_gives_what_it_gives_over_the_fake(pywb: str, fake: CdxServer, newest: str,
                                                             query: CdxQuery) -> None:
    real, real_stats = _run(pywb, query, [newest])
    ours, _ = _run(fake.url, query, [newest])
    assert real, "the query should match something"
    assert real == ours
    assert not real_stats.skipped and real_stats.rereads == 0


def test_push_down_reads_fewer_bytes_from_pywb(pywb: str, newest: str) -> None:
    pushed, pushed_stats = _run(pywb, CdxQuery("*.example.com", url_contains=("/data",)), [newest])
    local, local_stats = _run(pywb, CdxQuery("*.example.com", url_contains=("/data",), push_filters=False), [newest])
    assert pushed == local
    assert pushed_stats.bytes_read * 3 < local_stats.bytes_read


def test_latest_only_over_several_crawls_agrees_and_spills(pywb: str, fake: CdxServer,
                                                           rows: dict[str, list[dict[str, str]]]) -> None:
    crawls = sorted(rows)
    real, stats = _run(pywb, CdxQuery("*.example.com"), crawls, latest_only=True, max_buffer=3)
    ours, _ = _run(fake.url, CdxQuery("*.example.com"), crawls, latest_only=True)
    assert real == ours and stats.spilled_rows > 0


def test_pywbs_empty_200_is_zero_rows(pywb: str, newest: str) -> None:
    real, stats = _run(pywb, CdxQuery("nothing.example.invalid/"), [newest])
    assert real == [] and not stats.skipped
