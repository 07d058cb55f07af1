"""The archives of one CC-NEWS month, read with a front end's client options.

Below the operations on purpose: ``news list|download|search|publish`` (:mod:`ccrawl.ops.news`) and
dataset verification (:mod:`ccrawl.datasets.verify_kinds`) both read a month's ``warc.paths.gz``, and a
dataset module must not import an operation module. A context is anything with the client options and a
notice (an :class:`~ccrawl.ops.context.OpContext` is one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ccrawl.net.options import ClientOptions


class ClientContext(Protocol):
    """The two things reading a month needs from a front end's context."""

    @property
    def client(self) -> ClientOptions: ...

    @property
    def notice(self) -> Callable[[str], None]: ...


def month_paths(year: int, month: int, ctx: ClientContext | None = None) -> list[str]:
    """Every archive of one month, from its ``warc.paths.gz`` (default client options without a context)."""
    from ccrawl.commoncrawl.news.months import check_month, fetch_month_paths
    from ccrawl.net.client import run

    m = check_month(year, month)
    if ctx is None:
        return run(lambda cc: fetch_month_paths(cc, m), ClientOptions())
    return run(lambda cc: fetch_month_paths(cc, m), ctx.client, warn=ctx.notice)
