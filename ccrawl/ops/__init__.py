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

import builtins
import importlib
import inspect
import pkgutil
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ccrawl.ops.caps import Bounds, Cap, Length

if TYPE_CHECKING:
    import pyarrow as pa

Record = Mapping[str, Any]
OpFunc = Callable[..., Iterable[Record]]
#: an operation that yields Arrow record batches (:func:`batch_operation`)
BatchFunc = Callable[..., Iterable["pa.RecordBatch"]]



@dataclass(frozen=True, slots=True)
class Param:
    """One typed parameter of an operation, read off the function signature."""

    name: str
    annotation: str  #: the type as text, without its capability class (``int | None``)
    default: object
    required: bool
    cap: Cap | None = None  #: who may set it (:mod:`ccrawl.ops.caps`); None: undeclared
    bounds: Bounds | None = None
    length: Length | None = None


@dataclass(frozen=True, slots=True)
class Operation:
    """A named operation: the function, what it yields, and whether it writes."""

    name: str
    func: OpFunc
    summary: str
    columns: tuple[str, ...] = ()
    writes: bool = False
    params: tuple[Param, ...] = field(default=())
    #: for a batch operation: the function yielding Arrow record batches (``func`` yields their rows)
    batch_func: BatchFunc | None = None

    def __call__(self, **kwargs: object) -> Iterable[Record]:
        return self.func(**kwargs)

    def batches(self, **kwargs: object) -> Iterable[pa.RecordBatch]:
        """The Arrow record batches of a batch operation (what a renderer writes at Arrow speed)."""
        if self.batch_func is None:
            raise TypeError(f"operation {self.name!r} yields records, not record batches")
        return self.batch_func(**kwargs)


REGISTRY: dict[str, Operation] = {}


class _Unresolved:
    """Stands for a name an annotation uses that only exists for the type checker."""


class _Names(dict[str, object]):
    def __missing__(self, key: str) -> object:
        return _Unresolved


def _resolve(func: Callable[..., object], text: object) -> object:
    if not isinstance(text, str):
        return text
    scope = _Names(vars(builtins))
    scope.update(vars(typing))
    scope.update(func.__globals__)
    return eval(text, {"__builtins__": {}}, scope)


def _type_text(tp: object) -> str:
    """``Iterable[str] | None``: the type as the binding reads it, whatever module spelled it."""
    if tp is type(None):
        return "None"
    if isinstance(tp, list):
        return "[" + ", ".join(_type_text(a) for a in tp) + "]"
    if tp is Any:
        return "Any"
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_text(a) for a in typing.get_args(tp))
    if origin is typing.Annotated:
        return _type_text(typing.get_args(tp)[0])
    if origin is not None:
        args = typing.get_args(tp)
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join("..." if a is Ellipsis else _type_text(a) for a in args)
        return f"{name}[{inner}]" if args else name
    return getattr(tp, "__name__", str(tp))


def _metadata(tp: object) -> list[object]:
    """Every ``Annotated`` metadata item in ``tp``, outermost first (an optional's member included)."""
    out: list[object] = []
    if typing.get_origin(tp) is typing.Annotated:
        inner, *metadata = typing.get_args(tp)
        out.extend(metadata)
        tp = inner
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            out.extend(_metadata(arg))
    return out


def _params_of(func: Callable[..., object]) -> tuple[Param, ...]:
    out = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        tp = _resolve(func, p.annotation) if p.annotation is not inspect.Parameter.empty else Any
        meta = _metadata(tp)
        cap = next((m for m in meta if isinstance(m, Cap)), None)
        bounds = next((m for m in meta if isinstance(m, Bounds)), None)
        length = next((m for m in meta if isinstance(m, Length)), None)
        required = p.default is inspect.Parameter.empty
        out.append(Param(p.name, _type_text(tp), None if required else p.default, required, cap, bounds, length))
    return tuple(out)


def undeclared(p: Param) -> str | None:
    """What is missing from ``p``'s declaration, or None: every parameter says who may set it
    (:mod:`ccrawl.ops.caps`), and a client's number says its bounds."""
    if p.cap is None:
        return "declares no capability class (wrap its type in one of ccrawl.ops.caps: Value[...], ReadPath[...], ...)"
    base = p.annotation.removesuffix(" | None")
    if p.cap is Cap.VALUE and base in ("int", "float"):
        if p.bounds is None:
            return "is a number a client sets: declare its Bounds(lo, hi)"
        if isinstance(p.default, int | float) and not isinstance(p.default, bool) and p.bounds.check(p.default):
            return f"has a default ({p.default}) outside its own bounds"
    return None


def operation(
    name: str, *, summary: str, columns: Iterable[str] = (), writes: bool = False
) -> Callable[[OpFunc], OpFunc]:
    """Register ``func`` under ``name``; returns the function unchanged."""

    def register(func: OpFunc) -> OpFunc:
        if name in REGISTRY and REGISTRY[name].func is not func:
            raise ValueError(f"operation {name!r} is registered twice")
        REGISTRY[name] = Operation(name, func, summary, tuple(columns), writes, _declared(name, func))
        return func

    return register


def _declared(name: str, func: Callable[..., object]) -> tuple[Param, ...]:
    params = _params_of(func)
    for p in params:
        problem = undeclared(p)
        if problem:
            raise TypeError(f"operation {name!r}: parameter {p.name!r} {problem}")
    return params


def batch_operation(
    name: str, *, summary: str, columns: Iterable[str] = (), writes: bool = False
) -> Callable[[BatchFunc], BatchFunc]:
    """Register ``func``, which yields Arrow record batches, under ``name``: :meth:`Operation.batches` gives
    the batches, calling the operation gives their rows as records (for a caller that wants records)."""

    def register(func: BatchFunc) -> BatchFunc:
        if name in REGISTRY and REGISTRY[name].batch_func is not func:
            raise ValueError(f"operation {name!r} is registered twice")

        from ccrawl.rowbatch import rows_of

        rows = rows_of(func)
        REGISTRY[name] = Operation(name, rows, summary, tuple(columns), writes, _declared(name, func), func)
        return func

    return register


def get(name: str) -> Operation:
    """The operation called ``name``; KeyError names the ones that exist."""
    if name not in REGISTRY:  # its own module first (``ops/homes.py``): a command imports only that one
        from ccrawl.ops.homes import HOMES

        if name in HOMES:
            importlib.import_module(f"{__name__}.{HOMES[name]}")
    if name not in REGISTRY:
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
