"""ccrawl dedup: exact and near clusters, complete recall against brute force, read-only, old files."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ccrawl.cli.main import main
from ccrawl.datasets.dedup import brute_force_pairs, dedup_report, near_pairs, plan_masks
from ccrawl.extract.simhash import simhash_or_none
from ccrawl.markdown.schema import rows_to_table

WORDS = ("river", "stone", "market", "bridge", "garden", "letter", "window", "harbour", "lantern", "meadow",
         "orchard", "pepper", "quarry", "saddle", "thunder", "velvet", "walnut", "yonder", "zephyr", "anchor")


def _text(rng: random.Random, words: int = 140) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(words))


def _row(i: int, markdown: str) -> dict[str, Any]:
    return {"doc_id": f"d{i}", "url": f"https://example.com/{i}", "host": "example.com", "crawl_date": 0,
            "warc_record_id": f"<urn:uuid:{i}>", "html_length": 0, "markdown_length": len(markdown.encode()),
            "markdown": markdown, "language": "eng", "language_confidence": 1.0, "extractor": "h2m@5",
            "simhash": simhash_or_none(markdown)}


def _dataset(tmp_path: Path) -> tuple[Path, list[str]]:
    rng = random.Random(5)
    texts = [_text(rng) for _ in range(40)]
    docs = list(texts)
    docs += [texts[0], texts[0], texts[1]]  # exact: a cluster of 3 and one of 2
    edited = texts[2].split()
    edited[70] = "changed"  # one word of 140: a near duplicate (a few bits apart)
    docs.append(" ".join(edited))
    docs += ["short page", "short page"]  # exact duplicates under 512 bytes: exact yes, near no
    import pyarrow.parquet as pq

    d = tmp_path / "ds"
    (d / "data").mkdir(parents=True)
    half = len(docs) // 2
    for n, chunk in enumerate((docs[:half], docs[half:])):
        table = rows_to_table([_row(i + n * half, m) for i, m in enumerate(chunk)])
        pq.write_table(table, d / "data" / f"{n:06d}.parquet", row_group_size=7)
    return d, docs


def test_exact_and_near_clusters(tmp_path: Path) -> None:
    d, docs = _dataset(tmp_path)
    report = dedup_report([d], distance=3, top=10)
    assert report.rows == len(docs) and report.files == 2
    assert (report.exact_clusters, report.exact_duplicates) == (3, 4)  # texts[0] x3, texts[1] x2, short x2
    assert report.exact_bytes == 2 * len(docs[0].encode()) + len(docs[1].encode()) + len(b"short page")
    assert (report.near_clusters, report.near_duplicates) == (1, 1)
    assert report.no_fingerprint == 2 and report.redundant == 5
    sizes = sorted((c.kind, c.size) for c in report.top)
    assert sizes == [("exact", 2), ("exact", 2), ("exact", 3), ("near", 2)]
    biggest = report.top[0]
    assert biggest.kind == "exact" and biggest.size == 3 and biggest.urls[0] == "https://example.com/0"


def test_distance_zero_finds_no_near_duplicates_and_a_wide_distance_chains(tmp_path: Path) -> None:
    d, _ = _dataset(tmp_path)
    assert dedup_report([d], distance=0).near_duplicates == 0
    wide = dedup_report([d], distance=64)
    assert wide.near_clusters == 1 and wide.near_duplicates == wide.rows - wide.exact_duplicates - 1 - 1


def test_files_without_a_simhash_column_are_fingerprinted_on_the_fly(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    d, _ = _dataset(tmp_path)
    old = tmp_path / "old"
    old.mkdir()
    for f in sorted((d / "data").glob("*.parquet")):
        pq.write_table(pq.read_table(f).drop_columns(["simhash", "markdown_length"]), old / f.name)
    new_report = dedup_report([d], distance=3)
    old_report = dedup_report([old], distance=3)
    assert old_report.fingerprinted == new_report.rows
    for field in ("exact_duplicates", "exact_clusters", "exact_bytes", "near_duplicates", "near_clusters",
                  "near_bytes", "no_fingerprint"):
        assert getattr(old_report, field) == getattr(new_report, field), field


def _planted(n: int, extra: int, flips: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, size=n, dtype=np.int64).view(np.uint64)
    near = []
    for _ in range(extra):
        v = int(base[rng.integers(0, n)])
        for bit in rng.choice(64, size=int(rng.integers(0, flips + 1)), replace=False).tolist():
            v ^= 1 << bit
        near.append(v)
    return np.unique(np.concatenate([base, np.array(near, dtype=np.uint64)]))


@pytest.mark.parametrize("distance", [0, 1, 2, 3, 4, 6, 9, 16, 30])
def test_banded_search_finds_exactly_the_brute_force_pairs(distance: int) -> None:
    n = 1500 if distance < 16 else 300  # a wide distance pairs almost everything: keep the sets small
    fps = _planted(n, n // 3, distance + 2, seed=distance)
    banded = {tuple(p) for p in near_pairs(fps, distance).tolist()}
    brute = brute_force_pairs([int(x) for x in fps], distance)
    assert banded == brute
    if distance >= 1:
        assert brute  # the planted pairs make the comparison meaningful


def test_plans_are_complete_covers() -> None:
    # Every set of `distance` bit positions leaves at least one mask untouched (the pigeonhole claim).
    rng = random.Random(3)
    for distance in (1, 3, 6, 10):
        masks = plan_masks(1_000_000, distance)
        for _ in range(2000):
            flipped = sum(1 << b for b in rng.sample(range(64), distance))
            assert any(m & flipped == 0 for m in masks)


def test_cli_table_json_and_the_input_is_never_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d, docs = _dataset(tmp_path)
    files = sorted((d / "data").glob("*.parquet"))
    before = {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert main(["dedup", str(d)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(docs)} rows in 2 files\n")
    assert "  exact duplicates            4 in 3 clusters, " in out
    assert "(distance <= 3)" in out and "redundant                   5" in out
    assert "no fingerprint              2  (too short to hash, left alone)" in out
    assert "largest clusters" in out
    assert main(["dedup", *map(str, files), "--json", "--top", "0", "--distance", "6"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["distance"] == 6 and report["clusters"] == [] and report["exact"]["duplicates"] == 4
    assert {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files} == before


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--distance", "65"], 2, "--distance 65"),
    (["--top", "-1"], 2, "--top -1"),
])
def test_bad_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int,
                   message: str) -> None:
    d, _ = _dataset(tmp_path)
    assert main(["dedup", str(d), *args]) == code
    assert message in capsys.readouterr().err


def test_missing_empty_and_broken_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dedup", str(tmp_path / "nope")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["dedup", str(tmp_path / "empty")]) == 3
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    assert main(["dedup", str(bad)]) == 1
    assert "not a readable Parquet file" in capsys.readouterr().err


def test_the_dedup_operation_yields_the_report(tmp_path: Path) -> None:
    from ccrawl import ops

    d, docs = _dataset(tmp_path)
    (record,) = list(ops.get("dedup")(paths=[str(d)], distance=3, top=1))
    assert record["rows"] == len(docs) and record["exact"]["clusters"] == 3 and len(record["clusters"]) == 1
