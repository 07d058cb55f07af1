"""The ``recrawl.run`` operation: one recrawl run, yielding its summary as one record.

The one way in: ``ccrawl recrawl run`` calls this operation, ``serve``/``mcp`` list it, and a
script calls it (or :func:`ccrawl.recrawl.run_recrawl`, which it wraps). Its parameters are the
fields of :class:`ccrawl.recrawl.params.RunParams` with their defaults, read off the dataclass,
so the defaults live in one place. It writes files, so ``serve`` hides it unless started with
``--allow-writes``.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Iterator
from typing import Annotated, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap
from ccrawl.recrawl.params import RunParams

#: the capability class of every RunParams field (the engine's dataclass knows nothing of front ends)
CAPS: dict[str, tuple[Cap, ...] | tuple[Cap, Bounds]] = {
    **{name: (Cap.VALUE,) for name in ("release", "column", "format", "robots", "no_extract", "extractor", "prefix")},
    "max_pages": (Cap.VALUE, Bounds(0, 10**12)),
    "shard": (Cap.VALUE, Bounds(0, 10**6 - 1)),
    "shards": (Cap.VALUE, Bounds(1, 10**6)),
    **{name: (Cap.ENDPOINT,) for name in ("source", "hub", "hub_endpoint")},
    **{name: (Cap.WRITE_PATH,) for name in ("out", "state", "journal", "profile_dir")},
    "previous": (Cap.READ_PATH,),
    **{name: (Cap.LIMIT,) for name in ("delay", "extractors", "shard_size", "writers", "fetch_writes", "batch",
                                       "queue_mb", "workers", "fetchers", "dns_lookups", "robots_timeout", "timeout",
                                       "max_body", "max_redirects", "tick_seconds", "start_timeout",
                                       "stall_timeout", "waiting_after")},
    **{name: (Cap.NETWORK,) for name in ("metrics_addr", "resolve", "nameservers", "user_agent", "verify_tls",
                                         "allow_private_addresses")},
    **{name: (Cap.INJECTED,) for name in ("progress", "profile_name", "command_line", "handle_signals")},
}

SUMMARY_COLUMNS = ("fetched", "ok", "failed", "not_modified", "bytes", "files", "part", "row", "done",
                   "stopped_by", "pages_per_s", "elapsed_s")


def _signature() -> inspect.Signature:
    """``(source, *, <every other RunParams field>=<its default>)``, annotations as the dataclass has them."""
    hints = typing.get_type_hints(RunParams)
    params = []
    for f in dataclasses.fields(RunParams):
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = inspect.Parameter.empty
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if f.name == "source" else inspect.Parameter.KEYWORD_ONLY
        # the field's type with its class (built at run time, so not written as a type expression)
        annotation = Annotated.__class_getitem__((hints[f.name], *CAPS[f.name]))  # type: ignore[attr-defined]
        params.append(inspect.Parameter(f.name, kind, default=default, annotation=annotation))
    return inspect.Signature(params)


def recrawl_run(source: str, **params: Any) -> Iterator[dict[str, Any]]:
    from ccrawl.recrawl import run_recrawl

    yield run_recrawl(source, **params).as_dict()


recrawl_run.__signature__ = _signature()  # type: ignore[attr-defined]
operation("recrawl.run", summary="Walk a published work list and fetch every URL in it, resumable",
          columns=SUMMARY_COLUMNS, writes=True)(recrawl_run)
