"""Every compiled module in csrc/ is one ``ccrawl version`` reports and ``accel`` knows by name."""

from __future__ import annotations

from pathlib import Path

from ccrawl import accel

ROOT = Path(__file__).resolve().parent.parent


def test_every_csrc_module_is_listed_in_native_modules() -> None:
    built = {p.stem for p in (ROOT / "csrc").glob("*.pyx")}
    assert built, "no csrc/*.pyx found"
    missing = sorted(built - set(accel.NATIVE_MODULES))
    assert not missing, f"csrc modules not in accel.NATIVE_MODULES: {missing}"


def test_every_listed_module_has_a_source() -> None:
    built = {p.stem for p in (ROOT / "csrc").glob("*.pyx")}
    assert set(accel.NATIVE_MODULES) <= built
