"""``ccrawl library list|du|verify|gc|scan``: inspect, verify and collect the dataset library.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.library` over
:mod:`ccrawl.store.library`. The library root is the ``library_dir`` setting (``--library-dir``,
``CCRAWL_LIBRARY``). ``-c`` is read from the command line only and against the crawls the library
holds, so a configured default crawl never hides part of the library.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.errors import CcrawlError, NothingMatched, UsageError


@click.group("library", help="Inspect, verify, and collect the dataset library (library.json under --library-dir).")
def library() -> None:
    pass


def _root(run: Run) -> str:
    return str(run.settings.library_dir)


def _crawl(run: Run) -> str | None:
    value = run.flags.get("crawl")
    return str(value) if value else None


@command("list", help="List the artifacts the manifest records (-c, --kind, --format narrow; -n caps).")
@op_option("library.list", "kind", help="Only this kind: warc, wet, wat, ... [all]")
@click.option("--format", "fmt", default=None, help="Only this format: raw, parquet, jsonl [all]")
def library_list(run: Run, kind: str | None, fmt: str | None) -> None:
    from ccrawl import ops

    op = ops.get("library.list")
    shown = run.emit(op(root=_root(run), crawl=_crawl(run), kind=kind, format=fmt, limit=run.output.limit),
                     columns=op.columns)
    if shown == 0:
        raise NothingMatched(f"the library at {_root(run)} records no artifacts"
                             + (" matching -c/--kind/--format" if _crawl(run) or kind or fmt else
                                " (download with --library, or run `ccrawl library scan`)"))


@command("du", help="Report library size per crawl (--by kind|format), with a total row.")
@op_option("library.du", "by", type=click.Choice(["crawl", "kind", "format"]), show_default=True,
           help="Grouping")
@op_option("library.du", "kind", help="Only this kind [all]")
@click.option("--format", "fmt", default=None, help="Only this format [all]")
def library_du(run: Run, by: str, kind: str | None, fmt: str | None) -> None:
    from ccrawl import ops

    op = ops.get("library.du")
    run.emit(op(root=_root(run), by=by, crawl=_crawl(run), kind=kind, format=fmt),
             columns=(by, "files", "bytes", "size"))


class _Problems:
    """Counts the failing problems in a verify stream as it is rendered."""

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}

    def watch(self, rows: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        from ccrawl.ops.library import FAILURES

        for row in rows:
            if row.get("problem") in FAILURES:
                self.failures[str(row["problem"])] = self.failures.get(str(row["problem"]), 0) + 1
            yield row


@command("verify", help="Rehash every artifact; report missing, resized, corrupt (exit 1) and untracked files.")
@op_option("library.verify", "quick", help="Check existence and size only, no rehash")
@op_option("library.verify", "kind", help="Only this kind [all]")
def library_verify(run: Run, quick: bool, kind: str | None) -> None:
    from ccrawl import ops

    op = ops.get("library.verify")
    problems = _Problems()
    rows = op(root=_root(run), quick=quick, crawl=_crawl(run), kind=kind, workers=int(run.settings.workers or 4),
              ctx=run.context(run.info))
    run.emit(problems.watch(rows), columns=op.columns)
    if problems.failures:
        what = ", ".join(f"{n} {name}" for name, n in problems.failures.items())
        raise CcrawlError(f"library verify: {what}; re-download those files, or drop them with library gc")


@command("gc", help="Delete artifacts older than a cutoff (and/or of -c, --kind). Dry run unless --yes.")
@click.option("--older-than", default=None, help="Age cutoff: 30d, 8w, or a Go duration such as 12h")
@op_option("library.gc", "kind", help="Only this kind [all]")
@op_option("library.gc", "yes", help="Really delete (without it, print what would be deleted)")
def library_gc(run: Run, older_than: str | None, kind: str | None, yes: bool) -> None:
    from ccrawl import ops
    from ccrawl.config import parse_duration

    seconds = None
    if older_than is not None:
        try:
            seconds = parse_duration(older_than)
        except ValueError as exc:
            raise UsageError(f"--older-than {older_than!r}: {exc}") from None
    op = ops.get("library.gc")
    really = yes and not run.dry_run
    run.emit(op(root=_root(run), older_than=seconds, crawl=_crawl(run), kind=kind, yes=really,
                ctx=run.context(run.info)), columns=op.columns)


@command("scan", help="Hash the files on disk that fit the layout and record them in the manifest.")
@op_option("library.scan", "rehash", help="Rehash files already recorded at the same size")
def library_scan(run: Run, rehash: bool) -> None:
    from ccrawl import ops

    op = ops.get("library.scan")
    run.emit(op(root=_root(run), rehash=rehash, workers=int(run.settings.workers or 4), ctx=run.context(run.info)),
             columns=op.columns)


for _cmd in (library_list, library_du, library_verify, library_gc, library_scan):
    library.add_command(_cmd)
