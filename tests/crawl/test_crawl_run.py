"""crawl run over a synthetic web of linked hosts: depth, limits, filters, robots, WARC, resume."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator as FastIterator
from warcio.archiveiterator import ArchiveIterator

from ccrawl.cli.main import main
from ccrawl.crawl.parts import crawl_run
from ccrawl.crawl.run import CrawlOptions
from ccrawl.errors import UsageError
from ccrawl.testing.synthweb import SynthWeb
from ccrawl.url.domain import shard_of


def _opts(tmp_path: Path, web: SynthWeb, **kw: object) -> CrawlOptions:
    tmp_path.mkdir(parents=True, exist_ok=True)
    base: dict[str, object] = {"state": tmp_path / "state.db", "out": tmp_path / "warc", "delay": 0.0,
                               "workers": 16, "resolve": web.resolve}
    base.update(kw)
    return CrawlOptions(**base)  # type: ignore[arg-type]


def warc_targets(directory: Path) -> list[str]:
    """Target URIs of every response in the sealed WARC files, checked by warcio (digests) as read."""
    urls = []
    for path in sorted(directory.glob("*.warc.gz")):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh, check_digests=True):
                if rec.rec_type == "response":
                    rec.content_stream().read()
                    assert not rec.digest_checker.problems
                    urls.append(rec.rec_headers.get_header("WARC-Target-URI"))
    return urls


def _requests(web: SynthWeb, hosts: set[str]) -> Counter[tuple[str, str]]:
    return Counter({k: v for k, v in web.stats.requests.items() if k[0] in hosts and k[1] != "robots.txt"})


def test_depth_bounds_the_crawl_and_every_page_is_archived_once(web: SynthWeb, tmp_path: Path) -> None:
    seed = web.url("site0.test")
    depth0 = crawl_run(_opts(tmp_path / "d0", web, max_depth=0), [seed])
    assert depth0.fetched == 1 and depth0.finished
    summary = crawl_run(_opts(tmp_path, web, max_depth=2, warc_size=30_000), [seed])
    assert summary.finished and summary.failed == 0
    urls = warc_targets(tmp_path / "warc")
    assert len(urls) == len(set(urls)) == summary.archived
    assert len(urls) > 10 and len({u.split("/")[2] for u in urls}) > 1  # followed links across hosts
    assert not any("/private/" in u for u in urls)  # robots.txt disallows /private/
    assert summary.robots_skipped >= 1 and len(summary.warc_files) >= 2
    assert not list((tmp_path / "warc").glob("*.open"))
    for path in (tmp_path / "warc").glob("*.warc.gz"):
        with path.open("rb") as fh:
            assert all(r.verify_block_digest() for r in FastIterator(fh, parse_http=False))


def test_max_pages_stops_and_a_rerun_resumes_without_refetching(web: SynthWeb, tmp_path: Path) -> None:
    seed = web.url("site1.test")
    first = crawl_run(_opts(tmp_path, web, max_depth=3, max_pages=5), [seed])
    assert first.fetched == 5 and not first.finished
    second = crawl_run(_opts(tmp_path, web, max_depth=3, max_pages=12), [])
    assert second.fetched == 7 and second.total_fetched == 12
    urls = warc_targets(tmp_path / "warc")
    assert len(urls) == len(set(urls)) == first.archived + second.archived


def test_same_host_stays_on_seed_hosts(web: SynthWeb, tmp_path: Path) -> None:
    summary = crawl_run(_opts(tmp_path, web, max_depth=3, same_host=True), [web.url("site2.test")])
    hosts = {u.split("/")[2].split(":")[0] for u in warc_targets(tmp_path / "warc")}
    assert hosts == {"site2.test"} and summary.archived >= 2


def test_shard_keeps_only_its_registered_domains(web: SynthWeb, tmp_path: Path) -> None:
    seeds = [web.url(f"site{i}.test") for i in range(12)]
    got: list[set[str]] = []
    for shard in range(2):
        crawl_run(_opts(tmp_path / str(shard), web, shard=shard, shards=2), seeds)
        got.append({u.split("/")[2].split(":")[0] for u in warc_targets(tmp_path / str(shard) / "warc")})
    assert got[0] and got[1] and not got[0] & got[1]
    assert got[0] | got[1] == {f"site{i}.test" for i in range(12)}
    assert all(shard_of(h, 2) == 0 for h in got[0])
    with pytest.raises(UsageError):
        crawl_run(_opts(tmp_path / "bad", web, shard=2, shards=2), seeds)


def test_robots_rules_4xx_allows_5xx_disallows_crawl_delay_spaces(web: SynthWeb, tmp_path: Path) -> None:
    seeds = [web.url(h, p) for h in ("rdeny-1.test", "r5xx-1.test", "r404-1.test") for p in ("/", "/p/1")]
    seeds += [web.url("rdelay-1.test", f"/p/{n}") for n in range(3)]
    summary = crawl_run(_opts(tmp_path, web, delay=0.0, max_depth=0), seeds)
    hosts = Counter(u.split("/")[2].split(":")[0] for u in warc_targets(tmp_path / "warc"))
    assert hosts == {"r404-1.test": 2, "rdelay-1.test": 3}
    assert summary.robots_skipped == 4
    assert web.stats.requests[("rdeny-1.test", "/robots.txt")] == 1  # once per host, cached
    times = sorted(web.stats.times("rdelay-1.test"))
    page_times = [t for t, h, p, _ in web.stats.log if h == "rdelay-1.test" and p.startswith("/p/")]
    assert len(times) == 4 and all(
        b - a >= web.crawl_delay * 0.9 for a, b in itertools.pairwise(page_times))
    assert not any(p.startswith("/p/") for _, h, p, _ in web.stats.log if h in ("rdeny-1.test", "r5xx-1.test"))


def test_no_robots_fetches_disallowed_hosts(web: SynthWeb, tmp_path: Path) -> None:
    summary = crawl_run(_opts(tmp_path, web, robots=False, max_depth=0), [web.url("rdeny-2.test", "/p/0")])
    assert summary.archived == 1 and web.stats.requests[("rdeny-2.test", "/robots.txt")] == 0


def test_cli_run_reads_seed_jsonl_and_reports(
    web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"url": web.url(f"site{i}.test"), "tier": 2}) + "\n" for i in (3, 4))
                     + "not json {\n")
    code = main(["crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "w"), "--state",
                 str(tmp_path / "s.db"), "--delay", "0s", "--resolve", "*.test=127.0.0.1", "-j", "8",
                 "--max-depth", "0", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    rec = json.loads(out.out)
    assert rec["fetched"] == 2 and rec["archived"] == 2 and rec["finished"] is True
    assert len(warc_targets(tmp_path / "w")) == 2
    code = main(["crawl", "run", "--seeds", str(seeds), "--state", str(tmp_path / "x.db"), "--shard", "3",
                 "--shards", "3"])
    assert code == 2 and "outside" in capsys.readouterr().err
    code = main(["crawl", "run", "--seeds", str(tmp_path / "missing"), "--state", str(tmp_path / "y.db")])
    assert code == 2
    empty = tmp_path / "empty.txt"
    empty.write_text("\n# nothing\n")
    code = main(["crawl", "run", "--seeds", str(empty), "--state", str(tmp_path / "z.db")])
    assert code == 3 and "no seed URL" in capsys.readouterr().err


def test_redirects_are_archived_and_their_targets_queued(web: SynthWeb, tmp_path: Path) -> None:
    summary = crawl_run(_opts(tmp_path, web, max_depth=2), [web.url("site5.test", "/fault/redirect/2"),
                                                            web.url("site5.test", "/fault/redirect-private")])
    urls = warc_targets(tmp_path / "warc")
    paths = sorted(u.split("/", 3)[3] for u in urls)
    # each hop is its own fetch and record, one level deeper (redirect/0's links are at depth 3: not followed);
    # the hop into /private/ is robots-skipped
    assert paths == ["fault/redirect-private", "fault/redirect/0", "fault/redirect/1", "fault/redirect/2"]
    assert summary.robots_skipped == 1


def test_prefix_cannot_escape_the_output_directory(web: SynthWeb, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="prefix"):
        crawl_run(_opts(tmp_path, web, prefix="../escape"), [web.url("site6.test")])
    assert not (tmp_path.parent / "escape").exists()


@pytest.mark.parametrize("threads", [0, 2])
def test_records_encoded_on_the_loop_or_in_threads_are_whole(web: SynthWeb, tmp_path: Path, threads: int) -> None:
    summary = crawl_run(_opts(tmp_path, web, max_depth=2, fetchers=1, encode_threads=threads, warc_size=30_000),
                        [web.url("site3.test")])
    urls = warc_targets(tmp_path / "warc")  # warcio checks both digests of every response
    assert summary.finished and summary.archived > 10 and len(urls) == len(set(urls)) == summary.archived
    assert len(summary.warc_files) >= 2
    pairs = 0
    for path in (tmp_path / "warc").glob("*.warc.gz"):
        with path.open("rb") as fh:
            assert all(r.verify_block_digest() for r in FastIterator(fh, parse_http=False))
        with path.open("rb") as fh:
            for rec in FastIterator(fh, parse_http=True):
                if rec.headers.get("WARC-Type") == "response":
                    assert rec.verify_payload_digest()
                    pairs += 1
    assert pairs == summary.archived


def test_encode_threads_only_where_compression_is_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ccrawl.procs.cores", lambda: 2)
    auto = CrawlOptions(state=Path("s.db"))
    monkeypatch.setattr("ccrawl.crawl.warc.FAST_MEMBERS", True)
    assert auto.auto_encode_threads() == 0  # ISA-L: the loop encodes
    monkeypatch.setattr("ccrawl.crawl.warc.FAST_MEMBERS", False)
    assert auto.auto_encode_threads() == 2  # zlib: threads compress beside the loop
    assert CrawlOptions(state=Path("s.db"), encode_threads=3).auto_encode_threads() == 3
    with pytest.raises(UsageError, match="encode_threads"):
        CrawlOptions(state=Path("s.db"), encode_threads=-1).validate()
