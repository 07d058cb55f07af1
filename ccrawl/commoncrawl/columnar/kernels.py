"""The few Arrow compute kernels the native engine calls, through ``call_function``.

``import pyarrow.compute`` builds a Python wrapper, with its docstring, for each of Arrow's hundreds
of kernels: 0.1-0.3 s of a ``columnar count`` here, more than the query. The kernels are the same
when called by name on the compiled module (``pyarrow._compute``, which ``pyarrow.compute`` re-exports),
so the engine calls them so and a command pays for the ones it runs. (``Array.cast``, ``Table.filter``
and ``Array.dictionary_encode`` import ``pyarrow.compute`` too, hence :func:`cast` and :func:`filter_`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

try:
    from pyarrow import _compute
except ImportError:  # pragma: no cover - a pyarrow that moved it: the public module has the same names
    import pyarrow.compute as _compute

if TYPE_CHECKING:
    from typing import TypeAlias

    from pyarrow import Array, ChunkedArray, DataType, Scalar, StructArray, Table

    Values: TypeAlias = "Array | ChunkedArray"
    Operand: TypeAlias = "Array | ChunkedArray | Scalar"


def equal(a: Operand, b: Operand) -> Values:
    return _compute.call_function("equal", [a, b])


def is_in(values: Values, value_set: Array) -> Values:
    """True where the value is in ``value_set``; a missing value is not (nulls matched: never)."""
    return _compute.call_function("is_in", [values], _compute.SetLookupOptions(value_set))


def fill_null(values: Values, fill: object) -> Values:
    """``values`` with every missing one ``fill`` (a Python value of their type)."""
    import pyarrow as pa

    return _compute.call_function("coalesce", [values, pa.scalar(fill, type=values.type)])


def take(values: Values, indices: Values) -> Values:
    return _compute.call_function("take", [values, indices], _compute.TakeOptions(boundscheck=True))


def indices_nonzero(values: Values) -> Array:
    return _compute.call_function("indices_nonzero", [values])


def invert(values: Values) -> Values:
    return _compute.call_function("invert", [values])


def or_(a: Values, b: Values) -> Values:
    return _compute.call_function("or", [a, b])


def and_(a: Values, b: Values) -> Values:
    return _compute.call_function("and", [a, b])


def is_null(values: Values) -> Values:
    return _compute.call_function("is_null", [values], _compute.NullOptions(nan_is_null=False))


def starts_with(values: Values, prefix: str) -> Values:
    return _compute.call_function("starts_with", [values], _compute.MatchSubstringOptions(prefix))


def any_true(values: Values) -> bool:
    """Whether any value is true (missing ones skipped)."""
    return bool(_compute.call_function("any", [values], _compute.ScalarAggregateOptions()).as_py())


def count_true(values: Values) -> int:
    """How many values are true (the sum of a boolean column; missing ones skipped)."""
    return int(_compute.call_function("sum", [values], _compute.ScalarAggregateOptions()).as_py() or 0)


def value_counts(values: Values) -> StructArray:
    return _compute.call_function("value_counts", [values])


def cast(values: Values, target: DataType) -> Values:
    """``values.cast(target)`` (a safe cast) without importing ``pyarrow.compute``."""
    return _compute.call_function("cast", [values], _compute.CastOptions.safe(target))


def filter_(table: Table, mask: Values) -> Table:
    """``table.filter(mask)`` (missing mask values drop the row) without importing ``pyarrow.compute``."""
    return _compute.call_function("filter", [table, mask], _compute.FilterOptions())
