"""Batch URL kernels over pyarrow arrays: the shared pure-Python row loop of the twins.

The compiled kernels (``surt_array``, ``registered_domain_array``, ``shard_key_array``,
``shard_array``, ``canonical_array``, ``url_key_array``) run their C pass with the GIL released;
their twins here call the per-call pure-Python function on each row. Both take a sequence of str
or a pyarrow string array and return a pyarrow array in input order, null for a null or bad row;
``with_errors=True`` adds a string array with each bad row's message (null elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeAlias

from ccrawl.errors import CcrawlError

if TYPE_CHECKING:
    import pyarrow as pa

#: A column of URLs as the batch kernels take it: a pyarrow string array, or any iterable of str/None.
UrlColumn: TypeAlias = "Iterable[str | None] | pa.Array | pa.ChunkedArray"


def rows_of(urls: UrlColumn) -> list[str | None]:
    """The rows of a pyarrow array or any iterable of str/None, as a list."""
    import pyarrow as pa

    if isinstance(urls, pa.ChunkedArray | pa.Array):
        values: list[str | None] = urls.to_pylist()
        return values
    return list(urls)


def map_rows(
    func: Callable[[str], object], urls: UrlColumn, with_errors: bool, kind: pa.DataType | None = None
) -> pa.Array | tuple[pa.Array, pa.StringArray]:
    """``func`` on every row: a pyarrow array of ``kind`` (string by default), null for null or bad rows."""
    import pyarrow as pa

    values: list[object] = []
    errors: list[str | None] = []
    failed = False
    for row in rows_of(urls):
        if row is None:
            values.append(None)
            errors.append(None)
            continue
        try:
            values.append(func(row))
            errors.append(None)
        except CcrawlError as exc:
            values.append(None)
            errors.append(str(exc))
            failed = True
    result = pa.array(values, type=kind if kind is not None else pa.string())
    if not with_errors:
        return result
    return result, pa.array(errors, type=pa.string()) if failed else pa.nulls(len(values), pa.string())


def lines_array_py(block: bytes, first_line: int = 1) -> tuple[pa.StringArray, pa.StringArray]:
    """Twin of the compiled ``lines_array``: one row per line, bad lines null with their reason."""
    import pyarrow as pa

    if not block:
        return pa.array([], pa.string()), pa.array([], pa.string())
    if block.endswith(b"\n"):
        block = block[:-1]
    urls: list[str | None] = []
    errors: list[str | None] = []
    for number, line in enumerate(block.split(b"\n"), start=first_line):
        if line.endswith(b"\r"):
            line = line[:-1]
        reason = None
        if not line:
            reason = "empty line"
        elif b"\x00" in line:
            reason = "binary data (a NUL byte), not a line of text"
        else:
            try:
                urls.append(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                reason = f"not UTF-8 text (byte {exc.start})"
        if reason is not None:
            urls.append(None)
            errors.append(f"line {number}: {reason}")
        else:
            errors.append(None)
    failed = any(e is not None for e in errors)
    return pa.array(urls, pa.string()), pa.array(errors, pa.string()) if failed else pa.nulls(len(urls), pa.string())
