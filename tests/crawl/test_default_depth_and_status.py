"""``crawl run`` discovers by default (issue #37, item 6): without ``--max-depth`` it follows a seed's
redirect and links on to depth 3, and says so; ``crawl status --state`` shows a real frontier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.crawl.run import DEFAULT_MAX_DEPTH
from ccrawl.testing.synthweb import SynthWeb


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args)) or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _crawl(tmp_path: Path, web: SynthWeb, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    seeds = tmp_path / "seeds.txt"
    # a seed that redirects first, as http -> https does: the target is one level deeper
    seeds.write_text(f"# one seed\n{web.url('site3.test', '/fault/redirect/1')}\n")
    return _run(capsys, "crawl", "run", "--seeds", str(seeds), "--state", str(tmp_path / "state.db"),
                "--out", str(tmp_path / "warc"), "--delay", "0s", "--resolve", "*.test=127.0.0.1", "-j", "8",
                "--fetchers", "1", "-o", "json", *extra)


def test_without_max_depth_a_crawl_follows_the_seed_redirect_and_its_links_and_says_its_limit(
    web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from warcio.archiveiterator import ArchiveIterator

    code, out, err = _crawl(tmp_path, web, capsys)
    assert code == 0, err
    assert DEFAULT_MAX_DEPTH == 3
    assert "crawl run: depth limit 3 (default; --max-depth N to change, 0 = seeds only), links followed to any " \
           "host" in err
    record = json.loads(out)
    assert record["max_depth"] == 3 and record["finished"]
    urls = []
    for path in sorted((tmp_path / "warc").glob("*.warc.gz")):
        with path.open("rb") as fh:
            urls += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                     if r.rec_type == "response"]
    assert any(u.endswith("/fault/redirect/0") for u in urls)  # the redirect was followed
    assert record["archived"] > 10 and len({u.split("/")[2] for u in urls}) > 1  # and links beyond it


def test_an_explicit_max_depth_is_named_as_given(web: SynthWeb, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _crawl(tmp_path, web, capsys, "--max-depth", "0", "--same-host")
    assert code == 0, err
    assert "crawl run: depth limit 0 (--max-depth), links followed to the seeds' hosts" in err
    assert json.loads(out)["fetched"] == 1


def test_help_says_the_default_depth(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "crawl", "run", "--help")
    assert code == 0
    assert "[3: a seed, its redirect and links two levels on; 0 = the seeds only]" in " ".join(out.split())


def test_crawl_status_shows_the_frontier_of_a_stopped_crawl(
    web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _crawl(tmp_path, web, capsys, "--max-pages", "6")
    assert code == 0, err
    run = json.loads(out)
    assert not run["finished"] and run["queued"] > 0
    state = tmp_path / "state.db"
    code, out, err = _run(capsys, "crawl", "status", "--state", str(state), "-o", "json")
    assert code == 0 and err == ""
    st = json.loads(out)
    assert st["state"] == str(state) and st["parts"] == 1 and st["shard"] == "0/1" and st["seeds_loaded"]
    assert st["fetched"] == run["total_fetched"] and st["queued"] == run["queued"] and st["seen"] == run["seen"]
    assert st["unsealed"] == 0 and st["outbox"] == 0
    assert st["seen"] == st["fetched"] + st["queued"]  # every URL ever admitted is done or waiting
    assert 1 <= st["hosts_pending"] <= st["hosts"]
    assert sum(st["queued_by_depth"].values()) == st["queued"]
    assert set(st["queued_by_depth"]) <= {"1", "2", "3"}
    assert st["next_due"].endswith("Z") and st["next_due_in_s"] >= 0
    # the table names the same figures
    code, out, _ = _run(capsys, "crawl", "status", "--state", str(state))
    assert code == 0 and "queued" in out and str(st["seen"]) in out
    # and the crawl resumes from it untouched: status is read-only
    code, out, err = _crawl(tmp_path, web, capsys)
    assert code == 0 and json.loads(out)["finished"], err


def test_crawl_status_of_a_missing_or_foreign_file_is_one_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "crawl", "status", "--state", str(tmp_path / "none.db"))
    assert code == 2 and err.strip().splitlines() == [
        f"ccrawl: --state {tmp_path / 'none.db'}: no such state file (crawl run --state creates it)"]
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all, just text " * 100)
    code, _, err = _run(capsys, "crawl", "status", "--state", str(junk))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "not a crawl state file" in lines[0]
    assert not (tmp_path / "none.db").exists()
    code, _, err = _run(capsys, "crawl", "status", "--state", str(junk), "--throughput", "5")
    assert code == 2 and "does not apply to --state" in err


def test_a_state_file_from_a_newer_layout_is_refused_in_one_line(
    web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    code, _, err = _crawl(tmp_path, web, capsys, "--max-pages", "2")
    assert code == 0, err
    db = sqlite3.connect(tmp_path / "state.db")
    db.execute("UPDATE meta SET v='99' WHERE k='seen_format'")
    db.commit()
    db.close()
    code, _, err = _run(capsys, "crawl", "status", "--state", str(tmp_path / "state.db"))
    assert code == 2 and "written by a newer ccrawl" in err and len(err.strip().splitlines()) == 1
    code, _, err = _crawl(tmp_path, web, capsys)
    errors = [line for line in err.splitlines() if line.startswith("ccrawl:")]  # after the depth notice
    assert code == 2 and "Traceback" not in err and len(errors) == 1 and "written by a newer ccrawl" in errors[0]
