"""crawl run bounds redirect chains: at most --max-redirects hops per chain, each hop one level deeper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.crawl.parts import crawl_run
from ccrawl.crawl.run import CrawlOptions
from ccrawl.errors import UsageError
from ccrawl.testing.synthweb import SynthWeb

from .test_crawl_run import warc_targets


def _opts(tmp_path: Path, web: SynthWeb, **kw: object) -> CrawlOptions:
    tmp_path.mkdir(parents=True, exist_ok=True)
    base: dict[str, object] = {"state": tmp_path / "state.db", "out": tmp_path / "warc", "delay": 0.0,
                               "workers": 4, "resolve": web.resolve, "fetchers": 1}
    base.update(kw)
    return CrawlOptions(**base)  # type: ignore[arg-type]


def _hops(urls: list[str]) -> list[int]:
    return sorted((int(u.rsplit("/", 1)[1]) for u in urls), reverse=True)


def test_an_endless_chain_at_depth_0_stops_after_the_seed_instead_of_at_the_page_budget(
        web: SynthWeb, tmp_path: Path) -> None:
    seed = web.url("site7.test", "/fault/redirect/400")
    summary = crawl_run(_opts(tmp_path, web, max_depth=0, max_pages=300), [seed])
    # the redirect target is one level deeper than the seed: --max-depth 0 keeps it out
    assert summary.fetched == 1 and summary.finished
    assert _hops(warc_targets(tmp_path / "warc")) == [400]


def test_a_redirect_target_is_one_level_deeper_for_max_depth(web: SynthWeb, tmp_path: Path) -> None:
    summary = crawl_run(_opts(tmp_path, web, max_depth=2), [web.url("site7.test", "/fault/redirect/50")])
    assert summary.finished and summary.failed == 0
    assert _hops(warc_targets(tmp_path / "warc")) == [50, 49, 48]


def test_a_chain_longer_than_max_redirects_is_a_failed_fetch_with_its_reason(web: SynthWeb, tmp_path: Path) -> None:
    summary = crawl_run(_opts(tmp_path, web, max_depth=100), [web.url("site8.test", "/fault/redirect/60")])
    # five redirects followed (60 -> 55), like crawl fetch; the sixth is refused and the fetch fails
    assert summary.finished and summary.fetched == 6
    assert summary.failed == 1 and summary.errors == {"too_many_redirects": 1}
    assert _hops(warc_targets(tmp_path / "warc")) == [60, 59, 58, 57, 56]


def test_hops_are_counted_per_chain_not_per_crawl(web: SynthWeb, tmp_path: Path) -> None:
    seeds = [web.url("site9.test", "/fault/redirect/3"), web.url("site9.test", "/fault/redirect/13")]
    summary = crawl_run(_opts(tmp_path, web, max_depth=100, max_redirects=3, same_host=True), seeds)
    # 3 -> 2 -> 1 -> 0 (a page, its links not redirects) is whole; 13 -> 10 is cut at its fourth redirect
    urls = [u for u in warc_targets(tmp_path / "warc") if "/fault/redirect/" in u]
    assert _hops(urls) == [13, 12, 11, 3, 2, 1, 0]
    assert summary.errors.get("too_many_redirects") == 1


def test_max_redirects_0_follows_none(web: SynthWeb, tmp_path: Path) -> None:
    seed = web.url("site10.test", "/fault/redirect/4")
    summary = crawl_run(_opts(tmp_path, web, max_depth=100, max_redirects=0), [seed])
    assert summary.fetched == 1 and summary.archived == 0 and summary.errors == {"too_many_redirects": 1}


def test_max_redirects_is_kept_in_bounds() -> None:
    with pytest.raises(UsageError, match="--max-redirects"):
        CrawlOptions(state=Path("x.db"), max_redirects=-1).validate()


def test_cli_max_redirects_flag_and_setting(
        web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path))
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(web.url("site11.test", "/fault/redirect/30") + "\n")

    def run(name: str, *extra: str) -> dict[str, object]:
        code = main(["crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / name), "--state",
                     str(tmp_path / f"{name}.db"), "--delay", "0s", "--max-depth", "100", "--fetchers", "1",
                     "--resolve", "*.test=127.0.0.1", "-j", "2", "-o", "json", *extra])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert "longer than --max-redirects" in out.err
        return dict(json.loads(out.out))

    assert run("flag", "--max-redirects", "2")["fetched"] == 3
    monkeypatch.setenv("CCRAWL_CRAWL_MAX_REDIRECTS", "1")
    assert run("setting")["fetched"] == 2
    assert run("both", "--max-redirects", "4")["fetched"] == 5  # the flag beats the setting
    code = main(["crawl", "run", "--seeds", str(seeds), "--state", str(tmp_path / "bad.db"), "--max-redirects", "-2"])
    err = capsys.readouterr().err
    assert code == 2 and "--max-redirects" in err and "Traceback" not in err


def test_a_state_file_written_before_redirect_hops_opens_and_resumes(web: SynthWeb, tmp_path: Path) -> None:
    import sqlite3

    # the state file's layout before redirect hops (and before the seen runs and queue segments)
    old = """
CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE seen(key BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE queue(seq INTEGER PRIMARY KEY, host TEXT NOT NULL, prio INTEGER NOT NULL, url TEXT NOT NULL,
    depth INTEGER NOT NULL, state INTEGER NOT NULL DEFAULT 0, file TEXT);
CREATE TABLE hosts(host TEXT PRIMARY KEY, next_at REAL NOT NULL DEFAULT 0, delay REAL NOT NULL DEFAULT 0,
    pending INTEGER NOT NULL DEFAULT 0, rank INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE seed_hosts(host TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE outbox(id INTEGER PRIMARY KEY, part INTEGER NOT NULL, url TEXT NOT NULL, depth INTEGER NOT NULL);
"""
    db = sqlite3.connect(tmp_path / "state.db")
    db.executescript(old)
    db.close()
    seed = web.url("site6.test", "/fault/redirect/9")
    summary = crawl_run(_opts(tmp_path, web, max_depth=100, max_redirects=1), [seed])
    assert summary.fetched == 2 and summary.errors == {"too_many_redirects": 1}
