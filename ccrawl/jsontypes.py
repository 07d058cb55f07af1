"""Names for JSON-shaped values, so a signature says what it carries instead of ``Any``.

``JSONValue`` is what :func:`json.loads` can return; ``Record`` is one output row (column name to
value) as the renderers and servers take it. Read a ``Record``'s values with ``isinstance`` narrowing;
``Mapping[str, object]`` is the read-only form for parameters.
"""

from __future__ import annotations

from typing import TypeAlias

JSONScalar: TypeAlias = bool | int | float | str | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]
Record: TypeAlias = dict[str, object]

__all__ = ["JSONObject", "JSONScalar", "JSONValue", "Record"]
