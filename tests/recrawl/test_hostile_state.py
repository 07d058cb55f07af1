"""A checkpoint is input, not gospel: paths outside ``--out``, positions past the work list and
unknown versions are refused with a clear message, and a resume from another working directory
finds the files the checkpoint names (issue #13, item 4)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ccrawl.errors import CcrawlError, UsageError
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from ccrawl.recrawl.worklist import open_worklist
from ccrawl.testing.synthweb import SynthWeb


def _base_state(wl: Path, state: Path, **fields: Any) -> dict[str, Any]:
    """A valid checkpoint for ``wl`` written by the real code, then ``fields`` patched into its JSON."""
    identity = open_worklist(str(wl), column="url").identity()
    save_checkpoint(state, Checkpoint(worklist=identity))
    raw = json.loads(state.read_text())
    raw.update(fields)
    state.write_text(json.dumps(raw))
    return raw


def _run(wl: Path, out: Path, state: Path, web: SynthWeb, **kw: Any) -> Any:
    return run_recrawl(str(wl), column="url", out=str(out), state=str(state), delay=0, workers=8, timeout=5,
                       resolve=web.resolve, **kw)


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_warc_files_entry_outside_out_is_refused_and_the_file_is_untouched(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, where: str
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:4], parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    out.mkdir()
    victim = tmp_path / "victim.warc.gz.tmp"
    victim.write_bytes(b"precious" * 100)
    name = str(victim) if where == "absolute" else "../victim.warc.gz.tmp"
    _base_state(wl, state, version=2, warc_files={name: 0})
    with pytest.raises(UsageError, match="outside --out"):
        _run(wl, out, state, web, format="warc")
    assert victim.read_bytes() == b"precious" * 100


def test_pending_rename_outside_out_is_refused(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:4], parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    out.mkdir()
    victim = tmp_path / "victim.parquet.tmp"
    victim.write_bytes(b"x")
    _base_state(wl, state, version=2, pending_renames=[[str(victim), str(tmp_path / "victim.parquet")]])
    with pytest.raises(UsageError, match="outside --out"):
        _run(wl, out, state, web)
    assert victim.exists() and not (tmp_path / "victim.parquet").exists()


def test_symlink_inside_out_pointing_outside_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "link").symlink_to(tmp_path / "elsewhere")
    wl = {"source": "/x", "column": "url", "parts": [["p.parquet", 1]]}
    state = tmp_path / "s.json"
    save_checkpoint(state, Checkpoint(worklist=wl))
    raw = json.loads(state.read_text())
    raw["warc_files"] = {"link/a.warc.gz.tmp": 5}
    state.write_text(json.dumps(raw))
    with pytest.raises(UsageError, match="outside --out"):
        load_checkpoint(state, worklist=wl, shard=0, shards=1, out=str(out))


@pytest.mark.parametrize(("part", "row"), [(99, 0), (0, 1_000_000), (-1, 0), (0, -3), (1, 5)])
def test_position_past_the_work_list_is_refused(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, part: int, row: int
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:6], parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    _base_state(wl, state, part=part, row=row, done=True)
    with pytest.raises(UsageError, match=r"past the end of the work list|not a position"):
        _run(wl, out, state, web)


def test_done_flag_before_the_end_is_refused(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:6], parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    _base_state(wl, state, part=0, row=2, done=True)
    with pytest.raises(UsageError, match="done"):
        _run(wl, out, state, web)


def test_durable_range_past_the_part_is_refused(tmp_path: Path) -> None:
    wl = {"source": "/x", "column": "url", "parts": [["p.parquet", 1]]}
    state = tmp_path / "s.json"
    save_checkpoint(state, Checkpoint(worklist=wl, durable_above=[[0, 1, 10**12]]))
    with pytest.raises(UsageError, match="durable_above"):
        load_checkpoint(state, worklist=wl, shard=0, shards=1, rows_per_part=[10])


def test_unknown_version_is_refused(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:4], parts=1)
    state = tmp_path / "s.json"
    _base_state(wl, state, version=99)
    with pytest.raises(UsageError, match="version 99"):
        _run(wl, tmp_path / "out", state, web)


def test_state_that_is_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "s.json").mkdir()
    with pytest.raises(UsageError, match="--state"):
        load_checkpoint(tmp_path / "s.json", worklist={}, shard=0, shards=1)


def test_warc_durable_length_longer_than_the_file_is_refused(tmp_path: Path) -> None:
    """Truncating 'up' to a longer length would pad a WARC with zeros: refuse instead."""
    from ccrawl.recrawl.recovery import recover_outputs

    out = tmp_path / "out"
    out.mkdir()
    f = out / "ccrawl-x-w0-00000.warc.gz.tmp"
    f.write_bytes(b"abc")
    cp = Checkpoint(worklist={}, warc_files={str(f): 1000})
    with pytest.raises(CcrawlError, match="1000"):
        recover_outputs(out, "ccrawl", cp)
    assert f.read_bytes() == b"abc"


def test_version_1_checkpoint_with_cwd_relative_paths_still_loads(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    wl = {"source": "/x", "column": "url", "parts": [["p.parquet", 1]]}
    state = tmp_path / "s.json"
    save_checkpoint(state, Checkpoint(worklist=wl))
    raw = json.loads(state.read_text())
    raw.update(version=1, warc_files={"out/a-w0.warc.gz.tmp": 7},
               pending_renames=[["out/b.parquet.tmp", "out/b.parquet"]])
    state.write_text(json.dumps(raw))
    cp = load_checkpoint(state, worklist=wl, shard=0, shards=1, out="out")
    assert cp is not None
    assert [os.path.realpath(p) for p in cp.warc_files] == [str((out / "a-w0.warc.gz.tmp").resolve())]
    assert cp.pending_renames == [[str((out / "b.parquet.tmp").resolve()), str((out / "b.parquet").resolve())]]


def test_resume_from_another_working_directory_keeps_a_sealed_shard(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any, monkeypatch: Any
) -> None:
    """Killed between the checkpoint that covers a sealed shard and its rename; resumed from elsewhere."""
    import ccrawl.recrawl.pipeline as pipeline

    urls = web.page_urls()[:60]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    state = tmp_path / "s.json"

    def killed(tmp: str, final: str) -> None:
        raise KeyboardInterrupt  # the kill lands after the checkpoint, before the rename

    monkeypatch.setattr(pipeline, "finalize", killed)
    monkeypatch.chdir(first)
    with pytest.raises(KeyboardInterrupt):
        run_recrawl(str(wl), column="url", out="out", state=str(state), delay=0, workers=8, timeout=5,
                    resolve=web.resolve, shard_size=20_000, no_extract=True, handle_signals=False)
    assert json.loads(state.read_text())["pending_renames"], "the kill left a rename to finish"
    monkeypatch.undo()
    monkeypatch.chdir(second)
    s = run_recrawl(str(wl), column="url", out=str(first / "out"), state=str(state), delay=0, workers=8,
                    timeout=5, resolve=web.resolve, shard_size=20_000, no_extract=True)
    assert s.done
    got = read_captures(first / "out").column("url").to_pylist()
    assert sorted(set(got)) == sorted(urls), "no row lost"
    assert not list((first / "out").glob("*.tmp"))
