"""The ``recrawl.run`` operation: one recrawl run, yielding its summary as one record.

The one way in: ``ccrawl recrawl run`` calls this operation, ``serve``/``mcp`` list it, and a
script calls it (or :func:`ccrawl.recrawl.run_recrawl`, which it wraps). Its parameters are the
fields of :class:`ccrawl.recrawl.params.RunParams` with their defaults, read off the dataclass,
so the defaults live in one place, except the fields that are the front end's per-invocation context
(:data:`FROM_CONTEXT`: how progress shows, the command line, whether the run may install signal handlers),
which come from the injected :class:`~ccrawl.ops.context.OpContext`, as the Hub endpoint does when none is
given. It writes files, so ``serve`` hides it unless started with ``--allow-writes``.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Iterator
from typing import Annotated, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap
from ccrawl.ops.context import OpContext, context
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
    #: the CLI's --profile-name; a server leaves the default (a file name no client may choose)
    "profile_name": (Cap.INJECTED,),
}

#: RunParams fields that are the front end's per-invocation context, read off the OpContext
FROM_CONTEXT = ("progress", "command_line", "handle_signals")

SUMMARY_COLUMNS = ("fetched", "ok", "failed", "not_modified", "bytes", "files", "part", "row", "done",
                   "stopped_by", "pages_per_s", "elapsed_s")


def _signature() -> inspect.Signature:
    """``(source, *, <every other RunParams field>=<its default>, ctx=None)``, annotations as the dataclass
    has them, the context's fields (:data:`FROM_CONTEXT`) left out."""
    hints = typing.get_type_hints(RunParams)
    params = []
    for f in dataclasses.fields(RunParams):
        if f.name in FROM_CONTEXT:
            continue
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
    injected = Annotated.__class_getitem__((OpContext | None, Cap.INJECTED))  # type: ignore[attr-defined]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=injected))
    return inspect.Signature(params)


def recrawl_run(source: str, *, ctx: OpContext | None = None, **params: Any) -> Iterator[dict[str, Any]]:
    from ccrawl.errors import UsageError
    from ccrawl.recrawl import run_recrawl

    given = sorted(set(params) & set(FROM_CONTEXT))
    if given:
        raise UsageError(f"recrawl.run: {', '.join(given)} come from the context (ctx=OpContext(...)), "
                         "not from keywords")
    front = context(ctx)
    if params.get("hub_endpoint") is None and front.hub_endpoint:
        params["hub_endpoint"] = front.hub_endpoint
    summary = run_recrawl(source, progress=front.progress, command_line=front.command_line,
                          handle_signals=front.handle_signals, **params)
    yield summary.as_dict()


recrawl_run.__signature__ = _signature()  # type: ignore[attr-defined]
operation("recrawl.run", summary="Walk a published work list and fetch every URL in it, resumable",
          columns=SUMMARY_COLUMNS, writes=True)(recrawl_run)
