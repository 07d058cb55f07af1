"""The checkpoint never passes a row that is not in readable output, and resumes without gaps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.errors import UsageError
from ccrawl.recrawl.checkpoint import Checkpoint, ProgressTracker, load_checkpoint, save_checkpoint


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[tuple[int, int, bool]], list[int], list[int]]:
    parts = draw(st.lists(st.integers(0, 12), min_size=1, max_size=4))
    rows = [(p, r, draw(st.booleans())) for p, n in enumerate(parts) for r in range(n)]
    owned = [i for i, (_, _, o) in enumerate(rows) if o]
    order = draw(st.permutations(owned))
    # moments (counted in completions) at which a checkpoint is taken
    cuts = draw(st.lists(st.integers(0, len(owned)), max_size=5))
    return rows, list(order), cuts


@settings(max_examples=300, deadline=None)
@given(runs())
def test_checkpoint_never_covers_an_unwritten_row_and_resume_has_no_gaps_or_duplicates(run) -> None:  # type: ignore[no-untyped-def]
    rows, order, cuts = run
    tracker = ProgressTracker()
    seq_of = {}
    for i, (p, r, owned) in enumerate(rows):
        if owned:
            seq_of[i] = len(seq_of)
            tracker.issue(seq_of[i], (p, r))
        tracker.read_to((p, r + 1) if i + 1 == len(rows) or rows[i + 1][0] == p else (rows[i + 1][0], 0))
    durable: set[tuple[int, int]] = set()
    for k in range(len(order) + 1):
        if k in cuts or k == len(order):
            mark = tracker.position()
            above = {(a, x) for a, s, e in tracker.durable_above() for x in range(s, e)}
            owned_rows = {(p, r) for p, r, o in rows if o}
            skipped_on_resume = {pos for pos in owned_rows if pos < mark} | above
            assert skipped_on_resume <= durable, "a resume would skip a row that is not written"
            refetched = owned_rows - skipped_on_resume
            assert not (refetched & durable), "a resume would fetch a written row again"
        if k < len(order):
            i = order[k]
            tracker.mark_durable([seq_of[i]])
            durable.add(rows[i][:2])
    assert tracker.pending() == 0


def test_resume_from_carried_durable_rows_keeps_them_until_the_mark_passes() -> None:
    t = ProgressTracker(start=(0, 5), durable_above=[(0, 7), (0, 8)])
    t.issue(0, (0, 5))
    t.issue(1, (0, 6))
    t.read_to((0, 9))  # rows 7 and 8 were skipped as durable
    assert t.position() == (0, 5) and t.durable_above() == [[0, 7, 9]]
    t.mark_durable([0, 1])
    assert t.position() == (0, 9) and t.durable_above() == []


def test_checkpoint_round_trips_and_refuses_other_worklist_or_shard(tmp_path: Path) -> None:
    wl = {"source": "/x", "column": "url", "parts": [["part-0.parquet", 10]]}
    state = tmp_path / "state.json"
    save_checkpoint(state, Checkpoint(worklist=wl, shard=1, shards=3, part=0, row=4, durable_above=[[0, 6, 8]]))
    assert not (tmp_path / "state.json.tmp").exists()
    cp = load_checkpoint(state, worklist=wl, shard=1, shards=3)
    assert cp is not None and (cp.part, cp.row) == (0, 4) and cp.durable_rows() == {(0, 6), (0, 7)}
    with pytest.raises(UsageError, match="another work list"):
        load_checkpoint(state, worklist={**wl, "parts": [["part-0.parquet", 11]]}, shard=1, shards=3)
    with pytest.raises(UsageError, match="--shard 1 --shards 3"):
        load_checkpoint(state, worklist=wl, shard=0, shards=3)
    assert json.loads(state.read_text())["worklist_id"]


def test_garbage_state_file_is_a_usage_error(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    state.write_text("{not json")
    with pytest.raises(UsageError, match="not a recrawl checkpoint"):
        load_checkpoint(state, worklist={}, shard=0, shards=1)
