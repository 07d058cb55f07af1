"""Renders any record stream as table, json, jsonl, csv, tsv, url, raw or parquet.

Data goes to stdout and nothing else does. A value nothing measured is ``None``: it is left out
of JSON and JSONL and printed as a blank cell in table, CSV and TSV, where the column stays, so
the shape of the output does not depend on what a run happened to measure.

``-o auto`` is a table on a terminal and JSONL when piped. ``--fields`` picks and orders the
columns, ``--template`` renders each record through ``{{.field}}`` substitutions (the subset of
Go templates the original tool's users write), ``--no-header`` drops the header row and ``-n``
stops after that many records.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from ccrawl.errors import UsageError

FORMATS = ("auto", "table", "json", "jsonl", "csv", "tsv", "url", "raw", "parquet")
_TABLE_CELL_MAX = 80
_TEMPLATE_FIELD = re.compile(r"{{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*}}")
_TEMPLATE_ANY = re.compile(r"{{.*?}}")


@dataclass(slots=True)
class OutputOptions:
    """How a command's records are rendered; the CLI fills it from the global flags."""

    fmt: str = "auto"
    fields: list[str] = field(default_factory=list)
    template: str | None = None
    no_header: bool = False
    limit: int = 0

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise UsageError(f"-o/--output: unknown format {self.fmt!r}; choose one of {', '.join(FORMATS)}")
        if self.limit < 0:
            raise UsageError(f"-n/--limit must be 0 or more, not {self.limit}")
        if self.template is not None:
            leftover = _TEMPLATE_ANY.sub(
                lambda m: "" if _TEMPLATE_FIELD.fullmatch(m.group(0)) else m.group(0), self.template
            )
            bad = _TEMPLATE_ANY.search(leftover)
            if bad:
                raise UsageError(
                    f"--template: {bad.group(0)!r} is not supported; write fields as {{{{.name}}}}"
                )


def parse_fields(value: str | None) -> list[str]:
    """``--fields a,b,c`` as a list, blanks dropped."""
    if not value:
        return []
    return [f.strip() for f in value.split(",") if f.strip()]


def resolve_format(fmt: str, stream: object) -> str:
    """``auto`` becomes table on a terminal and jsonl otherwise."""
    if fmt != "auto":
        return fmt
    isatty = getattr(stream, "isatty", None)
    return "table" if isatty is not None and isatty() else "jsonl"


def json_default(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def to_json(record: Mapping[str, object], *, indent: int | None = None) -> str:
    """A record as JSON, leaving out values nothing measured (None)."""
    clean = {k: v for k, v in record.items() if v is not None}
    return json.dumps(clean, ensure_ascii=False, default=json_default, indent=indent)


def cell(value: object) -> str:
    """A value as a table/CSV cell: None is blank, bytes show their size, containers are JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=json_default)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class _RowWriter(Protocol):
    """A ``csv.writer``: one row of cells at a time."""

    def writerow(self, row: Iterable[object], /) -> object: ...


class Renderer:
    """Writes records to a text stream in one format; ``close()`` finishes the document."""

    def __init__(
        self, fmt: str, stream: IO[str], *, columns: Sequence[str] = (), fields: Sequence[str] = (),
        template: str | None = None, no_header: bool = False, single: bool = False,
    ) -> None:
        self.fmt = fmt
        self.stream = stream
        self.declared = list(columns)
        self.fields = list(fields)
        self.template = template
        self.no_header = no_header
        self.single = single
        self.columns: list[str] | None = None
        self.count = 0
        self._buffer: list[Mapping[str, object]] = []
        self._csv: _RowWriter | None = None

    # columns are fixed by the first record: declared columns (or the first record's keys),
    # narrowed and ordered by --fields
    def _fix_columns(self, record: Mapping[str, object]) -> list[str]:
        base = self.declared or list(record.keys())
        if self.fields:
            known = set(base) | set(record.keys())
            unknown = [f for f in self.fields if f not in known]
            if unknown:
                raise UsageError(
                    f"--fields: unknown field {unknown[0]!r}; this command's fields are {', '.join(base)}"
                )
            return list(self.fields)
        return base

    def _project(self, record: Mapping[str, object]) -> dict[str, object]:
        assert self.columns is not None
        if self.fields or self.declared:
            return {c: record.get(c) for c in self.columns}
        return dict(record)

    def write(self, record: Mapping[str, object]) -> None:
        if self.columns is None:
            self.columns = self._fix_columns(record)
        self.count += 1
        if self.template is not None:
            self.stream.write(_render_template(self.template, record) + "\n")
            return
        row = self._project(record)
        fmt = self.fmt
        if fmt == "jsonl":
            self.stream.write(to_json(row) + "\n")
        elif fmt in ("json", "table"):
            self._buffer.append(row)
        elif fmt in ("csv", "tsv"):
            if self._csv is None:
                self._csv = csv.writer(self.stream, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
                if not self.no_header:
                    self._csv.writerow(self.columns)
            self._csv.writerow([cell(row.get(c)) for c in self.columns])
        elif fmt == "url":
            url = record.get("url")
            if url is None:
                raise UsageError("-o url needs records with a url field; this command's fields are "
                                 + ", ".join(self.columns))
            self.stream.write(f"{url}\n")
        elif fmt == "raw":
            value = _raw_value(record, self.columns)
            if isinstance(value, bytes | bytearray | memoryview):
                self.stream.flush()
                buffer = getattr(self.stream, "buffer", None)
                if buffer is not None:
                    buffer.write(bytes(value))
                    buffer.flush()
                else:
                    self.stream.write(bytes(value).decode("utf-8", "replace"))
            else:
                text = cell(value)
                self.stream.write(text if text.endswith("\n") else text + "\n")
        else:
            raise UsageError(f"-o {fmt} is not a text format")

    def close(self) -> None:
        if self.fmt == "json" and self.template is None:
            if self.single and not self._buffer:
                pass  # a one-target command that produced nothing says so on stderr, not with []
            elif self.single and len(self._buffer) == 1:
                self.stream.write(to_json(self._buffer[0], indent=2) + "\n")
            else:
                self.stream.write("[\n")
                for i, row in enumerate(self._buffer):
                    sep = ",\n" if i < len(self._buffer) - 1 else "\n"
                    self.stream.write("  " + to_json(row, indent=2).replace("\n", "\n  ") + sep)
                self.stream.write("]\n")
        elif self.fmt == "table" and self.template is None and self.columns is not None:
            _write_table(self.stream, self.columns, self._buffer, self.no_header)
        elif self.fmt in ("csv", "tsv") and self.columns is None and self.declared and not self.no_header:
            # no records: the header still says what the columns would have been
            cols = self.fields or self.declared
            csv.writer(self.stream, delimiter="," if self.fmt == "csv" else "\t", lineterminator="\n").writerow(cols)
        self.stream.flush()


_RAW_KEYS = ("body", "raw", "content", "text", "markdown")


def _raw_value(record: Mapping[str, object], columns: Sequence[str]) -> object:
    """The payload ``-o raw`` prints: a body-like field, else the last column (commands put it last)."""
    for key in _RAW_KEYS:
        if key in record and key in columns:
            return record[key]
    for key in _RAW_KEYS:
        if key in record:
            return record[key]
    return record.get(columns[-1]) if columns else ""


def _render_template(template: str, record: Mapping[str, object]) -> str:
    text = template.replace("\\t", "\t").replace("\\n", "\n")
    return _TEMPLATE_FIELD.sub(lambda m: cell(record.get(m.group(1))), text)


def _clip(text: str) -> str:
    text = text.replace("\n", " ").replace("\t", " ")
    return text if len(text) <= _TABLE_CELL_MAX else text[: _TABLE_CELL_MAX - 1] + "…"


def _write_table(stream: IO[str], columns: list[str], rows: list[Mapping[str, object]], no_header: bool) -> None:
    cells = [[_clip(cell(r.get(c))) for c in columns] for r in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    if not no_header:
        stream.write("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n")
    for row in cells:
        stream.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")


def write_parquet_records(records: Iterable[Mapping[str, object]], columns: Sequence[str], stream: IO[Any]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = getattr(stream, "buffer", stream)
    writer: pq.ParquetWriter | None = None
    count = 0
    batch: list[Mapping[str, object]] = []

    def flush() -> None:
        nonlocal writer
        if not batch:
            return
        cols = list(columns) or list(batch[0].keys())
        table = pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in batch])
        if writer is None:
            writer = pq.ParquetWriter(target, table.schema, compression="zstd")
        writer.write_table(table.cast(writer.schema))
        batch.clear()

    for record in records:
        batch.append(record)
        count += 1
        if len(batch) >= 10_000:
            flush()
    flush()
    if writer is not None:
        writer.close()
    return count


def _limited(records: Iterable[Mapping[str, object]], limit: int) -> Iterator[Mapping[str, object]]:
    if limit <= 0:
        yield from records
        return
    for n, record in enumerate(records, start=1):
        yield record
        if n >= limit:
            break


def emit(
    records: Iterable[Mapping[str, object]],
    options: OutputOptions,
    *,
    columns: Sequence[str] = (),
    stream: IO[Any] | None = None,
    single: bool = False,
) -> int:
    """Render ``records`` to ``stream`` (stdout) and return how many were written.

    ``columns`` is the command's declared column order, which keeps the table and CSV shape
    stable when a value is missing. ``single`` marks a one-target command whose ``-o json`` is
    one object rather than an array of one.
    """
    stream = sys.stdout if stream is None else stream
    fmt = resolve_format(options.fmt, stream)
    limited = _limited(records, options.limit)
    try:
        if fmt == "parquet" and options.template is None:
            isatty = getattr(stream, "isatty", None)
            if isatty is not None and isatty():
                raise UsageError("-o parquet writes binary data; redirect stdout to a file")
            cols = options.fields or list(columns)
            return write_parquet_records(limited, cols, stream)
        renderer = Renderer(
            fmt, stream, columns=columns, fields=options.fields, template=options.template,
            no_header=options.no_header, single=single,
        )
        for record in limited:
            renderer.write(record)
        renderer.close()
        return renderer.count
    finally:
        close = getattr(limited, "close", None)
        if close is not None:
            close()
        inner = getattr(records, "close", None)
        if inner is not None:
            inner()


def render_to_string(records: Iterable[Mapping[str, object]], fmt: str, **kwargs: Any) -> str:
    """Convenience for tests and servers: the rendered text of ``records``."""
    buf = io.StringIO()
    emit(records, OutputOptions(fmt=fmt, **kwargs), stream=buf)
    return buf.getvalue()


def format_size(n: int, *, step: int = 1024, units: Sequence[str] = ("B", "KiB", "MiB", "GiB", "TiB")) -> str:
    """``n`` bytes in the largest unit below ``step`` (whole bytes, else one decimal).

    Each caller keeps the convention its readers know: the library's ``KiB`` (``step`` 1024),
    the Hub card's decimal ``KB`` (1000, as the Hub shows sizes), ``--explain``'s ``KB`` of 1024.
    """
    value = float(n)
    for unit in units:
        if value < step or unit == units[-1]:
            return f"{value:.0f} {unit}" if unit == units[0] else f"{value:.1f} {unit}"
        value /= step
    return f"{n} {units[0]}"
