"""``domains publish|recount|diff`` against the fake Common Crawl's web graph and a local hub / the fake Hub."""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.commoncrawl.webgraph import release_sort_key, reverse_host
from ccrawl.datasets.domain_table import DOMAIN_COLUMNS, RankTableReader, cut_shards, parse_rows, unreverse
from ccrawl.datasets.publish_domains import DomainsPublisher, DomainsPublishOptions, DomainsPublishStats, shard_path
from ccrawl.errors import InputError, UsageError
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.webgraph import DOMAIN_LAPSED, ROOT
from ccrawl.testing.fakehub import planted

from .conftest import cli_env, client_options, run_cli

QUIET = OpContext(notice=lambda _m: None)  # the operations' lines, unwanted here

REPO = "mirror/domains"
NEWEST = "cc-main-2025-26-dec-jan-feb"  # the newest release with a domain table
OLDEST = "cc-main-2025-sep-oct-nov"


def publish(server: FakeCCServer, tmp: Path, graph: str = "",
            **kw: Any) -> tuple[list[dict[str, Any]], DomainsPublishStats]:
    stats = DomainsPublishStats()
    args: dict[str, Any] = {"repo": REPO, "hub": str(tmp / "hub"), "staging": str(tmp / "staging"), "shard_rows": 7,
                            "commit_every": 2, "workers": 2}
    args.update(kw)
    args["ctx"] = OpContext.of(client_options(server, tmp), notice=args.pop("notice", lambda _m: None))
    return list(ops.get("domains.publish")(graph=graph, stats=stats, **args)), stats


def source_rows(server: FakeCCServer, release: str) -> list[dict[str, Any]]:
    """The release's domain table parsed line by line in Python: the reference the shards must equal."""
    path = server.site.root / ROOT / release / "domain" / f"{release}-domain-ranks.txt.gz"
    out = []
    for line in gzip.decompress(path.read_bytes()).decode().splitlines()[1:]:
        c = line.split("\t")
        out.append({"harmonic_pos": int(c[0]), "harmonic_val": float(c[1]), "pagerank_pos": int(c[2]),
                    "pagerank_val": float(c[3]), "domain": reverse_host(c[4]), "n_hosts": int(c[5])})
    return out


def _added_by_commit(repo: LocalRepo) -> dict[str, int]:
    """For each path ever in the repo, how many commits of the history brought it in or changed it."""
    out: dict[str, int] = {}
    before: dict[str, object] = {}
    for rec in repo.history():
        for path, meta in rec["files"].items():
            if before.get(path) != meta:
                out[path] = out.get(path, 0) + 1
        before = rec["files"]
    return out


def test_unreverse_is_reverse_host_for_every_shape_of_name() -> None:
    import pyarrow as pa

    rng = random.Random(7)
    labels = ["com", "example", "www", "co", "uk", "", "xn--bcher-kva", "a", "bücher"]  # ASCII and not
    names = ["", ".", "com", "com.example", ".com.", "uk.co.example.www", "a..b"]
    names += [".".join(rng.choice(labels) for _ in range(rng.randint(1, 6))) for _ in range(500)]
    got = unreverse(pa.array(names)).to_pylist()
    assert got == [reverse_host(n) for n in names]
    sliced = pa.array(names).slice(3, 50)  # an offset into the buffers, as a sliced chunk has
    assert unreverse(sliced).to_pylist() == [reverse_host(n) for n in names[3:53]]


def test_reader_checks_the_header_cuts_whole_lines_and_parse_blames_a_bad_row() -> None:
    with pytest.raises(InputError, match="not a domain rank table"):
        RankTableReader("t").feed(b"#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\n1\t2\t3\t4\tcom.a\n")
    header = "\t".join(["#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev", "#n_hosts"])
    with pytest.raises(InputError, match="does not parse"):
        parse_rows(b"1\t2.0\t3\t4.0\tcom.a\tmany\n", "t")
    reader = RankTableReader("t", skip=2)
    runs = reader.feed(f"{header}\n1\t1.0\t1\t1.0\tcom.a\t1\n\n2\t1.0\t2\t1.0\tcom.b\t1\n3\t1".encode())
    runs += reader.feed(b".0\t3\t1.0\tcom.c\t2\n\n4\t1.0\t4\t1.0\tcom.d\t1")  # blank lines; no final newline
    runs += reader.finish()
    assert reader.rows_seen == 4
    shards = list(cut_shards(iter(runs), 1, first_index=2))
    assert [(i, n) for i, _, n in shards] == [(2, 1), (3, 1)]  # the two rows after the two skipped
    assert [parse_rows(text, "t").to_pylist() for _, text, _ in shards] == [
        [{"harmonic_pos": 3, "harmonic_val": 1.0, "pagerank_pos": 3, "pagerank_val": 1.0, "domain": "c.com",
          "n_hosts": 2}],
        [{"harmonic_pos": 4, "harmonic_val": 1.0, "pagerank_pos": 4, "pagerank_val": 1.0, "domain": "d.com",
          "n_hosts": 1}]]


def test_a_row_that_does_not_parse_stops_the_run(tmp_path: Path) -> None:
    header = "\t".join(["#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev", "#n_hosts"])
    text = f"{header}\n1\t1.0\t1\t1.0\tcom.a\t1\n2\tnot-a-number\t2\t1.0\tcom.b\t1\n".encode()
    repo = LocalRepo(tmp_path / "hub", REPO)
    pub = DomainsPublisher(DomainsPublishOptions(repo_id=REPO, shard_rows=1, staging=tmp_path / "st"), repo, OLDEST,
                           "t.txt.gz", lambda: iter([text]))
    with pytest.raises(InputError, match="does not parse"):
        list(pub.run())


def test_release_ids_sort_by_date() -> None:
    ids = ["cc-main-2026-mar-apr-may", "cc-main-2025-sep-oct-nov", "cc-main-2025-26-dec-jan-feb"]
    assert sorted(ids, key=release_sort_key) == [OLDEST, NEWEST, "cc-main-2026-mar-apr-may"]


def test_publish_streams_the_ranks_in_order_unreversed(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    import duckdb
    import pyarrow.parquet as pq

    records, stats = publish(mirrorcc, tmp_path)
    want = source_rows(mirrorcc, NEWEST)
    n_shards = -(-len(want) // 7)
    assert sorted(r["shard"] for r in records) == [shard_path(NEWEST, i) for i in range(n_shards)]
    assert {r["action"] for r in records} == {"committed"} and stats.complete and stats.commits == 3
    repo = LocalRepo(tmp_path / "hub", REPO)
    snap = repo.snapshot_dir()
    got: list[dict[str, Any]] = []
    for i in range(n_shards):
        table = pq.read_table(snap / shard_path(NEWEST, i))
        assert table.column_names == [n for n, _ in DOMAIN_COLUMNS]
        assert table.num_rows == (7 if i < n_shards - 1 else len(want) - 7 * (n_shards - 1))
        got += table.to_pylist()
    assert got == want  # every row, in rank order, the key un-reversed
    assert got[0]["domain"] == "facebook.com"
    ledger = list(csv.DictReader(io.StringIO((snap / "stats.csv").read_text())))
    assert ledger == [{"release": NEWEST, "shards": str(n_shards), "rows": str(len(want)),
                       "bytes": str(sum(f.size for f in repo.list_files("data"))), "shard_rows": "7",
                       "complete": "true"}]
    card = (snap / "README.md").read_text()
    front = card.split("---")[1]
    assert f'path: "data/{NEWEST}/*.parquet"' in front and ".csv" not in front and "README" not in front
    n = duckdb.connect().execute(f"SELECT count(*), min(harmonic_pos) FROM '{snap}/data/{NEWEST}/*.parquet'"
                                 ).fetchone()
    assert n == (len(want), 1)
    assert not list((tmp_path / "staging").rglob("*.parquet"))  # deleted once committed
    again, stats2 = publish(mirrorcc, tmp_path)
    assert again == [] and stats2.complete and stats2.rows_read == 0  # complete: not even streamed


def _arm_after_lookup(server: FakeCCServer, release: str, times: int) -> Any:
    """A notice hook arming a truncating fault on the table once the run has looked it up (the lookup's
    own one-byte probe is not the stream under test)."""
    def notice(msg: str) -> None:
        if "streaming" in msg:
            server.faults.add("truncate", path=rf"{release}-domain-ranks\.txt\.gz$", times=times)
    return notice


def test_the_domain_mirror_loads_with_datasets_by_its_card(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="the datasets library is an optional extra")
    publish(mirrorcc, tmp_path, graph=OLDEST)
    publish(mirrorcc, tmp_path, graph=NEWEST)
    snap = LocalRepo(tmp_path / "hub", REPO).snapshot_dir()
    ds = datasets.load_dataset(str(snap), split="train", cache_dir=str(tmp_path / "hfcache"))  # the default config
    assert ds.column_names == [n for n, _ in DOMAIN_COLUMNS]
    assert ds["domain"] == [r["domain"] for r in source_rows(mirrorcc, NEWEST)]  # the newest release, in order
    old = datasets.load_dataset(str(snap), OLDEST, split="train", cache_dir=str(tmp_path / "hfcache"))
    assert len(old) == len(source_rows(mirrorcc, OLDEST))


def test_a_dropped_stream_is_picked_up_and_one_that_keeps_dropping_exits_75(mirrorcc: FakeCCServer,
                                                                             tmp_path: Path) -> None:
    from ccrawl.errors import TemporaryFailure

    mirrorcc.faults.clear()
    try:
        _, stats = publish(mirrorcc, tmp_path / "a", graph=OLDEST, notice=_arm_after_lookup(mirrorcc, OLDEST, 1))
        gets = [r.range for r in mirrorcc.faults.log
                if r.path.endswith(f"{OLDEST}-domain-ranks.txt.gz") and r.range != "bytes=0-0"]
        assert gets[0] is None and gets[1] is not None and gets[1] != "bytes=0-"  # picked up where it stopped
        assert stats.complete and stats.rows == len(source_rows(mirrorcc, OLDEST))
        assert stats.commits == -(-stats.rows // 7 // 2)  # the last shard's commit marks it complete
        with pytest.raises(TemporaryFailure, match="run again to resume"):
            publish(mirrorcc, tmp_path / "b", graph=OLDEST, notice=_arm_after_lookup(mirrorcc, OLDEST, -1))
    finally:
        mirrorcc.faults.clear()


def _blocks(raw: bytes, *, break_after: int = 0) -> Any:
    """The decompressed table in 64 KiB blocks; with ``break_after`` the stream dies after that many."""
    from ccrawl.errors import TemporaryFailure

    data = gzip.decompress(raw)

    def blocks() -> Any:
        for n, i in enumerate(range(0, len(data), 65536)):
            if break_after and n == break_after:
                raise TemporaryFailure("the connection dropped (planted)")
            yield data[i:i + 65536]
    return blocks


def _publisher(tmp_path: Path, repo: LocalRepo, blocks: Any) -> DomainsPublisher:
    opts = DomainsPublishOptions(repo_id=REPO, shard_rows=5_000, commit_every=1, workers=2, staging=tmp_path / "st")
    return DomainsPublisher(opts, repo, OLDEST, "t.txt.gz", blocks)


def _broken_run(tmp_path: Path, *, break_after: int) -> tuple[LocalRepo, bytes, DomainsPublishOptions]:
    """A 60,000-row publish whose stream dies after ``break_after`` blocks: the repo, the table, the options."""
    from ccrawl.errors import TemporaryFailure

    repo = LocalRepo(tmp_path / "hub", REPO)
    raw = _big_table(60_000, 3)
    first = _publisher(tmp_path, repo, _blocks(raw, break_after=break_after))
    with pytest.raises(TemporaryFailure):
        list(first.run())
    return repo, raw, first.opts


def test_a_broken_run_resumes_without_a_gap_or_a_second_upload(tmp_path: Path) -> None:
    repo, raw, opts = _broken_run(tmp_path, break_after=30)
    partial = {f.path for f in repo.list_files("data")}
    assert len(partial) >= 2  # shards landed before the stream broke
    second = _publisher(tmp_path, repo, _blocks(raw))
    records = list(second.run())
    # the published lead (the shards from 0 up to the first one missing: with two workers they can
    # land out of order, 0, 2, 3 without 1) is counted past, not parsed; a shard published after
    # the gap is parsed again but not uploaded again; one sealed but not committed is reused
    lead = 0
    while shard_path(OLDEST, lead) in partial:
        lead += 1
    assert second.stats.rows_skipped == 5_000 * lead and second.stats.reused <= opts.workers
    assert {r["shard"] for r in records if r["action"] == "committed"}.isdisjoint(partial)
    want = 60_000 - len(range(0, 60_000, 97))
    shards = sorted(f.path for f in repo.list_files("data"))
    assert shards == [shard_path(OLDEST, i) for i in range(-(-want // 5_000))]
    assert all(n == 1 for p, n in _added_by_commit(repo).items() if p.startswith("data/"))  # none uploaded twice
    import duckdb

    snap = repo.snapshot_dir()
    got = duckdb.connect().execute(f"SELECT count(*), count(DISTINCT harmonic_pos), min(harmonic_pos) "
                                   f"FROM '{snap}/data/{OLDEST}/*.parquet'").fetchone()
    assert got == (want, want, 2)  # no gap, no duplicate (the table starts at rank 2: rank 1 is dropped)
    row = next(csv.DictReader(io.StringIO(repo.read_text("stats.csv") or "")))
    assert (row["rows"], row["complete"]) == (str(want), "true")
    with pytest.raises(UsageError, match="--shard-rows 5000"):
        list(DomainsPublisher(DomainsPublishOptions(repo_id=REPO, shard_rows=7, staging=tmp_path / "st"), repo,
                              OLDEST, "t.txt.gz", _blocks(raw)).run())


def test_no_push_stages_commits_and_keep_keeps(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    records, stats = publish(mirrorcc, tmp_path, no_push=True)
    assert {r["action"] for r in records} == {"staged"} and stats.commits == 0
    assert not LocalRepo(tmp_path / "hub", REPO).exists_repo()
    commits = sorted((tmp_path / "staging" / "commits").glob("commit-*/commit.json"))
    assert commits and all(json.loads(c.read_text())["repo"] == REPO for c in commits)
    _, kept = publish(mirrorcc, tmp_path / "k", keep=True)
    assert kept.committed == len(list((tmp_path / "k" / "staging").rglob("*.parquet")))


def test_recount_repairs_a_drifted_ledger(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    publish(mirrorcc, tmp_path)
    repo = LocalRepo(tmp_path / "hub", REPO)
    planted.ledger_drift(repo, NEWEST, rows=40, key="release")
    env = cli_env(mirrorcc, tmp_path)
    args = ["domains", "recount", "--repo", REPO, "--hub", str(tmp_path / "hub"), "-o", "jsonl"]
    dry = run_cli([*args, "--no-push"], env)
    assert dry.returncode == 0, dry.stderr.decode()
    assert [json.loads(x) for x in dry.stdout.decode().splitlines()] == [
        {"release": NEWEST, "field": "rows", "was": len(source_rows(mirrorcc, NEWEST)) + 40,
         "now": len(source_rows(mirrorcc, NEWEST))}]
    done = run_cli(args, env)
    assert done.returncode == 0 and b"repaired 1" in done.stderr
    again = run_cli(args, env)
    assert again.returncode == 0 and again.stdout == b"" and b"nothing to repair" in again.stderr


def test_diff_counts_added_removed_shared_and_writes_the_added(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    publish(mirrorcc, tmp_path, graph=OLDEST)
    publish(mirrorcc, tmp_path, graph=NEWEST)
    old = {r["domain"] for r in source_rows(mirrorcc, OLDEST)}
    new = [r["domain"] for r in source_rows(mirrorcc, NEWEST)]
    env = cli_env(mirrorcc, tmp_path)
    out = run_cli(["domains", "diff", "--repo", REPO, "--hub", str(tmp_path / "hub"), "--added-out",
                   str(tmp_path / "added.txt"), "--workers", "3", "-o", "json"], env)
    assert out.returncode == 0, out.stderr.decode()
    rec = json.loads(out.stdout)
    assert (rec["from"], rec["to"]) == (OLDEST, NEWEST)  # the two newest complete releases, by date
    assert rec["added"] == len([d for d in new if d not in old]) == 1
    assert rec["removed"] == len(DOMAIN_LAPSED[OLDEST]) == 1
    assert rec["shared"] == len(set(new) & old) and rec["from_domains"] == len(old)
    assert (tmp_path / "added.txt").read_text().splitlines() == [d for d in new if d not in old]
    back = run_cli(["domains", "diff", "--repo", REPO, "--hub", str(tmp_path / "hub"), "--from", NEWEST, "--to",
                    OLDEST, "-o", "json"], env)
    assert back.returncode == 0 and json.loads(back.stdout)["added"] == 1
    bad = run_cli(["domains", "diff", "--repo", REPO, "--hub", str(tmp_path / "hub"), "--from", "cc-main-1999-jan"],
                  env)
    assert bad.returncode == 2 and b"not published" in bad.stderr and b"Traceback" not in bad.stderr


def _big_table(n: int, seed: int, drop: int = 0) -> bytes:
    """A domain rank table of ``n`` rows whose rank fields are noisy (so they weigh more than the names)."""
    rng = random.Random(seed)
    lines = ["\t".join(["#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev", "#n_hosts"])]
    for i in range(n):
        if i % 97 == drop:  # each seed's table lacks a different 1 in 97
            continue
        lines.append(f"{i + 1}\t{rng.random() * 1e7}\t{rng.randrange(n)}\t{rng.random() / 1e3}\tcom.d{i}\t"
                     f"{rng.randrange(1, 9999)}")
    return gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)


def test_diff_reads_only_the_domain_column(tmp_path: Path) -> None:
    repo = LocalRepo(tmp_path / "hub", REPO)
    for release, drop in ((OLDEST, 1), (NEWEST, 2)):
        raw = _big_table(60_000, 1, drop)
        opts = DomainsPublishOptions(repo_id=REPO, shard_rows=20_000, staging=tmp_path / "st", workers=2)
        pub = DomainsPublisher(opts, repo, release, f"{release}.txt.gz",
                               lambda raw=raw: iter([gzip.decompress(raw)[i:i + 65536]
                                                     for i in range(0, len(gzip.decompress(raw)), 65536)]))
        list(pub.run())
        assert pub.stats.complete and pub.stats.rows == 60_000 - 619
    got = next(iter(ops.get("domains.diff")(repo=REPO, hub=str(tmp_path / "hub"), ctx=QUIET)))
    assert got["added"] == got["removed"] == 619 and got["shared"] == 60_000 - 2 * 619
    assert got["bytes_read"] < 0.6 * got["dataset_bytes"]  # the rank columns were never fetched


def test_recrawl_run_reads_the_published_domains(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    """``recrawl run --from domains`` (a local hub via $CCRAWL_HUB) walks the newest release we published."""
    import pyarrow.parquet as pq

    repo = "open-index/ccrawl-domains"
    publish(mirrorcc, tmp_path, graph=OLDEST, repo=repo)
    publish(mirrorcc, tmp_path, graph=NEWEST, repo=repo)
    env = cli_env(mirrorcc, tmp_path) | {"CCRAWL_HUB": str(tmp_path / "hub")}
    out = tmp_path / "captures"
    # every name resolves to loopback and a private address is refused: rows of "skip", and no packet leaves
    done = run_cli(["recrawl", "run", "--from", "domains", "--out", str(out), "--state", str(tmp_path / "st.json"),
                    "--resolve", "*=127.0.0.1", "--delay", "0", "--workers", "4", "--progress", "none",
                    "--no-extract"], env | {"CCRAWL_HUB": str(tmp_path / "hub")}, timeout=180)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    rows = [r for f in sorted(out.rglob("*.parquet")) for r in pq.read_table(f, columns=["url", "host"]).to_pylist()]
    assert sorted(r["host"] for r in rows) == sorted(r["domain"] for r in source_rows(mirrorcc, NEWEST))
    assert all(r["url"] == f"https://{r['host']}/" or r["url"] == f"http://{r['host']}/" for r in rows)


def test_cli_publish_no_push_rows_and_low_disk_exits_75(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    env = cli_env(mirrorcc, tmp_path)
    base = ["domains", "publish", "--graph", OLDEST, "--repo", REPO, "--hub", str(tmp_path / "hub"),
            "--shard-rows", "10", "--staging", str(tmp_path / "st")]
    staged = run_cli([*base, "--no-push", "-o", "jsonl"], env)
    assert staged.returncode == 0, staged.stderr.decode()
    rows = [json.loads(line) for line in staged.stdout.decode().splitlines()]
    assert [r["action"] for r in rows] == ["staged"] * 4 and [r["first_pos"] for r in rows] == [1, 11, 21, 31]
    assert b"staged 4 with 33 rows" in staged.stderr and not (tmp_path / "hub").exists()
    low = run_cli([*base, "--min-free-gb", "1e9", "--max-stall", "1s"], env)
    assert low.returncode == 75 and b"free disk under" in low.stderr and b"Traceback" not in low.stderr
    bad = run_cli([*base, "--shard-rows", "0"], env)
    assert bad.returncode == 2 and b"--shard-rows" in bad.stderr


def test_sigkill_then_resume_no_gap_no_double_upload(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    """A real ``domains publish`` killed with SIGKILL after its first commit, then run again to the end."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import duckdb

    env = dict(os.environ)
    env.pop("CCRAWL_HUB", None)
    env.update(cli_env(mirrorcc, tmp_path))
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    hub = tmp_path / "hub"
    cmd = [sys.executable, "-m", "ccrawl", "domains", "publish", "--graph", OLDEST, "--repo", REPO, "--hub", str(hub),
           "--staging", str(tmp_path / "st"), "--shard-rows", "1", "--commit-every", "1", "--workers", "1",
           "-o", "jsonl"]
    repo = LocalRepo(hub, REPO)
    want = source_rows(mirrorcc, OLDEST)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if repo.exists_repo() and repo.head() and repo.list_files("data"):
                break
            time.sleep(0.01)
        else:
            pytest.fail("the first commit never landed")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    first = {f.path for f in repo.list_files("data")}
    assert 1 <= len(first) < len(want), "the kill must land mid-run for this test to mean anything"
    done = subprocess.run(cmd, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert b"resuming" in done.stderr
    rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert {r["shard"] for r in rows if r["action"] == "exists"} == first
    assert sorted(f.path for f in repo.list_files("data")) == [shard_path(OLDEST, i) for i in range(len(want))]
    assert all(n == 1 for p, n in _added_by_commit(repo).items() if p.startswith("data/"))  # none uploaded twice
    snap = repo.snapshot_dir()
    got = duckdb.connect().execute(f"SELECT list(domain ORDER BY harmonic_pos) FROM '{snap}/data/{OLDEST}/*.parquet'"
                                   ).fetchone()
    assert got is not None and got[0] == [r["domain"] for r in want]  # no gap, no duplicate, in rank order
    row = next(csv.DictReader(io.StringIO((snap / "stats.csv").read_text())))
    assert (row["rows"], row["shards"], row["complete"]) == (str(len(want)), str(len(want)), "true")


def test_a_run_that_fails_leaves_no_shard_write_running_past_its_staging_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resume in the same process once lost a shard: the failed run's writer, still busy on a daemon
    thread after the lock was released, renamed the shard's .tmp from under the resume's writer."""
    import time

    from ccrawl.datasets import publish_domains

    real = publish_domains.write_shard
    started: list[str] = []
    finished: list[str] = []

    def slow_write(job: Any, source: str) -> Any:
        started.append(job.shard)
        time.sleep(0.4)  # still writing when the stream breaks
        out = real(job, source)
        finished.append(job.shard)
        return out

    monkeypatch.setattr(publish_domains, "write_shard", slow_write)
    repo, raw, _ = _broken_run(tmp_path, break_after=12)
    # every write the run started had ended when its error reached the caller (one was in flight)
    assert started and sorted(finished) == sorted(started)
    monkeypatch.setattr(publish_domains, "write_shard", real)
    second = _publisher(tmp_path, repo, _blocks(raw))
    list(second.run())
    want = 60_000 - len(range(0, 60_000, 97))
    assert sorted(f.path for f in repo.list_files("data")) == [shard_path(OLDEST, i) for i in range(-(-want // 5_000))]
    assert second.stats.failed == 0 and second.stats.complete
