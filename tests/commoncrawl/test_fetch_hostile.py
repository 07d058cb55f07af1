"""fetch against hostile locations and records: a range past the end of a file, a compression bomb."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

import pytest

from ccrawl.ops.commoncrawl import cc_fetch
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from tests.warc.hostile import bomb_record, measured


def _one_file(fakecc: FakeCCServer) -> tuple[list[dict[str, Any]], int]:
    name = fakecc.site.captures[0]["filename"]
    caps = sorted((c for c in fakecc.site.captures if c["filename"] == name), key=lambda c: int(c["offset"]))
    return caps, (fakecc.site.root / name).stat().st_size


def _past_end(cap: dict[str, Any], size: int) -> dict[str, Any]:
    """The last record of the file, with a length running 5000 bytes past the end."""
    return {**cap, "url": "http://past.example/", "length": str(size - int(cap["offset"]) + 5000)}


@pytest.mark.parametrize("batch", [False, True], ids=["one-at-a-time", "batch"])
def test_a_range_past_the_end_of_a_file_is_one_bad_record_not_a_dead_run(fakecc: FakeCCServer, batch: bool) -> None:
    caps, size = _one_file(fakecc)
    bad = _past_end(caps[-1], size)
    notes: list[str] = []
    started = time.monotonic()
    rows = list(cc_fetch([*caps[:-1], bad], batch=batch, ctx=OpContext.of(fakecc.client_options(retries=5, backoff=1),
                                                                          notice=notes.append)))
    took = time.monotonic() - started
    # Every good record of the file, the ones read in the same GET as the bad one included.
    assert [r["url"] for r in rows] == [c["url"] for c in caps[:-1]]
    (line,) = [n for n in notes if "past.example" in n or f"@{bad['offset']}" in n]
    assert f"the file ends at byte {size}" in line
    assert took < 5  # no retries with a backoff of 1 s: a short read at the end of a file is final
    assert len(fakecc.faults.requests(r"\.warc\.gz$")) == (1 if batch else len(caps))


def test_a_range_starting_past_the_end_is_one_bad_record(fakecc: FakeCCServer) -> None:
    caps, size = _one_file(fakecc)
    beyond = {**caps[0], "offset": str(size + 10), "length": "100"}
    notes: list[str] = []
    rows = list(cc_fetch([beyond, caps[0]], ctx=OpContext.of(fakecc.client_options(retries=5, backoff=1),
                                                             notice=notes.append)))
    assert [r["url"] for r in rows] == [caps[0]["url"]] and len(notes) == 1 and "416" in notes[0]


def test_cli_fetch_past_the_end_goes_on_and_does_not_say_network(fakecc: FakeCCServer, tmp_path: Path) -> None:
    caps, size = _one_file(fakecc)
    lines = "".join(json.dumps(c) + "\n" for c in [caps[0], _past_end(caps[-1], size), caps[1]])
    env = {"CCRAWL_DATA_ENDPOINT": fakecc.url, "CCRAWL_GLOBAL_RATE": "0", "CCRAWL_BACKOFF": "1s",
           "CCRAWL_CONFIG_DIR": str(tmp_path / "cfg"), "CCRAWL_DATA_DIR": str(tmp_path / "data")}
    for extra in ([], ["--batch"]):
        code, out, err, _ = measured(["fetch", "-", "--meta", "-o", "jsonl", *extra], env, lines)
        assert code != 8 and "network" not in err
        assert [json.loads(x)["url"] for x in out.splitlines()] == [caps[0]["url"], caps[1]["url"]]
        assert f"the file ends at byte {size}" in err


def test_fetch_text_of_a_bomb_keeps_memory_bounded_and_notes_the_cut(fakecc: FakeCCServer, tmp_path: Path) -> None:
    name = "crawl-data/CC-BOMB/segments/1/warc/bomb.warc.gz"
    path = fakecc.site.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = gzip.compress(bomb_record(512), mtime=0)
    path.write_bytes(data)
    env = {"CCRAWL_DATA_ENDPOINT": fakecc.url, "CCRAWL_GLOBAL_RATE": "0",
           "CCRAWL_CONFIG_DIR": str(tmp_path / "cfg"), "CCRAWL_DATA_DIR": str(tmp_path / "data")}
    args = ["fetch", "--file", name, "--offset", "0", "--length", str(len(data)), "--text", "-o", "jsonl"]
    code, out, err, peak_mb = measured(args, env)
    assert code == 0, err
    (row,) = [json.loads(x) for x in out.splitlines()]
    assert "decoded body cut at 10485760 bytes" in row["note"] and "cut at 10485760 bytes" in err
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"


def _warc_requests(fakecc: FakeCCServer) -> list[Any]:
    return [r for r in fakecc.faults.log if r.path.endswith(".warc.gz")]


@pytest.mark.parametrize("batch", [False, True], ids=["one-at-a-time", "batch"])
def test_a_location_over_the_record_cap_is_refused_before_any_request(fakecc: FakeCCServer, batch: bool) -> None:
    from ccrawl import ops
    from ccrawl.errors import UsageError

    good = fakecc.site.captures[0]
    huge = {
        "warc_filename": good["filename"],
        "warc_record_offset": int(good["offset"]),
        "warc_record_length": 3 << 30,  # 3 GB: would be read whole into memory
    }
    fakecc.faults.clear()
    with pytest.raises(UsageError, match=r"over the 64 MiB cap \(MAX_RECORD_LENGTH") as caught:
        list(ops.get("cc.fetch")(locations=[good, huge], batch=batch, ctx=OpContext.of(fakecc.client_options())))
    assert "\n" not in str(caught.value) and str(3 << 30) in str(caught.value)
    assert _warc_requests(fakecc) == []  # not even the good location's


def test_the_cap_is_a_keyword_of_the_engine_and_bounds_every_planned_request(fakecc: FakeCCServer) -> None:
    from ccrawl.commoncrawl.fetch import MAX_RECORD_LENGTH, fetch_batch, fetch_each
    from ccrawl.commoncrawl.records import Location, location_from
    from ccrawl.errors import UsageError
    from ccrawl.net.client import iterate

    caps = [location_from(c) for c in fakecc.site.captures]
    longest = max(loc.length for loc in caps)
    options = fakecc.client_options()
    for bad in (Location(caps[0].filename, -1, 10), Location(caps[0].filename, 0, -5)):
        with pytest.raises(UsageError, match="offset must be 0 or more and the length positive"):
            list(iterate(lambda cc, bad=bad: fetch_each(cc, [caps[0], bad]), **options))
    with pytest.raises(UsageError, match=rf"over the {longest - 1}-byte cap"):
        list(iterate(lambda cc: fetch_batch(cc, caps, max_length=longest - 1, max_span=longest - 1), **options))
    # a max-span over the cap would let one coalesced GET read more than any record may
    with pytest.raises(UsageError, match="--max-span"):
        list(iterate(lambda cc: fetch_batch(cc, caps, max_span=MAX_RECORD_LENGTH + 1), **options))
    fakecc.faults.clear()
    got = list(iterate(lambda cc: fetch_batch(cc, caps, max_length=longest, max_span=longest, gap=1 << 20), **options))
    assert len(got) == len(caps) and all(r.error is None for r in got)
    for request in _warc_requests(fakecc):
        first, last = request.range.removeprefix("bytes=").split("-")
        assert int(last) - int(first) + 1 <= longest
