"""Live fetching for the recrawl and crawl engines: one Fetcher per process, results as rows.

::

    from ccrawl.fetch import FetchConfig, Fetcher, run

    async def main():
        async with Fetcher(FetchConfig(delay=1.0, robots=True)) as fetcher:
            result = await fetcher.fetch("https://example.com/")
            print(result.status, result.error, len(result.body), result.digest)

    run(main())          # uvloop when installed

See ``docs/fetch.md`` for the error classes, robots.txt behaviour, the DNS cap and the phases.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ccrawl.fetch.classify import classify
    from ccrawl.fetch.client import Fetcher
    from ccrawl.fetch.config import FetchConfig, default_dns_lookups
    from ccrawl.fetch.loop import loop_name, run
    from ccrawl.fetch.result import ERROR_CLASSES, FetchResult, Phases, headers_to_json, sha1_base32

#: Where each name lives. Imported on first use (PEP 562), so ``ccrawl.fetch.config`` (which a
#: recrawl's parent process needs to validate its flags) does not pull in aiohttp: the parent
#: never fetches, and aiohttp is ~0.4 CPU s of imports on every run.
_WHERE = {
    "classify": "ccrawl.fetch.classify",
    "Fetcher": "ccrawl.fetch.client",
    "FetchConfig": "ccrawl.fetch.config",
    "default_dns_lookups": "ccrawl.fetch.config",
    "loop_name": "ccrawl.fetch.loop",
    "run": "ccrawl.fetch.loop",
    "ERROR_CLASSES": "ccrawl.fetch.result",
    "FetchResult": "ccrawl.fetch.result",
    "Phases": "ccrawl.fetch.result",
    "headers_to_json": "ccrawl.fetch.result",
    "sha1_base32": "ccrawl.fetch.result",
}


class _Package(types.ModuleType):
    """``classify`` is both a submodule and the function this package exports. Importing the
    submodule sets the package's attribute to the module; the function is kept there instead, as
    when this file imported it eagerly."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "classify" and isinstance(value, types.ModuleType):
            value = value.classify
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ccrawl.fetch' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ERROR_CLASSES",
    "FetchConfig",
    "FetchResult",
    "Fetcher",
    "Phases",
    "classify",
    "default_dns_lookups",
    "headers_to_json",
    "loop_name",
    "run",
    "sha1_base32",
]
