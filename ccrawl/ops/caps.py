"""Capability classes: who may set each parameter of an operation.

Every parameter of a registered operation declares its class next to its type, with the aliases
below (``Annotated`` metadata, so the type checker still sees the plain type)::

    def cc_fetch(locations: Value[Iterable[Mapping[str, Any]]],
                 limit: Annotated[int, Cap.VALUE, Bounds(1, 10_000)] = 100,
                 ledger: WritePath[str | None] = None,
                 max_body: Limit[int] = 8 << 20,
                 ctx: Injected[OpContext | None] = None) -> ...

The CLI sets every parameter (the user at a shell owns the machine). The network front ends
(``serve``, ``mcp``) take only :attr:`Cap.VALUE` and :attr:`Cap.SQL` parameters from a client, and
path parameters only when the operator named a ``--root`` (confined under it; a write path also
needs ``--allow-writes``). Everything else is the server's configuration: its flags, settings and
environment. ``tests/test_ops_caps.py`` walks the registry and fails on a parameter without a class.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, TypeVar

T = TypeVar("T")


class Cap(enum.Enum):
    """What a parameter carries, and so who may set it."""

    #: plain data (URLs, filters, counts within their declared bounds): a client sets it
    VALUE = "value"
    #: SQL text: a client sets it, and it runs in a DuckDB connection that cannot reach files or the network
    SQL = "sql"
    #: a file or folder the operation reads: a client names one only under the server's --root
    READ_PATH = "read-path"
    #: a file or folder the operation writes: a client names one only with --allow-writes, under --root
    WRITE_PATH = "write-path"
    #: a place the server calls (Hub or Common Crawl endpoint, a dataset repo, a table URL), perhaps with
    #: the operator's token: server configuration
    ENDPOINT = "endpoint"
    #: name pinning, private-address allowances, TLS verification, the user agent: server configuration
    NETWORK = "network"
    #: resource limits (body caps, timeouts, sizes, workers, memory): server configuration
    LIMIT = "limit"
    #: filled in by the front end itself (the OpContext: client options, notices, the command line;
    #: callbacks, the CLI's trust): never a client's
    INJECTED = "injected"

    @property
    def client_settable(self) -> bool:
        """True for the classes a network client may set at all (paths under conditions)."""
        return self in (Cap.VALUE, Cap.SQL, Cap.READ_PATH, Cap.WRITE_PATH)

    @property
    def is_path(self) -> bool:
        return self in (Cap.READ_PATH, Cap.WRITE_PATH)


@dataclass(frozen=True, slots=True)
class Bounds:
    """The range a client's number may take, or the length of a client's string or list."""

    lo: float | None = None
    hi: float | None = None

    def check(self, value: float) -> str | None:
        """None when ``value`` is inside; else the reason."""
        if self.lo is not None and value < self.lo:
            return f"must be at least {_num(self.lo)}"
        if self.hi is not None and value > self.hi:
            return f"must be at most {_num(self.hi)}"
        return None


@dataclass(frozen=True, slots=True)
class Length:
    """The longest string (in characters) or list (in items) a client may give."""

    hi: int


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


Value = Annotated[T, Cap.VALUE]
Sql = Annotated[T, Cap.SQL]
ReadPath = Annotated[T, Cap.READ_PATH]
WritePath = Annotated[T, Cap.WRITE_PATH]
Endpoint = Annotated[T, Cap.ENDPOINT]
Network = Annotated[T, Cap.NETWORK]
Limit = Annotated[T, Cap.LIMIT]
Injected = Annotated[T, Cap.INJECTED]

#: the longest string a client may give in one value unless the parameter's Bounds say otherwise
MAX_STRING = 1 << 16
