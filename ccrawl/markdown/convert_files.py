"""``ccrawl convert``: WARC, WAT and WET files to Parquet or JSONL, one row per record.

=================  =========  ==========================================================
column             type       what
=================  =========  ==========================================================
file               VARCHAR    the input file
offset, length     BIGINT     where the record sits in it (NULL for non-chunked gzip)
type               VARCHAR    ``WARC-Type``
url                VARCHAR    ``WARC-Target-URI``
date               VARCHAR    ``WARC-Date``
status             INTEGER    HTTP status (NULL for records without an HTTP message)
mime               VARCHAR    the payload's media type
record_id          VARCHAR    ``WARC-Record-ID``
content_language   VARCHAR    WET: Common Crawl's identified languages (comma list)
http_headers       VARCHAR    HTTP headers as a JSON list of ``[name, value]`` pairs
payload            BLOB       the HTTP body (encodings undone), or the record block
markdown           VARCHAR    only with ``--markdown``: HTML bodies rendered by h2m
=================  =========  ==========================================================

In JSONL, ``payload`` is the text when it is valid UTF-8, else base64 with
``"payload_encoding": "base64"``. Output is written to ``<name>.tmp`` and renamed, so a file
at the output path is always whole; records are streamed in batches, so memory stays bounded
whatever the input size.

With a library root, an input inside it at ``<crawl>/<kind>/<file>`` is written to
``<crawl>/<format>/<kind>/<file>`` and recorded in the manifest (size, sha256).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ccrawl import durable
from ccrawl.errors import InputError, NothingMatched, UsageError
from ccrawl.jsontypes import Record

CONVERT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("file", "VARCHAR"),
    ("offset", "BIGINT"),
    ("length", "BIGINT"),
    ("type", "VARCHAR"),
    ("url", "VARCHAR"),
    ("date", "VARCHAR"),
    ("status", "INTEGER"),
    ("mime", "VARCHAR"),
    ("record_id", "VARCHAR"),
    ("content_language", "VARCHAR"),
    ("http_headers", "VARCHAR"),
    ("payload", "BLOB"),
)
_SUFFIXES = (".warc.gz", ".warc", ".wat.gz", ".wet.gz", ".arc.gz")
_HTML = ("text/html", "application/xhtml+xml")
BATCH_ROWS = 1000


@dataclass(slots=True)
class Converted:
    """One input converted: where the output went, how many rows, its size and sha256."""

    source: Path
    output: Path
    rows: int
    bytes: int
    sha256: str
    library_path: str | None = None


def inputs_of(path: Path) -> list[Path]:
    """The archive files named by ``path``: itself, or every archive under a directory (sorted)."""
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))
        if not found:
            raise NothingMatched(f"{path}: no WARC, WAT or WET files in it")
        return found
    raise UsageError(f"{path}: no such file or directory")


def output_name(source: Path, fmt: str) -> str:
    """``x.warc.gz`` -> ``x.warc.parquet``, ``x.warc.wet.gz`` -> ``x.warc.wet.jsonl``."""
    name = source.name
    if name.endswith(".gz"):
        name = name[:-3]
    return f"{name}.{fmt}"


def _rows(source: Path, markdown: bool, skip_bad: bool) -> Iterator[Record]:
    from ccrawl.extract.model import NO_LINKS_BUDGET
    from ccrawl.warc.reader import decode_payload, iter_records

    engine = None
    if markdown:
        from ccrawl.extract.engines import get_extractor

        engine = get_extractor("h2m")
    for rec in iter_records(source, skip_bad_records=skip_bad):
        payload = decode_payload(rec) if rec.http_headers is not None else rec.payload
        row: Record = {
            "file": str(source), "offset": rec.offset, "length": rec.length, "type": rec.warc_type, "url": rec.url,
            "date": rec.date, "status": rec.http_status, "mime": rec.mime or None, "record_id": rec.record_id,
            "content_language": ",".join(rec.languages) or None,
            "http_headers": json.dumps(rec.http_headers) if rec.http_headers is not None else None,
            "payload": payload,
        }
        if engine is not None:
            html = rec.warc_type in ("response", "resource") and rec.mime in _HTML
            row["markdown"] = (engine.extract(payload, rec.url or "", content_type=rec.http_header("Content-Type"),
                                              budget=NO_LINKS_BUDGET).markdown if html else None)
        yield row


def _jsonl_line(row: Record) -> str:
    out = dict(row)
    payload = out.pop("payload")
    assert isinstance(payload, bytes)  # _rows puts the record's payload bytes there
    try:
        out["payload"] = payload.decode("utf-8")
    except UnicodeDecodeError:
        out["payload"] = base64.b64encode(payload).decode("ascii")
        out["payload_encoding"] = "base64"
    return json.dumps({k: v for k, v in out.items() if v is not None}, ensure_ascii=False) + "\n"


def convert_file(source: Path, dest: Path, *, fmt: str = "parquet", markdown: bool = False,
                 skip_bad_records: bool = False) -> Converted:
    """Convert one archive to ``dest`` (atomically); an empty archive is NothingMatched (exit 3)."""
    if fmt not in ("parquet", "jsonl"):
        raise UsageError(f"--to {fmt!r}: use parquet or jsonl")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = durable.in_progress(dest)
    rows = 0
    try:
        if fmt == "jsonl":
            with open(tmp, "w", encoding="utf-8") as fh:
                for row in _rows(source, markdown, skip_bad_records):
                    fh.write(_jsonl_line(row))
                    rows += 1
        else:
            rows = _write_parquet(tmp, _rows(source, markdown, skip_bad_records), markdown, source)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not rows:
        tmp.unlink(missing_ok=True)
        raise NothingMatched(f"{source}: no records in it")
    durable.replace(tmp, dest, sync_file=False)
    return Converted(source, dest, rows, dest.stat().st_size, digest)


def _write_parquet(tmp: Path, rows: Iterator[Record], markdown: bool, source: Path) -> int:
    import shlex
    import sys

    import pyarrow.parquet as pq

    from ccrawl import __version__
    from ccrawl.markdown.schema import arrow_schema, rows_to_table

    columns = CONVERT_COLUMNS + ((("markdown", "VARCHAR"),) if markdown else ())
    schema = arrow_schema(columns).with_metadata({
        "ccrawl.version": __version__, "ccrawl.source": str(source), "ccrawl.command": shlex.join(sys.argv),
        "ccrawl.extractor": "h2m" if markdown else "",
    })
    count = 0
    with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
        batch: list[Record] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH_ROWS:
                writer.write_table(rows_to_table(batch, columns).cast(schema))
                count += len(batch)
                batch = []
        if batch:
            writer.write_table(rows_to_table(batch, columns).cast(schema))
            count += len(batch)
    return count


def plan_outputs(
    sources: list[Path], *, fmt: str, out: Path | None, library: Path | None
) -> list[tuple[Path, Path, str | None]]:
    """(source, destination, library path) for each input; refuses two inputs onto one output."""
    plans: list[tuple[Path, Path, str | None]] = []
    if library is not None:
        from ccrawl.store.library import layout_of, relpath

        root = library.resolve()
        for src in sources:
            try:
                rel = src.resolve().relative_to(root).as_posix()
            except ValueError:
                raise UsageError(f"--library: {src} is not inside the library {root}") from None
            placed = layout_of(rel)
            if placed is None or placed[2] != "raw":
                raise UsageError(f"--library: {rel} is not a raw archive at <crawl>/<kind>/<file>")
            crawl, kind, _ = placed
            target = relpath(crawl, kind, output_name(src, fmt), fmt)
            plans.append((src, root / target, target))
        return plans
    for src in sources:
        if out is not None and (len(sources) == 1 and not out.is_dir() and out.suffix in (".parquet", ".jsonl")):
            plans.append((src, out, None))
        else:
            folder = out if out is not None else src.parent
            plans.append((src, folder / output_name(src, fmt), None))
    dests = [d for _, d, _ in plans]
    if len(set(dests)) != len(dests):
        raise UsageError("two inputs would be written to the same output file: give -O a directory")
    return plans


def record_in_library(library: Path, converted: Converted) -> None:
    """Add a converted file to the library manifest (under its lock)."""
    from ccrawl.store.library import Library

    if converted.library_path is None:
        raise InputError("not a library conversion")
    lib = Library(library)
    lib.record([lib.artifact(converted.library_path, size=converted.bytes, sha256=converted.sha256)])
