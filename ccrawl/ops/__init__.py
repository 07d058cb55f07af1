"""The operation registry: every command is a named operation, typed parameters in, records out.

An operation is a plain function whose keyword parameters carry type annotations and which
yields records (mappings). The CLI, ``serve`` and ``mcp`` are thin front ends over
:data:`REGISTRY`, so anything the CLI can list, the server can stream::

    @operation("url.surt", summary="SURT form of URLs", columns=("url", "surt"))
    def url_surt(urls: Iterable[str]) -> Iterator[dict[str, object]]:
        ...

Write operations are marked ``writes=True`` and are hidden from ``serve`` unless it is
started with ``--allow-writes``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Record = Mapping[str, Any]
OpFunc = Callable[..., Iterable[Record]]



@dataclass(frozen=True, slots=True)
class Param:
    """One typed parameter of an operation, read off the function signature."""

    name: str
    annotation: str
    default: Any
    required: bool


@dataclass(frozen=True, slots=True)
class Operation:
    """A named operation: the function, what it yields, and whether it writes."""

    name: str
    func: OpFunc
    summary: str
    columns: tuple[str, ...] = ()
    writes: bool = False
    params: tuple[Param, ...] = field(default=())

    def __call__(self, **kwargs: Any) -> Iterable[Record]:
        return self.func(**kwargs)


REGISTRY: dict[str, Operation] = {}


def _params_of(func: OpFunc) -> tuple[Param, ...]:
    out = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
        required = p.default is inspect.Parameter.empty
        out.append(Param(p.name, ann, None if required else p.default, required))
    return tuple(out)


def operation(
    name: str, *, summary: str, columns: Iterable[str] = (), writes: bool = False
) -> Callable[[OpFunc], OpFunc]:
    """Register ``func`` under ``name``; returns the function unchanged."""

    def register(func: OpFunc) -> OpFunc:
        if name in REGISTRY and REGISTRY[name].func is not func:
            raise ValueError(f"operation {name!r} is registered twice")
        REGISTRY[name] = Operation(name, func, summary, tuple(columns), writes, _params_of(func))
        return func

    return register


def get(name: str) -> Operation:
    """The operation called ``name``; KeyError names the ones that exist."""
    load_all()
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no operation {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


def load_all() -> dict[str, Operation]:
    """Import every module of this package (each registers its operations) and return the registry."""
    for info in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        importlib.import_module(info.name)
    return REGISTRY
