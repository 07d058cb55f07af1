"""scripts/refresh_psl.py vendors a list byte for byte and describes it in the sidecar."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from ccrawl.url.domain import PSL_PATH

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "refresh_psl.py"


def test_refresh_from_a_file_copies_it_and_writes_the_sidecar(tmp_path: Path) -> None:
    source = tmp_path / "list.dat"
    source.write_bytes(PSL_PATH.read_bytes())
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(SCRIPT), "--from", str(source), "--out", str(out)], check=True)
    assert (out / "public_suffix_list.dat").read_bytes() == source.read_bytes()
    sidecar = json.loads((out / "public_suffix_list.json").read_text())
    assert sidecar["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    shipped = json.loads(PSL_PATH.with_suffix(".json").read_text())
    for field in ("version", "commit", "date", "rules_icann", "rules_private"):
        assert sidecar[field] == shipped[field]


def test_refresh_refuses_a_file_that_is_not_the_list(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.dat"
    bogus.write_text("com\nnet\n")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--from", str(bogus), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "section markers" in result.stderr
    assert not (tmp_path / "out" / "public_suffix_list.dat").exists()
