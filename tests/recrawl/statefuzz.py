"""Hostile recrawl checkpoints for property tests and the long fuzz run (hypothesis: a dev dependency).

:func:`check_load` is the property: whatever bytes sit in ``--state``, :func:`load_checkpoint`
either refuses them with a :class:`~ccrawl.errors.CcrawlError` (a one-line message, no traceback)
or returns a checkpoint whose every file path lies inside ``--out``, whose position lies inside
the work list and whose ``done`` mark sits at its end. Used by
``tests/recrawl/test_checkpoint_fuzz.py`` (bounded) and ``bench/fuzz_checkpoint.py`` (long).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ccrawl.errors import CcrawlError
from ccrawl.recrawl.checkpoint import Checkpoint, load_checkpoint

WORKLIST: dict[str, Any] = {
    "source": "/data/wl", "column": "url", "parts": [["part-0.parquet", 10], ["part-1.parquet", 7]],
}
ROWS = [5, 3]

_NAMES = [
    "ccrawl-x-w0-00000.warc.gz.tmp", "ccrawl-x-w0-00000.parquet.tmp", "ccrawl-x-w0-00000.parquet",
    "../victim.tmp", "../../etc/passwd.tmp", "/etc/passwd", "/tmp/victim.warc.gz.tmp", "", ".", "..", "a/../../b.tmp",
    "link/escape.tmp", "link", "sub/ok.tmp", "\x00.tmp", "out/../../x.tmp", "./ccrawl.tmp", "~/x.tmp",
    "x" * 300 + ".tmp", "loop/a.tmp", "ccrawl-\u00e9.tmp", "C:\\x.tmp", "//server/share.tmp",
]
_ints = st.one_of(st.integers(-3, 12), st.sampled_from([2**31, 2**63, -(2**63), 10**30, 10**6]))
_scalars = st.one_of(
    st.none(), st.booleans(), _ints, st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(_NAMES), st.text(max_size=12),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
_paths = st.one_of(st.sampled_from(_NAMES), st.text(max_size=20))


def valid_checkpoint() -> dict[str, Any]:
    cp = Checkpoint(worklist=WORKLIST, part=0, row=2, fetched=2, durable_above=[[0, 3, 5]], out="/nowhere")
    raw = cp.to_json()
    raw["warc_files"] = {"ccrawl-x-w0-00000.warc.gz.tmp": 10}
    raw["pending_renames"] = [["ccrawl-x-w0-00001.parquet.tmp", "ccrawl-x-w0-00001.parquet"]]
    return raw


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A valid checkpoint with a few fields replaced by hostile values of the right or wrong shape."""
    raw = valid_checkpoint()
    keys = [*raw, "extra"]
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4)):
        choice = draw(st.integers(0, 6))
        if choice == 0:
            raw[key] = draw(_json)
        elif choice == 1:
            raw.pop(key, None)
        elif key == "warc_files":
            raw[key] = draw(st.dictionaries(_paths, st.one_of(_ints, _scalars), max_size=3))
        elif key == "pending_renames":
            raw[key] = draw(st.lists(st.lists(_paths, min_size=0, max_size=3), max_size=3))
        elif key == "durable_above":
            raw[key] = draw(st.lists(st.lists(_ints, min_size=2, max_size=4), max_size=4))
        elif key in ("part", "row", "shard", "shards", "fetched", "version"):
            raw[key] = draw(st.one_of(_ints, _scalars))
        elif key == "done":
            raw[key] = draw(st.one_of(st.booleans(), _scalars))
        else:
            raw[key] = draw(_json)
    if draw(st.booleans()):
        raw["part"], raw["row"] = draw(st.sampled_from([(2, 0), (1, 3), (0, 5), (1, 4), (2, 1), (3, 0)]))
    return raw


_prefixes = st.sampled_from(["", "./", "../", "/tmp/", "link/", "loop/", "sub/", "sub/../", "sub/../../",
                              "out/", "/", "//", "link/../"])
_stems = st.sampled_from(["ccrawl-x-w0-00000.warc.gz", "victim", "..", ".", "", "link", "x" * 255])


@st.composite
def hostile_paths(draw: st.DrawFn) -> dict[str, Any]:
    """A valid checkpoint, version 1 or 2, whose file names try to escape ``--out``."""
    raw = valid_checkpoint()
    raw["version"] = draw(st.sampled_from([1, 2]))
    name = draw(_prefixes) + draw(_stems)
    raw["warc_files"] = {name + ".tmp": draw(st.integers(0, 100))} if draw(st.booleans()) else {}
    other = draw(_prefixes) + draw(_stems)
    raw["pending_renames"] = [[other + ".tmp", other]] if draw(st.booleans()) else []
    return raw


def documents() -> st.SearchStrategy[bytes]:
    """Bytes for ``--state``: mostly mutated checkpoints, some arbitrary JSON, some arbitrary bytes."""
    as_json = st.one_of(mutated(), hostile_paths(), mutated(), hostile_paths(), _json).map(
        lambda v: json.dumps(v).encode())
    deep = st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n)
    return st.one_of(as_json, as_json, as_json, st.binary(max_size=200), deep)


def prepare_out(root: Path) -> Path:
    """``root/out`` with traps: a symlink to a directory outside it and a symlink loop."""
    out = root / "out"
    if not out.exists():
        out.mkdir(parents=True)
        (root / "outside").mkdir(exist_ok=True)
        (out / "link").symlink_to(root / "outside")
        (out / "loop").symlink_to(out / "loop")
        (out / "sub").mkdir()
    return out


def check_load(state: Path, out: Path, data: bytes) -> str:
    """The property; returns ``"accepted"`` or ``"refused"``, raises AssertionError when it breaks."""
    state.write_bytes(data)
    try:
        cp = load_checkpoint(state, worklist=WORKLIST, shard=0, shards=1, out=str(out), rows_per_part=ROWS)
    except CcrawlError as exc:
        message = str(exc)
        assert message and "\n" not in message, f"refusal is not one line: {message!r}"
        return "refused"
    assert cp is not None
    real_out = out.resolve()
    for path in [*cp.warc_files, *(p for pair in cp.pending_renames for p in pair)]:
        resolved = Path(path).resolve()
        assert real_out in resolved.parents, f"accepted a path outside --out: {path!r}"
    assert all(isinstance(v, int) and v >= 0 for v in cp.warc_files.values())
    at_end = (cp.part, cp.row) == (len(ROWS), 0)
    assert at_end or (0 <= cp.part < len(ROWS) and 0 <= cp.row <= ROWS[cp.part]), (cp.part, cp.row)
    assert not cp.done or at_end
    for part, first, end in cp.durable_above:
        assert 0 <= part < len(ROWS) and 0 <= first < end <= ROWS[part]
    assert not math.isnan(cp.fetched) and cp.fetched >= 0
    return "accepted"
