"""The progress line of a run made of units (markdown export's shards, a publisher's archives)."""

from __future__ import annotations

from ccrawl.progress import UnitProgress


def test_a_line_as_units_end_with_done_total_percentage_rate_eta_and_failures() -> None:
    said: list[str] = []
    progress = UnitProgress("markdown export", "shards", 4, said.append, every=0.0)
    progress.advance()
    progress.advance(failed=True)
    assert said[0].startswith("markdown export: 1/4 shards (25.0%), ")
    assert said[1].startswith("markdown export: 2/4 shards (50.0%), ") and ", 1 failed, " in said[1]
    assert "/min, ETA " in said[1] and said[1].endswith(" elapsed")
    fields = progress.fields()
    assert fields["done"] == 2 and fields["total"] == 4 and fields["percent"] == 50.0 and fields["failed"] == 1


def test_lines_are_spaced_but_the_last_unit_is_always_said() -> None:
    said: list[str] = []
    progress = UnitProgress("news publish", "archives", 3, said.append, every=3600.0)
    for _ in range(3):
        progress.advance()
    assert len(said) == 2 and said[-1].startswith("news publish: 3/3 archives (100.0%)") and "ETA 0s" in said[-1]


def test_an_unknown_total_says_the_count_and_the_rate_only() -> None:
    said: list[str] = []
    progress = UnitProgress("urls publish", "parts", None, said.append, every=0.0)
    progress.advance(2)
    assert said == [said[0]] and said[0].startswith("urls publish: 2 parts, ") and "ETA" not in said[0]
    assert progress.fields()["percent"] is None
