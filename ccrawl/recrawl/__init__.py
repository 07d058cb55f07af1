"""The recrawl engine: walk a published work list, fetch every URL, write capture shards or WARC.

``run_recrawl(source, **flags) -> RunSummary`` is the library entry point (every CLI flag is a
keyword); the parts are the work-list reader (:mod:`.worklist`), the feeder (:mod:`.feeder`),
the process pipeline (:mod:`.pipeline` with :mod:`.fetchproc` and its host-ready scheduler
:mod:`.hostsched`, :mod:`.extractproc`, :mod:`.writerproc` over shared-memory rings, :mod:`.ring`;
every message between them in :mod:`.messages`; process counts from the machine in :mod:`.sizing`),
the sinks (:mod:`.sinks`,
:mod:`.warcrec`), the checkpoint (:mod:`.checkpoint`, :mod:`.recovery`) and the summary
(:mod:`.summary`, :mod:`.report`, :mod:`.telemetry`). See docs/recrawl.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ccrawl.recrawl.params import RunParams
    from ccrawl.recrawl.run import run_recrawl
    from ccrawl.recrawl.summary import RunSummary

__all__ = ["RunParams", "RunSummary", "run_recrawl"]

_LAZY = {
    "RunParams": "ccrawl.recrawl.params",
    "RunSummary": "ccrawl.recrawl.summary",
    "run_recrawl": "ccrawl.recrawl.run",
}


def __getattr__(name: str) -> object:
    # Imported on first use: the pipeline's child processes import this package to reach their
    # own module (fetchproc, extractproc, writerproc) and must not pay for pyarrow and the whole
    # engine at start-up.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
