"""The frontier on its own: admission, seen set, politeness order, bounds, persistence, locking."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl.crawl.frontier import Frontier, FrontierConfig, Item, url_key
from ccrawl.crawl.state import StateFile
from ccrawl.errors import UsageError
from ccrawl.url.canon import canonicalize
from ccrawl.url.domain import shard_of


def _frontier(tmp_path: Path, **cfg: object) -> Frontier:
    return Frontier(StateFile(tmp_path / "state.db"), FrontierConfig(**cfg))  # type: ignore[arg-type]


def _drain(f: Frontier, now: float) -> list[Item]:
    out = []
    while True:
        got = f.take(now)
        if not isinstance(got, Item):
            return out
        out.append(got)


def test_seen_keys_are_eight_bytes_of_blake3_of_the_canonical_url(tmp_path: Path) -> None:
    f = _frontier(tmp_path, host_budget=0)
    assert f.add("HTTP://Example.COM:80/a/./b?utm_source=x&id=1#frag", 0, seed=True)
    assert f.add("http://example.com/a/b?id=1", 0, seed=True)  # same canonical URL: dropped at flush
    f.flush()
    keys = [r[0] for r in f.state.db.execute("SELECT keys FROM seen_log")]
    assert keys == [url_key(canonicalize("http://example.com/a/b?id=1"))] and len(keys[0]) == 8
    assert f.admitted == 1 and f.dropped["seen"] == 1
    assert not f.add("mailto:x@example.com", 0)


def test_one_url_per_host_at_a_time_and_politeness_spacing(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=2.0, max_depth=1)
    for i in range(3):
        f.add(f"http://a.example/{i}", 0, seed=True)
        f.add(f"http://b.example/{i}", 0, seed=True)
    first = _drain(f, 100.0)
    assert sorted(i.host for i in first) == ["a.example", "b.example"]  # one per host, hosts in parallel
    for item in first:
        f.done(item, started=100.0, file=None)
    assert f.take(101.0) == pytest.approx(1.0)  # both hosts wait for their clock
    again = _drain(f, 102.0)
    assert sorted(i.host for i in again) == ["a.example", "b.example"]
    f.done(again[0], started=102.0, file=None, crawl_delay=10.0)  # Crawl-delay longer than --delay wins
    f.done(again[1], started=102.0, file=None)
    third = _drain(f, 104.0)
    assert [i.host for i in third] == [again[1].host]


def test_depth_filter_and_priority_by_depth(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=0.0, max_depth=1)
    f.add("http://a.example/deep", 1)
    f.add("http://a.example/seed", 0, seed=True)
    assert not f.add("http://a.example/too-deep", 2)
    got = f.take(0.0)
    assert isinstance(got, Item) and got.url == "http://a.example/seed"


def test_same_host_and_shard_filters(tmp_path: Path) -> None:
    f = _frontier(tmp_path, same_host=True, max_depth=1)
    f.add("http://a.example/", 0, seed=True)
    assert f.add("http://a.example/x", 1)
    assert not f.add("http://other.example/", 1) and f.dropped["host"] == 1
    g = Frontier(StateFile(tmp_path / "s2.db"), FrontierConfig(shard=1, shards=3))
    hosts = [f"www.d{i}.co.uk" for i in range(30)] + [f"x.d{i}.com" for i in range(30)]
    kept = [h for h in hosts if g.add(f"http://{h}/", 0, seed=True)]
    assert kept == [h for h in hosts if shard_of(h, 3) == 1] and 0 < len(kept) < len(hosts)
    # the key is the registered domain: every host of one site lands on one shard
    site = {g.add(f"http://{h}.example.co.uk/", 0, seed=True) for h in ("a", "b.c", "www")}
    assert len(site) == 1


def test_memory_holds_at_most_max_active_hosts(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=0.0, max_active=8, window=2)
    for h in range(50):
        for p in range(5):
            f.add(f"http://h{h}.example/{p}", 0, seed=True)
    fetched = 0
    now = 0.0
    while True:
        got = f.take(now)
        assert len(f._hosts) <= 8 and all(len(h.items) <= 2 for h in f._hosts.values())
        if got is None:
            break
        if isinstance(got, float):
            now += got
            continue
        f.done(got, started=now, file=None)
        fetched += 1
    assert fetched == 250


def test_state_survives_reopen_with_clocks_and_queue(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=5.0)
    for i in range(4):
        f.add(f"http://a.example/{i}", 0, seed=True)
    item = f.take(1000.0)
    assert isinstance(item, Item)
    f.done(item, started=1000.0, file="x.warc.gz")
    f.flush()
    f.state.close()
    state = StateFile(tmp_path / "state.db")
    assert state.recover(lambda name: name == "x.warc.gz") == (1, 0)  # sealed: forgotten for good
    g = Frontier(state, FrontierConfig(delay=5.0))
    assert g.take(1002.0) == pytest.approx(3.0)  # the politeness clock came back from disk
    rest = _drain(g, 1005.0)
    assert [i.url for i in rest] == ["http://a.example/1"]
    assert g.fetched == 1


def test_unsealed_rows_are_queued_again(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=0.0)
    f.add("http://a.example/0", 0, seed=True)
    item = f.take(0.0)
    assert isinstance(item, Item)
    f.done(item, started=0.0, file="lost.warc.gz")
    f.flush()
    f.state.close()
    state = StateFile(tmp_path / "state.db")
    assert state.recover(lambda name: False) == (0, 1)
    again = Frontier(state, FrontierConfig(delay=0.0)).take(0.0)
    assert isinstance(again, Item) and again.url == "http://a.example/0"


def test_two_processes_on_one_state_file_is_refused(tmp_path: Path) -> None:
    first = StateFile(tmp_path / "state.db")
    with pytest.raises(UsageError, match="another crawl run"):
        StateFile(tmp_path / "state.db")
    first.close()
    StateFile(tmp_path / "state.db").close()


def test_state_file_that_is_not_sqlite_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "state.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(UsageError, match="not a crawl state file"):
        StateFile(bad)


def test_hosts_ready_at_once_go_in_seed_order(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=0.0, max_active=3)
    order = ["zeta.example", "alpha.example", "mid.example", "beta.example", "omega.example"]
    for host in order:  # a rank table's order, not the alphabet's
        f.add(f"http://{host}/", 0, seed=True)
    taken, now = [], 0.0
    while (got := f.take(now)) is not None:
        if isinstance(got, float):
            now += got
            continue
        taken.append(got.host)
        f.done(got, started=now, file=None)
    assert taken == order


def test_queue_segments_hand_out_each_url_once_by_depth_then_admission(tmp_path: Path) -> None:
    f = _frontier(tmp_path, delay=0.0, max_depth=5, window=4, flush_every=10_000, host_budget=0)
    for i in range(10):
        f.add(f"http://a.example/d2/{i}", 2)
    f.flush()  # one segment at depth 2
    for i in range(7):
        f.add(f"http://a.example/d1/{i}", 1)
    f.flush()  # a later segment at depth 1: it goes first
    got = []
    now = 100.0
    while True:
        item = f.take(now)
        if not isinstance(item, Item):
            break
        got.append(item.url)
        f.done(item, started=now, file="w.warc.gz" if len(got) % 2 else None)
        if len(got) % 3 == 0:
            f.flush()  # flushes between takes: the segments' done counts move under a live window
            if len(got) == 9:
                f.add("http://a.example/d1/late", 1)
        now += 1
    first = [f"http://a.example/d1/{i}" for i in range(7)] + [f"http://a.example/d2/{i}" for i in range(10)]
    late = got.index("http://a.example/d1/late")
    assert [u for u in got if u != "http://a.example/d1/late"] == first  # each once, depth then admission
    assert 9 <= late <= 9 + 4  # the later, shallower URL jumps the queue, after what the window holds
    f.flush()
    counts = f.state.counts()
    assert counts["queued"] == 0 and counts["unsealed"] == (len(got) + 1) // 2
    assert f.state.db.execute("SELECT count(*) FROM qseg").fetchone()[0] == 0
    assert f.sealed("w.warc.gz") == counts["unsealed"] and f.state.counts()["unsealed"] == 0


def test_a_flush_waits_for_a_batch_that_grows_with_the_seen_runs(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """DRUM's batching rule: once the seen set holds keys in runs on disk, a flush waits for one buffered update
    per DISK_KEYS_PER_UPDATE keys there (so a check's keys keep sharing the runs' pages), never more than
    MAX_BATCH_FLOOR; with nothing in runs it flushes at flush_every as before. Nothing is lost either way."""
    from ccrawl.crawl import frontier as fr

    monkeypatch.setenv("CCRAWL_SEEN_MEM_KEYS", "100")
    monkeypatch.setenv("CCRAWL_SEEN_MERGE", "sync")
    monkeypatch.setattr(fr, "DISK_KEYS_PER_UPDATE", 10)
    f = _frontier(tmp_path, delay=0.0, max_depth=5, flush_every=50, host_budget=0)
    assert f._batch_floor == 0
    f.add_many([f"http://h{i % 7}.example/s{i}" for i in range(1200)], 0, seed=True)
    f.flush()
    on_disk = sum(r.count for r in f.seen.runs)
    assert on_disk >= 1100 and f._batch_floor == on_disk // 10  # ~115: more than flush_every

    def queued() -> int:
        return int(f.state.db.execute("SELECT coalesce(sum(n), 0) FROM qseg").fetchone()[0])

    before = queued()
    f.add_many([f"http://h1.example/a{i}" for i in range(60)], 1, source_host="src.example")
    f.add_many([f"http://h1.example/b{i}" for i in range(40)], 1, source_host="src.example")
    assert queued() == before  # 100 updates: past flush_every (50), under the floor (~115): still buffered
    f.add_many([f"http://h1.example/c{i}" for i in range(40)], 1, source_host="src.example")
    assert queued() == before + 140  # past the floor: one flush took all of them

    monkeypatch.setattr(fr, "MAX_BATCH_FLOOR", 30)
    f._batch_floor = f._check_floor()
    assert f._batch_floor == 30
    f.add_many([f"http://h2.example/d{i}" for i in range(49)], 1, source_host="src.example")
    assert queued() == before + 140
    f.add_many([f"http://h2.example/e{i}" for i in range(1)], 1, source_host="src.example")
    assert queued() == before + 190  # the cap leaves flush_every in charge
    f.state.close()
