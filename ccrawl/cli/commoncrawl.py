"""``crawls``, ``stats``, ``paths``, ``download``, ``get``, ``fetch`` and ``export``: Common Crawl's data.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.commoncrawl` and the engines under
:mod:`ccrawl.commoncrawl`. Content commands (``get``, ``fetch``) print raw bytes by default for
``--body``/``--text``/``--markdown``/``--headers`` (what ``curl`` would give you), and records for
``--links``/``--meta``; ``-o`` picks any other format.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.errors import UsageError
from ccrawl.jsontypes import JSONObject

F = TypeVar("F", bound=Callable[..., Any])


def crawl_of(run: Run, given: str | None = None) -> str:
    return given or run.settings.crawl or "latest"


def parse_size(value: str | int, flag: str) -> int:
    """Bytes from ``65536``, ``1MiB``, ``1GB``: :func:`ccrawl.config.parse_size` (SI and IEC units)."""
    from ccrawl.config import size_flag

    return size_flag(value, flag)


def _content(flags: dict[str, bool], allowed: tuple[str, ...]) -> str:
    chosen = [name for name in allowed if flags.pop(name, False)]
    if len(chosen) > 1:
        raise UsageError("pick one content flag: " + " or ".join(f"--{c}" for c in chosen))
    return chosen[0] if chosen else "body"


def default_format(run: Run, content: str) -> None:
    if not run.flags.get("output") and content in ("body", "text", "markdown", "headers"):
        run.flags["output"] = "raw"


def content_columns(content: str) -> tuple[str, ...]:
    from ccrawl.commoncrawl.records import COLUMNS

    return COLUMNS[content]


def _stdin_objects(run: Run) -> Iterator[JSONObject]:
    """JSON objects from stdin, one per line; a bad line is named on stderr and skipped."""
    for n, raw in enumerate(sys.stdin.buffer, start=1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            run.warn(f"stdin line {n}: not UTF-8 text, skipped")
            continue
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            run.warn(f"stdin line {n}: not valid JSON ({exc.msg}), skipped")
            continue
        if not isinstance(obj, dict):
            run.warn(f"stdin line {n}: not a JSON object, skipped")
            continue
        yield obj


# -- crawls, stats ------------------------------------------------------------------------------


@click.group("crawls", help="List, resolve, and inspect the monthly crawls.")
def crawls() -> None:
    pass


@command("list", help="List the monthly crawls, newest first.")
def crawls_list(run: Run) -> None:
    from ccrawl import ops

    op = ops.get("crawls.list")
    run.emit(op(ctx=run.context()), columns=op.columns)


@command("latest", help="Print the newest crawl ID.")
def crawls_latest(run: Run) -> None:
    from ccrawl import ops

    op = ops.get("crawls.latest")
    run.emit(op(ctx=run.context()), columns=op.columns, single=True)


@command("resolve", help="Resolve a year, latest, all, N or a comma list to crawl IDs.")
@click.argument("ref")
def crawls_resolve(run: Run, ref: str) -> None:
    from ccrawl import ops

    op = ops.get("crawls.resolve")
    run.emit(op(ref=ref, ctx=run.context()), columns=op.columns)


def _info(run: Run, crawl: str, kinds: str | None) -> None:
    from ccrawl import ops

    op = ops.get("crawls.info")
    wanted = [k.strip() for k in kinds.split(",") if k.strip()] if kinds else None
    run.emit(op(crawl=crawl, kinds=wanted, ctx=run.context()), columns=op.columns)


@command("info", help="File counts per archive kind for a crawl (the same rows as stats).")
@click.argument("crawl_id", required=False)
@click.option("--kinds", help="Comma list of kinds to count (default: all)")
def crawls_info(run: Run, crawl_id: str | None, kinds: str | None) -> None:
    _info(run, crawl_of(run, crawl_id), kinds)


for _cmd in (crawls_list, crawls_latest, crawls_resolve, crawls_info):
    crawls.add_command(_cmd)


@command("stats", help="Show the shape of a crawl (-c): file counts per archive kind.")
@click.option("--kinds", help="Comma list of kinds to count (default: all)")
def stats(run: Run, kinds: str | None) -> None:
    _info(run, crawl_of(run), kinds)


# -- paths, download ----------------------------------------------------------------------------


@command("paths", help="List the archive file paths for a crawl. -o url prints full URLs.")
@click.argument("kind", required=False)
@click.option("--kinds", "list_kinds", is_flag=True, help="List the kinds and exit")
def paths(run: Run, kind: str | None, list_kinds: bool) -> None:
    from ccrawl import ops
    from ccrawl.commoncrawl.manifests import MANIFESTS

    if list_kinds:
        run.emit(({"kind": k, "manifest": m} for k, m in MANIFESTS.items()), columns=("kind", "manifest"))
        return
    if not kind:
        raise UsageError("paths needs a kind: " + ", ".join(MANIFESTS))
    op = ops.get("cc.paths")
    run.emit(op(kind=kind, crawl=crawl_of(run), ctx=run.context()), columns=op.columns)


@command("download", help="Download whole archive files for a crawl (resumable). - reads paths on stdin.")
@click.argument("kind")
@click.option("--out", default=None, help="Directory to download into [.]")
@op_option("cc.download", "flat", help="Drop the source tree: every file directly under --out")
def download(run: Run, kind: str, out: str | None, flat: bool) -> None:
    from ccrawl import ops

    op = ops.get("cc.download")
    library = run.settings.library_dir if run.flags.get("library") else None
    if library is not None and out is not None:
        raise UsageError("--out and --library both say where files go; drop one (--library-dir moves the library)")
    paths_in = None
    if kind == "-":
        paths_in = []
        for value in run.inputs(["-"], field="path"):
            if isinstance(value, str):
                paths_in.append(value)
            else:
                run.warn(str(value))
    if run.dry_run:
        run.info("download: --dry-run lists what would be fetched")
        listed = paths_in if paths_in is not None else [
            r["path"] for r in ops.get("cc.paths")(kind=kind, crawl=crawl_of(run), ctx=run.context())
        ]
        run.emit(({"path": p} for p in listed), columns=("path",))
        return
    run.emit(
        op(kind=None if kind == "-" else kind, paths=paths_in, crawl=crawl_of(run), out=out or ".", flat=flat,
           workers=int(run.settings.workers or 8), limit=run.output.limit, library=library,
           ctx=run.context()),
        columns=op.columns,
    )


# -- get, fetch ---------------------------------------------------------------------------------

_GET_CONTENT = ("text", "markdown", "links", "headers")
_FETCH_CONTENT = ("body", "text", "markdown", "links", "headers", "meta")


def _content_options(names: tuple[str, ...]) -> Callable[[F], F]:
    helps = {
        "body": "The HTTP response body (default)",
        "text": "Readable plain text",
        "markdown": "The page as Markdown",
        "links": "Outbound links, one row each",
        "headers": "The HTTP status and headers",
        "meta": "The record's metadata, no payload",
    }

    def decorate(func: F) -> F:
        for name in reversed(names):
            func = click.option(f"--{name}", name, is_flag=True, help=helps[name])(func)
        return func

    return decorate


@command("get", help="Fetch what Common Crawl captured for a URL (the newest capture in the -c crawls).")
@click.argument("url")
@_content_options(_GET_CONTENT)
def get(run: Run, url: str, **flags: bool) -> None:
    from ccrawl import ops

    content = _content(flags, _GET_CONTENT)
    default_format(run, content)
    op = ops.get("cc.get")
    run.emit(op(url=url, content=content, crawl=crawl_of(run), ctx=run.context()),
             columns=content_columns(content), single=True)


@command("fetch", help="Retrieve WARC records by --file/--offset/--length, or JSONL locations on stdin (-).")
@click.argument("source", required=False)
@click.option("--file", "file_", help="WARC file path (crawl-data/...) or URL")
@click.option("--offset", type=int, help="Byte offset of the record")
@click.option("--length", type=int, help="Byte length of the record")
@_content_options(_FETCH_CONTENT)
@click.option("--dir", "to_dir", is_flag=True, help="Write one file per record into --out-dir")
@click.option("--out-dir", default="fetched", show_default=True, help="Directory for --dir")
@op_option("cc.fetch", "batch", help="Coalesce nearby records in the same WARC file into shared ranged GETs")
@click.option("--gap", default="1MiB", show_default=True, help="Coalesce records at most this many bytes apart")
@click.option("--max-span", default="16MiB", show_default=True, help="Never read more than this in one GET")
@op_option("cc.fetch", "order", type=click.Choice(["file", "input"]), show_default=True,
           help="Emit in the order on disk or the order given")
@op_option("cc.fetch", "lookahead", show_default=True,
           help="Ranged GETs allowed to run ahead of the writer")
@op_option("cc.fetch", "ledger", help="File of finished locations (filename@offset), to skip on a resume")
def fetch(run: Run, source: str | None, file_: str | None, offset: int | None, length: int | None,
          to_dir: bool, out_dir: str, batch: bool, gap: str, max_span: str, order: str, lookahead: int,
          ledger: str | None, **flags: bool) -> None:
    from ccrawl import ops

    content = _content(flags, _FETCH_CONTENT)
    if file_ is not None or offset is not None or length is not None:
        if source is not None or None in (file_, offset, length):
            raise UsageError("--file, --offset and --length go together, and not with - (stdin)")
        locations: Iterable[Mapping[str, object]] = [{"filename": file_, "offset": offset, "length": length}]
    elif source in (None, "-"):
        if source is None and sys.stdin.isatty():
            raise UsageError("fetch needs --file, --offset and --length, or JSONL locations on stdin (fetch -)")
        locations = _stdin_objects(run)
    else:
        raise UsageError(f"fetch reads locations from --file/--offset/--length or - (stdin), not {source!r}")
    gap_b, span_b = parse_size(gap, "--gap"), parse_size(max_span, "--max-span")
    if run.dry_run:
        if not batch:
            raise UsageError("--dry-run reports the grouping of --batch; add --batch")
        plan = ops.get("cc.fetch_plan")(locations=locations, gap=gap_b, max_span=span_b, ledger=ledger,
                                        ctx=run.context())
        click.echo(next(iter(plan))["plan"])
        return
    op = ops.get("cc.fetch")
    records = op(locations=locations, content=content, batch=batch, gap=gap_b, max_span=span_b, order=order,
                 lookahead=lookahead, ledger=ledger, to_dir=out_dir if to_dir else None, ctx=run.context())
    if to_dir:
        run.emit(records, columns=("url", "filename", "offset", "path", "bytes"))
        return
    default_format(run, content)
    run.emit(records, columns=content_columns(content))


# -- export -------------------------------------------------------------------------------------


@command("export", help="Write matching captures (a query, or - for JSONL locations) into .warc.gz files "
                        "that open with a warcinfo record of provenance.")
@click.argument("target")
@op_option("cc.export", "prefix", show_default=True, help="File name prefix")
@op_option("cc.export", "subprefix", help="Second part of the file name")
@click.option("--size", default="1GB", show_default=True, help="Rotate files at this many bytes")
@op_option("cc.export", "out_dir", show_default=True, help="Directory to write the files into")
@op_option("cc.export", "creator", help="warcinfo creator")
@op_option("cc.export", "operator", help="warcinfo operator")
@op_option("cc.export", "strict", help="Fail the run if an index page or a record cannot be read")
@op_option("cc.search", "match", type=click.Choice(["exact", "prefix", "host", "domain"]),
           help="Match type of the query")
@click.option("--from", "from_ts", help="Earliest capture date")
@click.option("--to", "to_ts", help="Latest capture date")
@op_option("cc.search", "status", help="HTTP status, e.g. 200")
@op_option("cc.search", "mime", help="Media type, e.g. text/html")
@op_option("cc.search", "lang", help="ISO 639-3 language code")
@click.option("--filter", "filters", multiple=True, help="Raw CDX filter (repeatable)")
@click.option("--url-fgrep", multiple=True, help="Keep URLs containing this substring (sent as a regex filter)")
@click.option("--url-fgrepv", multiple=True, help="Drop URLs containing this substring (sent as a regex filter)")
@click.option("--no-push-filters", is_flag=True, help="Keep the URL substring filters here, off the wire")
def export(run: Run, target: str, prefix: str, subprefix: str | None, size: str, out_dir: str,
           creator: str | None, operator: str | None, strict: bool, **query: object) -> None:
    from ccrawl import ops

    ctx = run.context()
    if target == "-":
        if any(v for v in query.values()):
            raise UsageError("query flags (--status, --mime, ...) apply to a query, not to - (stdin locations)")
        locations: Iterable[Mapping[str, object]] = _stdin_objects(run)
    else:
        search = ops.get("cc.search")
        locations = search(
            url=target, crawl=crawl_of(run), match=query["match"], status=query["status"], mime=query["mime"],
            lang=query["lang"], filters=query["filters"], url_contains=query["url_fgrep"],
            url_not_contains=query["url_fgrepv"], from_ts=query["from_ts"], to_ts=query["to_ts"],
            push_filters=not query["no_push_filters"], strict=strict, limit=run.output.limit,
            ctx=ctx,
        )
    size_b = parse_size(size, "--size")
    op = ops.get("cc.export")
    run.emit(op(locations=locations, prefix=prefix, subprefix=subprefix, size=size_b, out_dir=out_dir,
                creator=creator, operator=operator, strict=strict, ctx=ctx), columns=op.columns)
