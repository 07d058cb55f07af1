"""host degrees at scale: the edge tally (compiled and twin), hostile edge files through the CLI, -j."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.cli.main import main
from ccrawl.commoncrawl.edgecount import EdgeTallyPy
from ccrawl.errors import InputError
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from tests.conftest import native_or_skip


def _makers() -> list[Any]:
    """The twin, and the compiled tally unless this pass runs the twins only."""
    if accel.extensions_disabled():
        return [EdgeTallyPy]
    return [EdgeTallyPy, native_or_skip("edgecount").EdgeTally]


def _tally(make: Any, vertices: int, blocks: list[bytes], atomic: bool = False) -> tuple[Any, ...]:
    """(in, out, edges, lines, blank) or ("error", message) of one implementation over ``blocks``."""
    din, dout = np.zeros(vertices, np.uint32), np.zeros(vertices, np.uint32)
    tally = make(din, dout, atomic)
    try:
        for block in blocks:
            tally.feed(block)
        tally.finish()
    except InputError as exc:
        return ("error", str(exc))
    return din.tolist(), dout.tolist(), tally.edges, tally.lines, tally.blank


def _all(vertices: int, blocks: list[bytes], atomic: bool = False) -> tuple[Any, ...]:
    """The one answer every implementation gives (they must agree)."""
    out = [_tally(make, vertices, blocks, atomic) for make in _makers()]
    assert all(o == out[0] for o in out), out
    return out[0]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def test_compiled_tally_is_loaded_unless_disabled() -> None:
    from ccrawl.commoncrawl import edgecount

    if accel.extensions_disabled():
        assert edgecount.EdgeTally is EdgeTallyPy
    else:
        assert edgecount.EdgeTally is not EdgeTallyPy


@settings(max_examples=60, deadline=None)
@given(
    vertices=st.integers(1, 50),
    pairs=st.lists(st.tuples(st.integers(0, 49), st.integers(0, 49)), max_size=300),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
    crlf=st.booleans(),
    newline_at_end=st.booleans(),
    atomic=st.booleans(),
)
def test_degrees_equal_a_plain_count_on_random_graphs(
    vertices: int, pairs: list[tuple[int, int]], cuts: list[int], crlf: bool, newline_at_end: bool, atomic: bool,
) -> None:
    pairs = [(a % vertices, b % vertices) for a, b in pairs]
    eol = b"\r\n" if crlf else b"\n"
    text = eol.join(b"%d\t%d" % p for p in pairs) + (eol if newline_at_end and pairs else b"")
    din, dout, edges, lines, blank = _all(vertices, _split(text, cuts), atomic)
    ins, outs = Counter(b for _, b in pairs), Counter(a for a, _ in pairs)
    assert din == [ins[v] for v in range(vertices)]
    assert dout == [outs[v] for v in range(vertices)]
    assert edges == lines == len(pairs) and blank == 0


@settings(max_examples=60, deadline=None)
@given(
    degrees=st.lists(st.integers(0, 60), min_size=1, max_size=12),
    odd=st.lists(st.integers(0, 10_000), max_size=6),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
    atomic=st.booleans(),
)
def test_sorted_runs_of_one_source_count_the_same(
    degrees: list[int], odd: list[int], cuts: list[int], atomic: bool,
) -> None:
    """The compiled tally adds an out-degree once per run of lines from one source: runs cut by
    blocks, by a blank or CRLF line (the careful path) and runs of a source seen again later."""
    vertices = len(degrees)
    rng = random.Random(sum(degrees) * 31 + len(odd))
    pairs = [(a, rng.randrange(vertices)) for a, d in enumerate(degrees) for _ in range(d)]
    pairs += pairs[: len(pairs) // 3]  # the first sources again, after the others
    lines = [b"%d\t%d\n" % p for p in pairs]
    for k in sorted({o % (len(lines) + 1) for o in odd}, reverse=True):
        lines.insert(k, b"\n" if k % 2 else b"%d\t%d\r\n" % pairs[k % len(pairs)] if pairs else b"\n")
    text = b"".join(lines)
    din, dout, edges, count, blank = _all(vertices, _split(text, cuts), atomic)
    counted = [tuple(int(x) for x in line.split(b"\t")) for line in lines if line.strip()]
    ins, outs = Counter(b for _, b in counted), Counter(a for a, _ in counted)
    assert din == [ins[v] for v in range(vertices)]
    assert dout == [outs[v] for v in range(vertices)]
    assert edges == len(counted) and blank == count - edges


@settings(max_examples=200, deadline=None)
@given(text=st.binary(max_size=200), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_any_bytes_give_the_same_answer_from_both_and_never_crash(text: bytes, cuts: list[int]) -> None:
    out = _all(7, _split(text, cuts))
    if out[0] == "error":
        assert out[1].startswith("line ") and "\n" not in out[1]


@pytest.mark.parametrize(("text", "expect"), [
    (b"0\t1\nx\t2\n", "line 2: not a from<TAB>to line of vertex ids: 'x\\t2'"),
    (b"0\t1\n1\t2\t3\n", "line 2: not a from<TAB>to line"),
    (b"0 1\n", "line 1: not a from<TAB>to line"),
    (b"+1\t2\n", "line 1: not a from<TAB>to line"),
    (b"1\t\n", "line 1: not a from<TAB>to line"),
    (b"0\t1\n0\t5\n", "line 2: a vertex id is beyond the graph's 5 vertices: '0\\t5'"),
    (b"99999999999999999999999\t1\n", "line 1: a vertex id is beyond the graph's 5 vertices"),
    (b"1" * 100 + b"\n", "line 1: longer than 64 bytes"),
    (b"0\t1\n" + b"1" * 100, "line 2: longer than 64 bytes"),
])
def test_a_bad_line_is_named_by_number(text: bytes, expect: str) -> None:
    for blocks in ([text], [text[:3], text[3:]], [bytes([c]) for c in text]):
        out = _all(5, blocks)
        assert out[0] == "error" and out[1].startswith(expect), out


def test_blank_lines_are_skipped_and_counted() -> None:
    din, dout, edges, lines, blank = _all(3, [b"0\t1\n\n1\t2\r\n\r\n2\t0"])
    assert (din, dout, edges, lines, blank) == ([1, 1, 1], [1, 1, 1], 3, 5, 2)


# -- hostile edge files through the CLI --------------------------------------------------------

GOOD = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 1)]
HOSTS = ("a.example", "b.example", "c.example", "d.example", "e.example")  # e: no edges


def _gz(text: bytes) -> bytes:
    return gzip.compress(text, mtime=0)


def _edges_text(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(b"%d\t%d\n" % p for p in pairs)


_rng = random.Random(7)
RANDOM = sorted({(_rng.randrange(5), _rng.randrange(5)) for _ in range(20)})

#: release id -> edge files (bytes as served); every release has the same five vertices
HOSTILE: dict[str, list[bytes]] = {
    "good": [_gz(_edges_text(GOOD[:2])), _gz(_edges_text(GOOD[2:]))],
    "truncated": [_gz(_edges_text(GOOD))[:-12]],
    "corrupt-member": [_gz(_edges_text(GOOD[:2])) + b"\x1f\x8b\x08\x00" + bytes(40)],
    "non-numeric": [_gz(b"0\t1\n1\ttwo\n")],
    "beyond": [_gz(b"0\t1\n4\t5\n")],
    "empty-file": [_gz(_edges_text(GOOD)), b""],
    "empty-gzip": [_gz(_edges_text(GOOD)), _gz(b"")],
    "blank-lines": [_gz(b"\n" + _edges_text(GOOD) + b"\n\n")],
    "random": [_gz(_edges_text(RANDOM[i::3])) for i in range(3)],
}


def _write_release(root: Path, rid: str, files: list[bytes], nodes: int | None) -> dict[str, Any]:
    base = f"projects/hyperlinkgraph/{rid}/host"
    vertex_rel = f"{base}/vertices/part-00000.txt.gz"
    rev = sorted(".".join(reversed(h.split("."))) for h in HOSTS)
    (root / base / "vertices").mkdir(parents=True, exist_ok=True)
    (root / vertex_rel).write_bytes(_gz(b"".join(b"%d\t%s\n" % (i, r.encode()) for i, r in enumerate(rev))))
    edge_rels = []
    (root / base / "edges").mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(files):
        rel = f"{base}/edges/part-{i:05d}.txt.gz"
        (root / rel).write_bytes(data)
        edge_rels.append(rel)
    (root / f"{base}/{rid}-host-vertices.paths.gz").write_bytes(_gz((vertex_rel + "\n").encode()))
    (root / f"{base}/{rid}-host-edges.paths.gz").write_bytes(_gz("".join(p + "\n" for p in edge_rels).encode()))
    entry: dict[str, Any] = {"id": rid, "crawls": [], "location": f"s3://commoncrawl/projects/hyperlinkgraph/{rid}/"}
    if nodes is not None:
        entry["stats"] = {"host": {"nodes": nodes, "arcs": 0}}
    return entry


@pytest.fixture(scope="module")
def hostile_cc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    root = tmp_path_factory.mktemp("fakecc-hostile-graph")
    with FakeCCServer(root, SiteSpec(records=2, files=1)) as server:
        info = [_write_release(root, rid, files, len(HOSTS)) for rid, files in HOSTILE.items()]
        info.append(_write_release(root, "unlisted-count", HOSTILE["good"], None))
        (root / "graphinfo.json").write_text(json.dumps(info))
        yield server


@pytest.fixture
def hostile_env(hostile_cc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCCServer:
    monkeypatch.setenv("CCRAWL_COLLINFO_ENDPOINT", f"{hostile_cc.url}/collinfo.json")
    monkeypatch.setenv("CCRAWL_DATA_ENDPOINT", hostile_cc.url)
    monkeypatch.setenv("CCRAWL_GLOBAL_RATE", "0")
    monkeypatch.setenv("CCRAWL_BACKOFF", "10ms")
    monkeypatch.setenv("CCRAWL_RETRIES", "0")
    monkeypatch.setenv("CCRAWL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "no-config"))
    return hostile_cc


def _degrees(capsys: pytest.CaptureFixture[str], rid: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    code = main(["host", "degrees", "--graph", rid, "-o", "jsonl", *extra])
    out = capsys.readouterr()
    rows = {r["host"]: r for r in map(json.loads, out.out.splitlines())}
    return code, rows, out.err


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("rid", ["good", "empty-gzip", "blank-lines", "unlisted-count"])
def test_degrees_of_a_release(hostile_env: FakeCCServer, capsys: pytest.CaptureFixture[str], rid: str,
                              jobs: str) -> None:
    code, rows, err = _degrees(capsys, rid, "-j", jobs)
    assert code == 0, err
    rev = sorted(".".join(reversed(h.split("."))) for h in HOSTS)
    host_of = {i: ".".join(reversed(r.split("."))) for i, r in enumerate(rev)}
    ins, outs = Counter(host_of[b] for _, b in GOOD), Counter(host_of[a] for a, _ in GOOD)
    assert {h: (r["in_degree"], r["out_degree"]) for h, r in rows.items()} == {
        h: (ins[h], outs[h]) for h in HOSTS}
    assert f"{len(GOOD)} edges" in err and "Traceback" not in err
    if rid == "blank-lines":
        assert "3 blank lines skipped" in err
    if rid == "unlisted-count":
        assert "counting the vertex files" in err


@pytest.mark.parametrize(("rid", "message"), [
    ("truncated", "part-00000.txt.gz: the gzip stream ends mid-member"),
    ("corrupt-member", "part-00000.txt.gz: not gzip data"),
    ("non-numeric", "part-00000.txt.gz: line 2: not a from<TAB>to line of vertex ids: '1\\ttwo'"),
    ("beyond", "part-00000.txt.gz: line 2: a vertex id is beyond the graph's 5 vertices: '4\\t5'"),
    ("empty-file", "part-00001.txt.gz: the file is empty (0 bytes), not gzip"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_hostile_edge_file_is_one_line_and_exit_1(
    hostile_env: FakeCCServer, capsys: pytest.CaptureFixture[str], rid: str, message: str, jobs: str,
) -> None:
    code, rows, err = _degrees(capsys, rid, "-j", jobs)
    assert code == 1 and not rows
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err, err


def test_enrich_degrees_count_with_the_arrays(hostile_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    # the release has no rank table: enrich's degree phase is called through the operation directly
    from ccrawl.net.options import ClientOptions
    from ccrawl.ops.webgraph import _add_degrees

    records = [{"host_rev": "example.a"}, {"host_rev": "example.c"}, {"host_rev": "example.nowhere"}]
    options = {"collinfo_endpoint": f"{hostile_env.url}/collinfo.json", "data_endpoint": hostile_env.url,
               "global_rate": 0, "no_cache": True}
    _add_degrees(records, "good", 2, ClientOptions.parse(options), lambda msg: None)
    assert records[0]["in_degree"] == 1 and records[0]["out_degree"] == 2
    assert records[1]["in_degree"] == 2 and records[1]["out_degree"] == 1
    assert "in_degree" not in records[2]


def test_random_multi_file_graph_with_jobs(hostile_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, rows, err = _degrees(capsys, "random", "-j", "2")
    assert code == 0, err
    rev = sorted(".".join(reversed(h.split("."))) for h in HOSTS)
    by_id = {".".join(reversed(r.split("."))): i for i, r in enumerate(rev)}
    for host, rec in rows.items():
        assert rec["in_degree"] == sum(1 for _, b in RANDOM if b == by_id[host])
        assert rec["out_degree"] == sum(1 for a, _ in RANDOM if a == by_id[host])


def test_threads_are_one_unless_j_is_given(hostile_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    code, _, err = _degrees(capsys, "good")
    assert code == 0 and "with 1 thread(s)" in err  # not the workers setting's default of 8
    code, _, err = _degrees(capsys, "good", "-j", "2")
    assert code == 0 and f"with {min(2, os.cpu_count() or 1)} thread(s)" in err
