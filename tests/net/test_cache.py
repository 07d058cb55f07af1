"""The on-disk cache: round trip, freshness by age, disabled by --no-cache."""

from __future__ import annotations

from pathlib import Path

from ccrawl.net.cache import DiskCache


def test_round_trip_and_age(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    cache.put("https://x/collinfo.json", b"[1]")
    hit = cache.get("https://x/collinfo.json", max_age=60)
    assert hit is not None and hit.body == b"[1]" and hit.age < 60
    cache.touch_age("https://x/collinfo.json", 7200)
    assert cache.get("https://x/collinfo.json", max_age=3600) is None
    old = cache.get("https://x/collinfo.json")
    assert old is not None and old.age >= 7200


def test_disabled_cache_neither_stores_nor_finds(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path, enabled=False)
    cache.put("u", b"b")
    assert cache.get("u") is None
    assert not (tmp_path / "http").exists()


def test_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = DiskCache(blocker)
    cache.put("u", b"b")  # must not raise
    assert cache.get("u") is None
