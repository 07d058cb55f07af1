"""What a host search reads: under 5% of the index when the host is in few shards (realistic shard sizes)."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from pathlib import Path

import pytest

from ccrawl.commoncrawl.news.months import Month
from ccrawl.commoncrawl.news.schema import NAMES
from ccrawl.commoncrawl.news.search import SearchReport, search_index, surt_prefix
from ccrawl.commoncrawl.news.shard import ShardWriter
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add

_SURT_HOST: dict[str, str | None] = {}
pytestmark = pytest.mark.slow
ROWS = 16_000
SHARDS = 8


def _row(rng: random.Random, host: str, i: int, name: str) -> dict[str, object]:
    url = f"https://{host}/{rng.getrandbits(64):x}/article-{i}.html"
    key = f"{_SURT_HOST.get(host) or surt_prefix(host)}){url.split(host, 1)[1]}"
    _SURT_HOST[host] = key.split(")", 1)[0]
    row: dict[str, object] = dict.fromkeys(NAMES)
    row.update(
        url_surtkey=key, url=url, url_host_name=host, url_host_registered_domain=host, url_host_tld="com",
        url_protocol="https", fetch_time=dt.datetime(2026, 7, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        fetch_status=200, content_digest=f"{rng.getrandbits(160):040X}", content_mime_type="text/html",
        content_mime_detected="text/html", content_charset="utf-8", content_languages=rng.choice(["eng", "deu"]),
        warc_filename=f"crawl-data/CC-NEWS/2026/07/{name}.warc.gz", warc_record_offset=i * 30_000,
        warc_record_length=rng.randint(5_000, 60_000), content_language_confidence=rng.random(),
        content_language_declared="en", content_length=rng.randint(10_000, 400_000),
        warc_record_id=f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>",
    )
    return row


def build_month(tmp_path: Path, shards: int = SHARDS, rows: int = ROWS) -> LocalRepo:
    """A synthetic published month: ``shards`` shards of ``rows`` rows over 400 hosts, plus one rare host."""
    rng = random.Random(3)
    hosts = [f"www.publisher{i}.com" for i in range(400)]
    repo = LocalRepo(tmp_path / "hub", "cost/news")
    repo.create()
    adds = []
    for s in range(shards):
        name = f"CC-NEWS-20260701000000-{s:05d}"
        dest = tmp_path / f"{name}.parquet"
        w = ShardWriter(dest)
        for i in range(rows):
            host = "www.rare.example" if (s == 2 and i % 5000 == 17) else rng.choice(hosts)
            w.add(_row(rng, host, i, name))
        w.close({"warc_path": name})
        adds.append(Add(f"data/2026/07/{name}.parquet", dest))
    repo.commit(adds, message="synthetic month")
    return repo


def test_a_rare_host_costs_under_five_percent_of_the_index(tmp_path: Path) -> None:
    repo = build_month(tmp_path)
    files = repo.list_files("data/2026/07")

    rep = SearchReport()
    rows = list(search_index(repo, Month(2026, 7), "rare.example", files=files, report=rep))
    assert len(rows) == 4 and rep.shards_opened == 1
    assert rep.bytes_read < 0.05 * rep.index_bytes, (rep.bytes_read, rep.index_bytes)

    # the keys are real SURT keys: the pruning agrees with the function the publisher computes them with
    from ccrawl.url.surt import surt

    assert surt(str(rows[0]["url"])).split(")")[0] == "example,rare"
    none = SearchReport()
    assert list(search_index(repo, Month(2026, 7), "nobody.example", files=files, report=none)) == []
    assert none.shards_opened == 0 and none.bytes_read < 0.03 * none.index_bytes
