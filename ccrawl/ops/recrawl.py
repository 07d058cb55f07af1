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
from collections.abc import Iterator
from typing import Any

from ccrawl.ops import operation
from ccrawl.recrawl.params import RunParams

SUMMARY_COLUMNS = ("fetched", "ok", "failed", "not_modified", "bytes", "files", "part", "row", "done",
                   "stopped_by", "pages_per_s", "elapsed_s")


def _signature() -> inspect.Signature:
    """``(source, *, <every other RunParams field>=<its default>)``, annotations as the dataclass has them."""
    params = []
    for f in dataclasses.fields(RunParams):
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = inspect.Parameter.empty
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if f.name == "source" else inspect.Parameter.KEYWORD_ONLY
        params.append(inspect.Parameter(f.name, kind, default=default, annotation=f.type))
    return inspect.Signature(params)


def recrawl_run(source: str, **params: Any) -> Iterator[dict[str, Any]]:
    from ccrawl.recrawl import run_recrawl

    yield run_recrawl(source, **params).as_dict()


recrawl_run.__signature__ = _signature()  # type: ignore[attr-defined]
operation("recrawl.run", summary="Walk a published work list and fetch every URL in it, resumable",
          columns=SUMMARY_COLUMNS, writes=True)(recrawl_run)
