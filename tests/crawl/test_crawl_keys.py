"""The frontier's batch path: the kernels (compiled and pure-Python twins give identical output, and the
blake3 in C gives the ``blake3`` package's digest), and batch admission (``add_many``: canonicalise,
hash, filter, seen check and trap budgets over a whole flush) giving what one URL at a time gives."""

from __future__ import annotations

import random
from pathlib import Path

import blake3
import numpy as np
import pytest

from ccrawl import accel
from ccrawl.crawl.frontier import Frontier, FrontierConfig, _cumcount, _edge_key, _host_of, owners, place, url_key
from ccrawl.crawl.keys import join_lines_py, keys_hosts_py, pair_keys_py
from ccrawl.crawl.run import load_seeds
from ccrawl.crawl.state import StateFile
from ccrawl.url.canon import canonicalize
from ccrawl.url.domain import shard_key

native = accel.native("crawlkeys")
needs_native = pytest.mark.skipif(native is None, reason="the compiled crawlkeys module is not built (or disabled)")


def _urls(rng: random.Random, n: int) -> list[str | None]:
    """Canonical-looking URLs of every length up to past blake3's 1,024-byte chunk, non-ASCII text,
    hosts with ports and no path, nulls and a string without ``://``."""
    out: list[str | None] = []
    for i in range(n):
        kind = i % 9
        host = f"h{rng.randrange(40)}.example{rng.randrange(3)}.com"
        if kind == 0:
            out.append(None)
        elif kind == 1:
            out.append(f"http://{host}?q={i}")
        elif kind == 2:
            out.append(f"https://{host}:8443/" + "x" * rng.randrange(900, 1200))
        elif kind == 3:
            out.append(f"http://{host}/caf\u00e9/{i}/\U0001f600")
        elif kind == 4:
            out.append("no scheme here" if i % 2 else "")
        else:
            out.append(f"http://{host}/p/{i}" + "y" * rng.randrange(0, 140))
    return out


@needs_native
def test_the_c_blake3_is_the_packages_at_every_length_of_one_chunk() -> None:
    assert native is not None
    rng = random.Random(1)
    for n in range(0, 1025):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert native.key_of(data) == int.from_bytes(blake3.blake3(data).digest(length=8), "little"), n
    assert native.key_of(b"z" * 1025) is None


@needs_native
def test_keys_and_hosts_compiled_and_twin_agree() -> None:
    assert native is not None
    urls = _urls(random.Random(2), 3000)
    keys, hosts = native.keys_hosts(urls)
    tkeys, thosts = keys_hosts_py(urls)
    assert keys.tolist() == tkeys.tolist() and hosts.to_pylist() == thosts.to_pylist()
    for u, k, h in zip(urls, keys.tolist(), hosts.to_pylist(), strict=True):
        if u is None:
            assert k == 0 and h is None
            continue
        assert k.to_bytes(8, "little") == url_key(u)
        assert h == (_host_of(u) if "://" in u else None)
    assert native.keys_hosts(urls, False)[1] is None and keys_hosts_py(urls, False)[1] is None


@needs_native
def test_segment_bodies_compiled_and_twin_agree() -> None:
    assert native is not None
    rng = random.Random(3)
    urls = [u for u in _urls(rng, 500) if u is not None]
    order = np.array(rng.sample(range(len(urls)), len(urls)), dtype=np.int64)
    bounds = np.unique(np.array([0, len(urls), *rng.sample(range(1, len(urls)), 40)], dtype=np.int64))
    hops = np.array([rng.choice([0, 0, 0, 1, 12]) for _ in urls], dtype=np.int64)
    got = native.join_lines(urls, order, bounds, hops)
    assert got == join_lines_py(urls, order, bounds, hops)
    a, b = int(bounds[0]), int(bounds[1])
    assert got[0] == "\n".join(urls[r] + (f"\t{hops[r]}" if hops[r] else "") for r in order[a:b].tolist()).encode()
    with pytest.raises(ValueError):
        native.join_lines(urls, order, bounds, hops[:-1])


@needs_native
def test_edge_keys_compiled_and_twin_agree_with_the_edge_strings() -> None:
    assert native is not None
    left = ["", "src.example", "x" * 1100, "d\u00e9j\u00e0.fr"]
    right = ["a.example", "b.c.example", "y" * 30]
    li = np.array([0, 1, 2, 3, 1, 0], dtype=np.int64)
    ri = np.array([0, 1, 2, 0, 2, 1], dtype=np.int64)
    got = native.pair_keys(b"\x00edge h ", left, li, right, ri)
    assert got.tolist() == pair_keys_py(b"\x00edge h ", left, li, right, ri).tolist()
    want = [int.from_bytes(url_key(_edge_key(left[a], right[b], "h")), "little") for a, b in zip(li, ri, strict=True)]
    assert got.tolist() == want


def test_cumcount_counts_earlier_members_of_each_group() -> None:
    g = np.array([3, 1, 3, 3, 0, 1, 7], dtype=np.int64)
    assert _cumcount(g).tolist() == [0, 0, 1, 2, 0, 1, 0]
    assert _cumcount(np.zeros(0, dtype=np.int64)).tolist() == []


def _frontier(path: Path, **cfg: int | bool) -> Frontier:
    return Frontier(StateFile(path), FrontierConfig(flush_every=10**9, **cfg))  # type: ignore[arg-type]


def _picture(f: Frontier) -> tuple[object, ...]:
    db = f.state.db
    hosts = db.execute("SELECT host, pending, rank, admitted, indeg FROM hosts ORDER BY host").fetchall()
    return (f.state.waiting(), hosts,
            db.execute("SELECT domain, admitted, indeg FROM domains ORDER BY domain").fetchall(),
            sorted(db.execute("SELECT host FROM seed_hosts").fetchall()), dict(f.dropped), f.admitted, f.seen.count)


def _pages(rng: random.Random, n_pages: int) -> list[tuple[str | None, int, list[str]]]:
    """(source host or None for seeds, depth, URLs): repeats, bad URLs, hosts over three registered domains."""
    hosts = [f"{p}.d{d}.example.com" for p in ("a", "b", "www") for d in range(3)] + ["solo.org", "127.0.0.1:8080"]
    pages: list[tuple[str | None, int, list[str]]] = []
    for i in range(n_pages):
        seed = i % 7 == 0
        urls = []
        for _ in range(rng.randrange(0, 30)):
            r = rng.random()
            if r < 0.05:
                urls.append("mailto:nobody@example.com")
            elif r < 0.08:
                urls.append("http://")
            else:
                urls.append(f"HTTP://{rng.choice(hosts)}/p/{rng.randrange(60)}?utm_source=x#f")
        source = None if seed else rng.choice([*hosts[:-1], "other.net", "d0.example.com"])
        pages.append((source, 0 if seed else rng.choice([1, 1, 2, 3]), urls))
    return pages


@pytest.mark.parametrize("budgets", [(0, 0), (2, 3), (4, 9)])
@pytest.mark.parametrize("same_host", [False, True])
def test_a_batch_admits_what_one_url_at_a_time_admits(tmp_path: Path, budgets: tuple[int, int],
                                                       same_host: bool) -> None:
    """The same pages through ``add`` one URL at a time and through ``add_many``, flushed at the same
    points: the same queue, host and domain rows (ranks, budgets, in-degrees), drops and seen set."""
    rng = random.Random(f"{budgets}{same_host}")
    pages = _pages(rng, 120)
    cfg = {"host_budget": budgets[0], "domain_budget": budgets[1], "max_depth": 2, "same_host": same_host}
    one = _frontier(tmp_path / "one.db", **cfg)
    many = _frontier(tmp_path / "many.db", **cfg)
    for i, (source, depth, urls) in enumerate(pages):
        src = shard_key(source) if source is not None else None
        for u in urls:
            one.add(u, depth, seed=source is None, source=src)
        many.add_many(urls, depth, seed=source is None, source_host=source)
        if i % 13 == 12:
            one.flush()
            many.flush()
    one.flush()
    many.flush()
    assert _picture(one) == _picture(many)
    assert many.admitted > 0 and (budgets[0] == 0 or many.dropped["trap"] > 0)
    one.state.close()
    many.state.close()


def _sequential(batches: list[list[tuple[str, int, str | None]]], hb: int, dbud: int) -> tuple[list[str], int, int]:
    """The trap budgets as the frontier applied them before batching: a batch's edges first, then its URLs
    one at a time (seen or repeated: dropped; a link over its host's or domain's budget: dropped unseen)."""
    seen: set[str] = set()
    edges: set[tuple[str, str, str]] = set()
    host: dict[str, list[int]] = {}
    dom: dict[str, list[int]] = {}
    admitted: list[str] = []
    trap = repeat = 0
    for batch in batches:
        for url, depth, src in batch:
            h = _host_of(url)
            d = shard_key(h)
            s = "" if depth == 0 else src
            if s is not None and s != d:
                for kind, target, table in (("h", h, host), ("d", d, dom)):
                    if (s, target, kind) not in edges:
                        edges.add((s, target, kind))
                        table.setdefault(target, [0, 0])[1] += 1
        here: set[str] = set()
        for url, depth, _ in batch:
            if url in seen or url in here:
                repeat += 1
                here.add(url)
                continue
            here.add(url)
            h = _host_of(url)
            hr = host.setdefault(h, [0, 0])
            dr = dom.setdefault(shard_key(h), [0, 0])
            if depth > 0 and (hr[0] >= hb * (1 + hr[1]) or dr[0] >= dbud * (1 + dr[1])):
                trap += 1
                continue
            hr[0] += 1
            dr[0] += 1
            seen.add(url)
            admitted.append(url)
    return admitted, trap, repeat


@pytest.mark.parametrize("seed", range(4))
def test_batch_budgets_match_the_one_at_a_time_rule(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    hb, dbud = rng.choice([(1, 2), (2, 3), (3, 4), (5, 5)])
    f = _frontier(tmp_path / "s.db", host_budget=hb, domain_budget=dbud, max_depth=3)
    batches = []
    for _ in range(6):
        batch = []
        for source, depth, urls in _pages(rng, 25):
            good = []
            for u in urls:
                try:
                    good.append(canonicalize(u))
                except Exception:
                    continue
            src = shard_key(source) if source is not None else None
            batch += [(u, depth, src) for u in good]
            f.add_many(good, depth, seed=source is None, source_host=source)
        f.flush()
        batches.append(batch)
    admitted, trap, repeat = _sequential(batches, hb, dbud)
    queued = [u for _, u, _, _ in f.state.waiting()]
    assert sorted(queued) == sorted(admitted) and len(queued) == len(set(queued))
    assert f.dropped["trap"] == trap > 0 and f.dropped["seen"] == repeat
    f.state.close()


def test_partitions_route_a_batch_as_they_route_one_url(tmp_path: Path) -> None:
    urls = [f"http://h{i % 50}.site{i % 17}.example/p{i}" for i in range(600)] + ["mailto:x@y"]
    one = _frontier(tmp_path / "one.db", parts=3, part=1, shards=2, shard=1, host_budget=0)
    many = _frontier(tmp_path / "many.db", parts=3, part=1, shards=2, shard=1, host_budget=0)
    for u in urls:
        one.add(u, 0, seed=True)
    many.add_many(urls, 0, seed=True)
    many.flush()
    one.flush()
    outbox = "SELECT part, url, depth, hops FROM outbox ORDER BY part, url"
    assert one.state.db.execute(outbox).fetchall() == many.state.db.execute(outbox).fetchall() != []
    assert _picture(one) == _picture(many) and one.routed == many.routed > 0
    assert many.dropped["shard"] > 0 and many.dropped["url"] == 1
    # load_seeds splits a seed list between partitions by the same rule
    fronts = [_frontier(tmp_path / f"p{p}.db", parts=3, part=p, host_budget=0) for p in range(3)]
    load_seeds(fronts, iter(urls))
    for p, f in enumerate(fronts):
        got = sorted(u for _, u, _, _ in f.state.waiting())
        assert got == sorted(canonicalize(u) for u in urls[:-1] if place(_host_of(canonicalize(u)), 1, 3)[1] == p)
        assert not f._routed and f.state.db.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0
    assert fronts[0].dropped["url"] == 1
    assert owners(urls, 1, 3).tolist()[-1] == -1
    for f in (one, many, *fronts):
        f.state.close()
