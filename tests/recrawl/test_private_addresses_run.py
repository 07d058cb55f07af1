"""``recrawl run`` refuses loopback URLs by default and fetches them with ``--allow-private-addresses``
or the ``allow_private_addresses`` setting; names pinned by ``--resolve`` are fetched either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.synthweb import SynthWeb


def _args(wl: Path, out: Path, *extra: str) -> list[str]:
    return ["recrawl", "run", "--from", str(wl), "--column", "url", "--out", str(out), "--delay", "0",
            "--workers", "4", "--progress", "none", "--no-extract", "--resolve", "*.test=127.0.0.1", *extra]


@pytest.mark.parametrize("allow", ["default", "flag", "setting"])
def test_loopback_literal_is_a_skip_row_unless_allowed(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], allow: str
) -> None:
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path))
    pinned = web.page_urls()[0]
    literal = f"http://127.0.0.1:{web.port}/"
    wl = write_worklist(tmp_path / "wl", [pinned, literal], parts=1)
    extra = ["--allow-private-addresses"] if allow == "flag" else []
    if allow == "setting":
        monkeypatch.setenv("CCRAWL_ALLOW_PRIVATE_ADDRESSES", "1")
    code = main(_args(wl, tmp_path / "out", *extra))
    capsys.readouterr()
    assert code in (0, None)
    rows = {r["url"]: r for r in read_captures(tmp_path / "out").to_pylist()}
    assert rows[pinned]["error"] == "" and rows[pinned]["status"] == 200
    if allow == "default":
        assert rows[literal]["error"] == "skip" and rows[literal]["status"] == 0
        assert "loopback" in json.loads(rows[literal]["meta_json"])["error_detail"]
    else:
        assert rows[literal]["error"] == "" and rows[literal]["status"] > 0
