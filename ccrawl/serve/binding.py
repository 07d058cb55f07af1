"""Typed parameters of a registered operation, bound from HTTP or MCP values.

``serve`` and ``mcp`` have no per-operation code: each reads an operation's parameters off the
registry (:class:`ccrawl.ops.Param`, types and capability classes as declared in the function) and
turns the ones a client may set into fields of a few JSON kinds. Who may set what is the
:class:`Policy` the operator chose at start-up:

- ``value`` and ``sql`` parameters: any client, within the declared bounds and lengths;
- ``read-path``: only when the server has a ``--root``, and only a path inside it (resolved,
  symlinks followed); ``write-path`` the same, and only with ``--allow-writes``;
- every other class (endpoints, credentials, name pinning and address allowances, resource
  limits, what the front end injects): never a client. A request naming one is refused (400),
  saying it is the server's configuration.

A value that does not fit is refused with the reason, before the operation runs. An operation
with a required parameter that neither a client nor the server's configuration supplies is not
exposed at all.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ccrawl.jsontypes import JSONObject, JSONScalar, JSONValue
from ccrawl.ops import Operation, Param
from ccrawl.ops.caps import MAX_STRING, Bounds, Cap


@dataclass(frozen=True, slots=True)
class Policy:
    """What a network client may set: the operator's choices when starting the server."""

    allow_writes: bool = False
    #: the one folder a client's paths may name (resolved); None: no path from a client
    root: Path | None = None

    def settable(self, p: Param) -> bool:
        """True when a client may give ``p`` under this policy."""
        if p.cap in (Cap.VALUE, Cap.SQL):
            return True
        if p.cap is Cap.READ_PATH:
            return self.root is not None
        if p.cap is Cap.WRITE_PATH:
            return self.root is not None and self.allow_writes
        return False

    def refusal(self, p: Param) -> str:
        """Why a client may not set ``p`` (one line)."""
        if p.cap is Cap.READ_PATH:
            return "is a path the server reads: this server takes no path from a client (its operator can allow " \
                   "paths inside one folder with --root DIR)"
        if p.cap is Cap.WRITE_PATH and (self.root is None or not self.allow_writes):
            return "is a path the server writes: this server takes no such path from a client (its operator " \
                   "can allow paths inside one folder with --allow-writes --root DIR)"
        cap = p.cap.value if p.cap else "undeclared"
        return f"is the server's configuration ({cap}), not a client's: the operator sets it when starting the server"

_LIST = re.compile(r"^(?:Iterable|Sequence|list|tuple)\[str(?:, \.\.\.)?\]$")
_RECORDS = re.compile(r"^(?:Iterable|Sequence|list)\[(?:Mapping|dict)\[str, (?:Any|object)\]\]$")
_OBJECT = re.compile(r"^(?:Mapping|dict)\[str, (?:str|Any)\]$")
_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class BindError(ValueError):
    """A request value that does not fit the operation's parameter."""

    def __init__(self, param: str, reason: str) -> None:
        super().__init__(f"{param}: {reason}")
        self.param = param
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Field:
    """One caller-settable parameter: its JSON kind, whether it is required, its default."""

    name: str
    kind: str  # string | integer | number | boolean | strings | records | object
    required: bool
    nullable: bool
    default: object
    cap: Cap = Cap.VALUE
    bounds: Bounds | None = None
    max_length: int = MAX_STRING

    def json_schema(self) -> JSONObject:
        if self.kind == "strings":
            schema: JSONObject = {"type": "array", "items": {"type": "string"}}
        elif self.kind == "records":
            schema = {"type": "array", "items": {"type": "object"}}
        else:
            schema = {"type": self.kind}
        if self.kind in ("integer", "number") and self.bounds is not None:
            if self.bounds.lo is not None:
                schema["minimum"] = self.bounds.lo
            if self.bounds.hi is not None:
                schema["maximum"] = self.bounds.hi
        if self.kind == "string":
            schema["maxLength"] = self.max_length
        if self.cap is not Cap.VALUE:
            schema["description"] = {
                Cap.SQL: "DuckDB SQL, run read-only with no file or network access",
                Cap.READ_PATH: "a path inside the server's root folder",
                Cap.WRITE_PATH: "a path inside the server's root folder",
            }.get(self.cap, "")
        if self.nullable:
            schema = {"anyOf": [schema, {"type": "null"}]}
        if not self.required:
            with contextlib.suppress(ValueError):
                schema["default"] = _as_json(self.default)
        return schema


def _as_json(value: object) -> JSONValue:
    """``value`` as JSON (a tuple as a list); ValueError when it has no JSON form (a non-finite number, an object)."""
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise ValueError(value)
    if isinstance(value, tuple | list):
        return [_as_json(v) for v in value]
    raise ValueError(type(value).__name__)


def _kind(annotation: str) -> tuple[str | None, bool]:
    text = annotation.replace("typing.", "").strip()
    nullable = False
    if text.endswith(" | None"):
        text, nullable = text[: -len(" | None")].strip(), True
    if text in _SCALARS:
        return _SCALARS[text], nullable
    if _LIST.match(text):
        return "strings", nullable
    if _RECORDS.match(text):
        return "records", nullable
    if _OBJECT.match(text):
        return "object", nullable
    return None, nullable


def fields_of(op: Operation, policy: Policy | None = None) -> tuple[Field, ...] | None:
    """The client-settable fields of ``op``; None when a required one cannot be carried."""
    policy = policy or Policy()
    out = []
    for p in op.params:
        if not policy.settable(p):
            continue
        kind, nullable = _kind(p.annotation)
        if kind is None:
            if p.required:
                return None
            continue
        assert p.cap is not None  # settable() said so
        length = p.length.hi if p.length is not None else MAX_STRING
        out.append(Field(p.name, kind, p.required, nullable, p.default, p.cap, p.bounds, length))
    return tuple(out)


def unsupplied(op: Operation, policy: Policy, configured: Mapping[str, object] | None) -> list[str]:
    """Required parameters of ``op`` that no client may set and the server's configuration lacks."""
    have = set(configured or ())
    return [p.name for p in op.params
            if p.required and not policy.settable(p) and p.cap is not Cap.INJECTED and p.name not in have]


def input_schema(op: Operation, policy: Policy | None = None) -> JSONObject:
    """A JSON Schema object for the operation's fields (MCP's inputSchema, the /ops listing)."""
    fields = fields_of(op, policy) or ()
    return {
        "type": "object",
        "properties": {f.name: f.json_schema() for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


def confine(field: Field, value: str, root: Path) -> str:
    """``value`` as a real path inside ``root`` (relative paths are taken from ``root``); BindError when not."""
    if "\x00" in value:
        raise BindError(field.name, "a path may not hold a NUL character")
    path = Path(value)
    if not path.is_absolute():
        path = root / path
    real = Path(os.path.realpath(path))
    if real != root and not real.is_relative_to(root):
        raise BindError(field.name, "is outside the server's root folder (paths are resolved, symlinks followed)")
    try:
        special = real.exists() and not (real.is_file() or real.is_dir())
    except OSError as exc:  # a name too long, a loop of links, ...
        raise BindError(field.name, f"is not a usable path ({exc.strerror or type(exc).__name__})") from None
    if special:
        raise BindError(field.name, "is not a regular file or folder")
    return str(real)


def _scalar(field: Field, value: object, from_text: bool) -> JSONScalar:
    kind = field.kind
    if kind == "string":
        if not isinstance(value, str):
            raise BindError(field.name, f"expected a string, got {type(value).__name__}")
        if value == "-":
            raise BindError(field.name, "'-' (standard input) is not available here: give the values themselves")
        if len(value) > field.max_length:
            raise BindError(field.name, f"is longer than {field.max_length:,} characters")
        return value
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if from_text and isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise BindError(field.name, f"expected true or false, got {_short(value)}")
    if kind == "integer":
        if isinstance(value, bool):
            raise BindError(field.name, "expected an integer, got a boolean")
        if isinstance(value, int):
            return _bounded(field, value)
        if from_text and isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
            return _bounded(field, int(value))
        raise BindError(field.name, f"expected an integer, got {_short(value)}")
    if kind == "number":
        if isinstance(value, bool):
            raise BindError(field.name, "expected a number, got a boolean")
        number: float
        if isinstance(value, int | float):
            number = float(value)
        elif from_text and isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                raise BindError(field.name, f"expected a number, got {_short(value)}") from None
        else:
            raise BindError(field.name, f"expected a number, got {_short(value)}")
        if not math.isfinite(number):
            raise BindError(field.name, "expected a finite number")
        return _bounded(field, number)
    raise AssertionError(kind)


def _bounded(field: Field, number: float) -> float:
    reason = field.bounds.check(number) if field.bounds is not None else None
    if reason:
        raise BindError(field.name, reason)
    return number


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _convert(field: Field, value: object, from_text: bool) -> object:
    if value is None:
        if field.nullable or not field.required:
            return None if field.nullable else field.default
        raise BindError(field.name, "is required")
    if field.kind == "strings":
        given = value if isinstance(value, list) else [value] if from_text else None
        if given is None or not all(isinstance(v, str) for v in given):
            raise BindError(field.name, "expected a list of strings")
        items = [str(v) for v in given]
        if "-" in items:
            raise BindError(field.name, "'-' (standard input) is not available here: give the values themselves")
        if any(len(v) > field.max_length for v in items):
            raise BindError(field.name, f"holds a string longer than {field.max_length:,} characters")
        return items
    if field.kind == "records":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise BindError(field.name, "expected a JSON array of objects (send it in a JSON body)")
        return value
    if field.kind == "object":
        if not isinstance(value, dict):
            raise BindError(field.name, "expected a JSON object (send it in a JSON body)")
        return value
    if from_text and isinstance(value, list):
        if len(value) != 1:
            raise BindError(field.name, "given more than once")
        value = value[0]
    return _scalar(field, value, from_text)


def bind(
    op: Operation,
    values: Mapping[str, object],
    *,
    from_text: bool = False,
    policy: Policy | None = None,
    defaults: Mapping[str, object] | None = None,
    injected: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """Keyword arguments for ``op`` from a client's ``values``; :class:`BindError` names the bad one.

    ``from_text`` says the values are query-string text (numbers and booleans parsed, a list
    from a repeated key). ``policy`` says which parameters a client may set (by default: values
    and SQL only). ``defaults`` are the server's configuration: they fill any parameter the client
    did not (or may not) set. ``injected`` are passed to the operation's :attr:`Cap.INJECTED`
    parameters of those names.
    """
    policy = policy or Policy()
    fields = fields_of(op, policy)
    if fields is None:
        raise BindError(op.name, "this operation takes a parameter no request can carry")
    known = {f.name: f for f in fields}
    params = {p.name: p for p in op.params}
    for name in sorted(set(values) - set(known)):
        if name in params:
            raise BindError(name, policy.refusal(params[name]))
        raise BindError(name, f"not a parameter of {op.name} (it takes: {', '.join(known) or 'nothing'})")
    kwargs: dict[str, object] = {}
    for name, field in known.items():
        if name in values:
            value = _convert(field, values[name], from_text)
            if field.cap.is_path and isinstance(value, str):
                assert policy.root is not None
                value = confine(field, value, policy.root)
            elif field.cap.is_path and isinstance(value, list):
                assert policy.root is not None
                value = [confine(field, str(v), policy.root) for v in value]
            kwargs[name] = value
        elif defaults and name in defaults:
            kwargs[name] = defaults[name]
        elif field.required:
            raise BindError(name, "is required")
    for name, p in params.items():
        if name in known:
            continue
        if p.cap is Cap.INJECTED:
            if injected and name in injected:
                kwargs[name] = injected[name]
        elif defaults and name in defaults:
            kwargs[name] = defaults[name]
        elif p.required:
            raise BindError(name, "is required and the server's configuration does not supply it")
    return kwargs
