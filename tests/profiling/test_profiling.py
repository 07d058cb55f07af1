"""Profiles: pprof encoding read back field by field, a real py-spy + memray session, the diff."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from ccrawl.profiling.diff import diff_runs
from ccrawl.profiling.pprof import collapsed_to_pprof, parse_collapsed
from ccrawl.profiling.session import ProfileSession, heap_profile


def _decode(buf: bytes) -> list[tuple[int, int, bytes | int]]:
    """A generic protobuf wire decoder: (field, wiretype, value) triples."""
    out, i = [], 0

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while True:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    while i < len(buf):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, wire, varint()))
        elif wire == 2:
            n = varint()
            out.append((number, wire, buf[i : i + n]))
            i += n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
    return out


def _packed(buf: bytes) -> list[int]:
    vals, i = [], 0
    while i < len(buf):
        shift = result = 0
        while True:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        vals.append(result)
    return vals


LINES = [
    "<module> (run.py:10);main (run.py:5);fetch (net.py:20) 7\n",
    "<module> (run.py:10);main (run.py:5);parse (html.py:3) 3\n",
    "garbage line\n",
]


def test_collapsed_lines_parse_and_malformed_ones_are_skipped() -> None:
    parsed = list(parse_collapsed(LINES))
    assert parsed[0] == (["<module> (run.py:10)", "main (run.py:5)", "fetch (net.py:20)"], 7)
    assert len(parsed) == 2


def test_pprof_encodes_every_sample_leaf_first_with_functions_and_strings() -> None:
    fields = _decode(gzip.decompress(collapsed_to_pprof(LINES)))
    strings = [v.decode() for n, _, v in fields if n == 6]  # type: ignore[union-attr]
    assert strings[0] == ""
    samples = [_decode(v) for n, _, v in fields if n == 2]  # type: ignore[arg-type]
    assert sorted(_packed(s[1][2])[0] for s in samples) == [3, 7]  # type: ignore[arg-type]
    functions = {}
    for n, _, v in fields:
        if n == 5:
            f = dict((k, val) for k, _, val in _decode(v))  # type: ignore[arg-type]
            functions[f[1]] = strings[f[2]]
    locations = {}
    for n, _, v in fields:
        if n == 4:
            loc = _decode(v)  # type: ignore[arg-type]
            line = dict((k, val) for k, _, val in _decode(loc[1][2]))  # type: ignore[arg-type]
            locations[loc[0][2]] = functions[line[1]]
    first = [locations[i] for i in _packed(samples[0][0][2])]  # type: ignore[arg-type]
    assert first == ["fetch", "main", "<module>"]


def _busy(seconds: float) -> None:
    with heap_profile("worker-0"):
        data = [bytes(1000) for _ in range(2000)]
        end = time.time() + seconds
        while time.time() < end:
            sum(range(20_000))
        del data


def test_a_session_profiles_a_child_by_role_and_writes_a_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)  # restored after the test
    session = ProfileSession(tmp_path, "run1")
    child = multiprocessing.get_context("fork").Process(target=_busy, args=(2.0,))
    child.start()
    assert child.pid is not None
    session.watch(child.pid, "worker-0")
    child.join()
    manifest = session.finish()
    assert os.environ.get("ARROW_DEFAULT_MEMORY_POOL") == "system"
    role = next(r for r in manifest["roles"] if r["role"] == "worker-0")
    assert role["pid"] == child.pid
    assert set(role["files"]) >= {"run1.worker-0.collapsed", "run1.worker-0.pb.gz", "run1.worker-0.memray"}
    collapsed = (tmp_path / "run1.worker-0.collapsed").read_text()
    assert "_busy" in collapsed
    assert json.loads((tmp_path / "run1.manifest.json").read_text())["name"] == "run1"


def test_diff_ranks_the_functions_whose_share_moved(tmp_path: Path) -> None:
    (tmp_path / "a.fetch-0.collapsed").write_text("main;fetch 80\nmain;parse 20\n")
    (tmp_path / "b.fetch-0.collapsed").write_text("main;fetch 50\nmain;parse 50\n")
    rows = list(diff_runs(tmp_path / "a", tmp_path / "b"))
    assert rows[0]["role"] == "fetch-0" and rows[0]["delta"] in (-0.3, 0.3)
    parse = next(r for r in rows if r["function"] == "parse")
    assert (parse["self_a"], parse["self_b"], parse["delta"]) == (0.2, 0.5, 0.3)
    assert parse["total_a"] == 0.2
