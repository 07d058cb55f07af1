"""Fuzzing the checkpoint loader (bounded here; ``bench/fuzz_checkpoint.py`` runs it long): hostile
state files are refused in one line or accepted only when every path is inside ``--out``."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.recrawl.statefuzz import check_load, documents, prepare_out, valid_checkpoint


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=documents())
def test_hostile_state_files_are_refused_in_one_line_or_accepted_inside_out(tmp_path: Path, data: bytes) -> None:
    check_load(tmp_path / "state.json", prepare_out(tmp_path), data)


def test_the_valid_seed_is_accepted(tmp_path: Path) -> None:
    """The mutations start from a checkpoint the loader accepts, so refusals are the mutations' doing."""
    assert check_load(tmp_path / "s.json", prepare_out(tmp_path), json.dumps(valid_checkpoint()).encode()) == "accepted"
