"""`ccrawl extract title|text|markdown|links <url>`: the h2m engine over Common Crawl's capture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.extract.engines import get_extractor
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec


@pytest.fixture(scope="module")
def fakecc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    with FakeCCServer(tmp_path_factory.mktemp("fakecc"), SiteSpec(records=12, files=2)) as server:
        yield server


def _ccrawl(args: list[str], fakecc: FakeCCServer, data_dir: Path) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    env.update(
        CCRAWL_COLLINFO_ENDPOINT=f"{fakecc.url}/collinfo.json", CCRAWL_DATA_ENDPOINT=fakecc.url,
        CCRAWL_CDX_ENDPOINT=fakecc.url, CCRAWL_DATA_DIR=str(data_dir), CCRAWL_GLOBAL_RATE="0",
        CCRAWL_BACKOFF="10ms", CCRAWL_CONFIG_DIR=str(data_dir / "no-config"),
    )
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], env=env, capture_output=True, timeout=120)


def test_extract_commands_render_the_captured_page(fakecc: FakeCCServer, tmp_path: Path) -> None:
    cap = next(c for c in fakecc.site.captures if c["status"] == "200" and "/CC-MAIN-2025-26/" in c["filename"])
    body = _ccrawl(["get", cap["url"]], fakecc, tmp_path)
    assert body.returncode == 0, body.stderr
    expected = get_extractor("h2m").extract(body.stdout, cap["url"], content_type="text/html")
    assert expected.title

    title = _ccrawl(["extract", "title", cap["url"]], fakecc, tmp_path)
    assert title.returncode == 0, title.stderr
    assert title.stdout.decode().strip() == expected.title

    markdown = _ccrawl(["extract", "markdown", cap["url"]], fakecc, tmp_path)
    assert markdown.stdout.decode().strip() == expected.markdown.strip()

    text = _ccrawl(["extract", "text", cap["url"], "-o", "json"], fakecc, tmp_path)
    assert json.loads(text.stdout)["text"] == expected.text

    links = _ccrawl(["extract", "links", cap["url"], "-o", "jsonl"], fakecc, tmp_path)
    rows = [json.loads(line) for line in links.stdout.splitlines()]
    assert [r["url"] for r in rows] == expected.outlinks
    assert all(r["source"] == cap["url"] for r in rows)


def test_extract_of_a_url_never_captured_exits_3(fakecc: FakeCCServer, tmp_path: Path) -> None:
    proc = _ccrawl(["extract", "title", "https://nowhere.example/"], fakecc, tmp_path)
    assert proc.returncode == 3
    assert proc.stderr.decode().count("\n") == 1 and b"no capture" in proc.stderr
