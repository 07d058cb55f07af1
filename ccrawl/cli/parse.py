"""``ccrawl parse``: decode local WARC/WAT/WET files (or stdin) into records.

Parsing and rendering only; the reading is :mod:`ccrawl.warc.reader` behind ``warc.parse``.
"""

from __future__ import annotations

import click

from ccrawl.cli.common import Run, command, op_type


@command("parse", help="Decode a local WARC/WAT/WET file (or - for stdin) into records.")
@click.argument("files", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["warc", "wat", "wet"]), help="Force the format")
@click.option("--type", "types", multiple=True, help="WARC-Type to keep, e.g. response (repeatable, or a comma list)")
@click.option("--status", type=op_type("warc.parse", "status"), help="HTTP status to keep")
@click.option("--mime", help="Media type prefix to keep, e.g. text/html")
@click.option("--lang", help="ISO 639-3 language to keep, e.g. eng")
@click.option("--url", help="Keep target URIs containing this (a glob when it has *)")
@click.option("--text", is_flag=True, help="Add the page text (content flags combine: each adds its fields)")
@click.option("--markdown", is_flag=True, help="Add the page as Markdown")
@click.option("--links", is_flag=True, help="Add the page's outlinks")
@click.option("--meta", is_flag=True, help="Add title, description, canonical, declared language")
@click.option("--skip-bad-records", is_flag=True, help="Report bad records on stderr and carry on")
@click.option("--verify-digests", is_flag=True, help="Treat a record whose sha1 digest does not match as bad")
def parse(
    run: Run,
    files: tuple[str, ...],
    fmt: str | None,
    types: tuple[str, ...],
    status: int | None,
    mime: str | None,
    lang: str | None,
    url: str | None,
    text: bool,
    markdown: bool,
    links: bool,
    meta: bool,
    skip_bad_records: bool,
    verify_digests: bool,
) -> None:
    from ccrawl import ops
    from ccrawl.ops.parse import detect_format

    op = ops.get("warc.parse")
    content = tuple(k for k, on in (("text", text), ("markdown", markdown), ("links", links), ("meta", meta)) if on)
    batches = op.batches(
        files=files, format=fmt, types=types, status=status, mime=mime, lang=lang, url=url, content=content,
        skip_bad_records=skip_bad_records, verify_digests=verify_digests, ctx=run.context(),
    )
    run.emit_batches(batches, columns=parse_columns(op.columns, content=content, lang=lang,
                                                    wet=fmt == "wet" or any(detect_format(f) == "wet" for f in files)))


def parse_columns(base: tuple[str, ...], *, content: tuple[str, ...], lang: str | None, wet: bool) -> tuple[str, ...]:
    """The columns of this run: the record's, then what each content flag adds (they add up; every
    format shows them), then ``note`` and ``info`` (what a warcinfo record is, which has no URL or status)."""
    from ccrawl.ops.parse import CONTENT_COLUMNS, content_kinds

    extra: list[str] = []
    if wet or lang:
        extra.append("content_language")
    if wet:
        extra.append("text")
    for kind in content_kinds(content):
        extra += [c for c in CONTENT_COLUMNS[kind] if c != "note"]
    if content:
        extra.append("note")
    return tuple(dict.fromkeys([*base, *extra, "info"]))
