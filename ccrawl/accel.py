"""Selects the compiled implementation of a hot path, or its pure-Python twin.

Each engine module defines its pure-Python functions first, then asks::

    _native = accel.native("surt")          # ccrawl._native.surt, or None
    surt = _native.surt if _native else surt_py

``CCRAWL_NO_EXTENSIONS=1`` (any non-empty value but ``0``) forces the twins, and a module
that failed to build or import falls back the same way. :func:`implementations` reports
what every engine that asked ended up with, which ``ccrawl version -o json`` prints.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

NATIVE_MODULES = (
    "surt", "domain", "canon", "simhash", "gzmembers", "gzinflate", "ranges", "h2mwalk", "lxbtree", "pqfooter",
    "textout",
    "edgecount", "crawlkeys", "newstext", "seenmem",
)

_chosen: dict[str, str] = {}


def extensions_disabled() -> bool:
    """True when the environment asks for the pure-Python twins."""
    value = os.environ.get("CCRAWL_NO_EXTENSIONS", "")
    return value not in ("", "0")


def native(name: str) -> ModuleType | None:
    """The compiled module ``ccrawl._native.<name>``, or None when disabled or not built."""
    if extensions_disabled():
        _chosen[name] = "python"
        return None
    try:
        module = importlib.import_module(f"ccrawl._native.{name}")
    except ImportError:
        _chosen[name] = "python"
        return None
    _chosen[name] = "native"
    return module


def implementations() -> dict[str, str]:
    """Which implementation each hot path uses in this process: ``native`` or ``python``."""
    for name in NATIVE_MODULES:
        if name not in _chosen:
            native(name)
    return {name: _chosen[name] for name in NATIVE_MODULES}


def summary() -> str:
    """One word for the whole native core: native, python, or partial."""
    kinds = set(implementations().values())
    if kinds == {"native"}:
        return "native"
    if kinds == {"python"}:
        return "python"
    return "partial"
