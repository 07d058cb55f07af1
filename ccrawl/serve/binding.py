"""Typed parameters of a registered operation, bound from HTTP or MCP values.

``serve`` and ``mcp`` have no per-operation code: each reads an operation's parameters off the
registry (:class:`ccrawl.ops.Param`, annotations as written in the function) and turns them into
fields of a few JSON kinds. A value that does not fit its field is refused with the reason, before
the operation runs. Parameters the front end supplies itself (the Common Crawl client options, the
notice callback) are never taken from a request. An operation with a required parameter of a type
no request can carry is not exposed at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ccrawl.ops import Operation

#: parameters the front end fills in, never the caller
INJECTED = frozenset({"client_options", "notice", "live"})

_LIST = re.compile(r"^(?:Iterable|Sequence|list|tuple)\[str(?:, \.\.\.)?\]$")
_RECORDS = re.compile(r"^(?:Iterable|Sequence|list)\[(?:Mapping|dict)\[str, Any\]\]$")
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
    default: Any

    def json_schema(self) -> dict[str, Any]:
        if self.kind == "strings":
            schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        elif self.kind == "records":
            schema = {"type": "array", "items": {"type": "object"}}
        else:
            schema = {"type": self.kind}
        if self.nullable:
            schema = {"anyOf": [schema, {"type": "null"}]}
        if not self.required and _json_safe(self.default):
            schema["default"] = list(self.default) if isinstance(self.default, tuple) else self.default
        return schema


def _json_safe(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool | tuple | list)


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


def fields_of(op: Operation) -> tuple[Field, ...] | None:
    """The caller-settable fields of ``op``; None when a required parameter cannot be carried."""
    out = []
    for p in op.params:
        if p.name in INJECTED:
            continue
        kind, nullable = _kind(p.annotation)
        if kind is None:
            if p.required:
                return None
            continue
        out.append(Field(p.name, kind, p.required, nullable, p.default))
    return tuple(out)


def input_schema(op: Operation) -> dict[str, Any]:
    """A JSON Schema object for the operation's fields (MCP's inputSchema, the /ops listing)."""
    fields = fields_of(op) or ()
    return {
        "type": "object",
        "properties": {f.name: f.json_schema() for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


def _scalar(field: Field, value: Any, from_text: bool) -> Any:
    kind = field.kind
    if kind == "string":
        if not isinstance(value, str):
            raise BindError(field.name, f"expected a string, got {type(value).__name__}")
        if value == "-":
            raise BindError(field.name, "'-' (standard input) is not available here: give the values themselves")
        return value
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if from_text and isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise BindError(field.name, f"expected true or false, got {value!r}")
    if kind == "integer":
        if isinstance(value, bool):
            raise BindError(field.name, "expected an integer, got a boolean")
        if isinstance(value, int):
            return value
        if from_text and isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
            return int(value)
        raise BindError(field.name, f"expected an integer, got {value!r}")
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
                raise BindError(field.name, f"expected a number, got {value!r}") from None
        else:
            raise BindError(field.name, f"expected a number, got {value!r}")
        if not math.isfinite(number):
            raise BindError(field.name, "expected a finite number")
        return number
    raise AssertionError(kind)


def _convert(field: Field, value: Any, from_text: bool) -> Any:
    if value is None:
        if field.nullable or not field.required:
            return None if field.nullable else field.default
        raise BindError(field.name, "is required")
    if field.kind == "strings":
        items = value if isinstance(value, list) else [value] if from_text else None
        if items is None or not all(isinstance(v, str) for v in items):
            raise BindError(field.name, "expected a list of strings")
        if "-" in items:
            raise BindError(field.name, "'-' (standard input) is not available here: give the values themselves")
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
    values: Mapping[str, Any],
    *,
    from_text: bool = False,
    defaults: Mapping[str, Any] | None = None,
    injected: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``op`` from caller ``values``; :class:`BindError` names the bad one.

    ``from_text`` says the values are query-string text (numbers and booleans parsed, a list
    from a repeated key). ``defaults`` fill fields the caller left out (the server's global
    flags); ``injected`` are passed to the parameters of :data:`INJECTED` the operation has.
    """
    fields = fields_of(op)
    if fields is None:
        raise BindError(op.name, "this operation takes a parameter no request can carry")
    known = {f.name: f for f in fields}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise BindError(unknown[0], f"not a parameter of {op.name} (it takes: {', '.join(known) or 'nothing'})")
    kwargs: dict[str, Any] = {}
    for name, field in known.items():
        if name in values:
            kwargs[name] = _convert(field, values[name], from_text)
        elif defaults and name in defaults:
            kwargs[name] = defaults[name]
        elif field.required:
            raise BindError(name, "is required")
    taken = {p.name for p in op.params}
    for name, value in (injected or {}).items():
        if name in taken:
            kwargs[name] = value
    return kwargs
