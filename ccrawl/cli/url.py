"""``ccrawl url surt|canon|key|domain|shard``: reproduce a key or a shard assignment from the shell.

URLs come as arguments or on stdin (one per line, or JSONL with a ``url`` field). A URL that
cannot be handled is named on stderr and the rest of the stream carries on; the command exits 1
when every URL failed and 3 when stdin was empty.

Batch form: ``--from FILE`` (text lines, ``.gz``/``.zst``, or Parquet with ``--column``; ``-`` for
stdin) runs the compiled batch kernels in a process per core and writes the input rows with the new
columns and an ``error`` column in input order (``-o parquet --out FILE`` for a Parquet file);
``--skip-bad`` drops bad rows and counts them on stderr instead (see ``ccrawl.url.batchio``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, TypeVar

import click

from ccrawl.cli.common import InputLineError, Run, command, exit_for_stream, failing_stream, op_option
from ccrawl.errors import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

F = TypeVar("F", bound=Callable[..., None])


@click.group("url", help="URL toolkit: SURT, canonical form (canon/1), URL key, registered domain, shard.")
def url() -> None:
    pass


class _Tally:
    """Counts what went through and what failed, naming failures on stderr."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.ok = 0
        self.failed = 0

    def values(self, items: Iterable[str | InputLineError]) -> Iterator[str]:
        for item in items:
            if isinstance(item, InputLineError):
                self.failed += 1
                self.run.warn(str(item))
                continue
            yield item

    def records(self, records: Iterable[Mapping[str, object]]) -> Iterator[Mapping[str, object]]:
        for record in records:
            if record.get("error"):
                self.failed += 1
                self.run.warn(f"{record.get('url', '')}: {record['error']}")
                continue
            self.ok += 1
            yield record


def _run_op(run: Run, name: str, urls: tuple[str, ...], **params: int) -> None:
    from ccrawl import ops

    op = ops.get(name)
    tally = _Tally(run)
    if not urls or list(urls) == ["-"]:
        _run_stdin(run, name, op.columns, tally, params)
        return
    records = op(urls=tally.values(run.inputs(urls)), **params)
    single = len(urls) == 1 and urls[0] != "-"
    run.emit(failing_stream(tally.records(records), lambda: (tally.ok, tally.failed), what="URL"),
             columns=op.columns, single=single)
    exit_for_stream(tally.ok, tally.failed, what="URL")


def _run_stdin(run: Run, name: str, columns: tuple[str, ...], tally: _Tally, params: dict[str, int]) -> None:
    """URLs on stdin: read and answered a block at a time, rendered from record batches."""
    import sys

    from ccrawl.cli.urlstdin import stdin_batches

    def bad_line(error: InputLineError) -> None:
        tally.failed += 1
        run.warn(str(error))

    def failed(url: str, reason: str) -> None:
        tally.failed += 1
        run.warn(f"{url}: {reason}")

    def rows(n: int) -> None:
        tally.ok += n

    batches = stdin_batches(name, sys.stdin.buffer, params, on_bad_line=bad_line, on_failed=failed, on_rows=rows)
    run.emit_batches(failing_stream(batches, lambda: (tally.ok, tally.failed), what="URL"), columns=columns)
    exit_for_stream(tally.ok, tally.failed, what="URL")


def _batch_options(func: F) -> F:
    for option in reversed(
        [
            click.option("--from", "from_file", metavar="FILE", default=None,
                         help="Read URLs from FILE: text lines (.gz/.zst too) or Parquet; - for stdin"),
            op_option("url.batch", "column", show_default=True,
                      help="With --from Parquet: the column holding the URLs"),
            click.option("--out", "out", metavar="FILE", default=None,
                         help="With --from: write the output here (-o parquet: one Parquet file)"),
            op_option("url.batch", "skip_bad",
                      help="With --from: drop bad rows and count them on stderr, not an error column"),
            click.option("--workers", "-j", type=int, default=None,
                         help="With --from: workers, threads for the compiled kernels and processes for the"
                              " twins [one per core]"),
        ]
    ):
        func = option(func)
    return func


def _run_batch(run: Run, name: str, urls: tuple[str, ...], source: str, column: str, out: str | None,
               skip_bad: bool, workers: int | None, shards: int | None = None, only: int | None = None) -> None:
    """``--from``: the ``url.batch`` operation over a file, every input row out with the new columns, in order."""
    import sys

    from ccrawl import ops
    from ccrawl.arrowpool import prefer_retaining_pool
    from ccrawl.output import resolve_format
    from ccrawl.parquetsink import ParquetSink
    from ccrawl.url import batchio

    if urls:
        raise UsageError("give URLs as arguments or --from FILE, not both")
    prefer_retaining_pool()  # a million rows through mimalloc fault the same pages in again and again
    fmt = resolve_format(run.output.fmt, sys.stdout)
    report = batchio.BatchReport()
    batches = ops.get("url.batch").batches(command=name, source=source, column=column, skip_bad=skip_bad,
                                           workers=workers or 0, shards=shards, shard=only, report=report)
    if fmt == "parquet":
        if out is None and sys.stdout.isatty():
            raise UsageError("-o parquet writes binary data: give --out FILE or redirect stdout")
        sink = ParquetSink(out if out is not None else sys.stdout.buffer)
        try:
            for batch in batches:
                sink(batch)
            sink.close(batchio.empty_schema(name, column, skip_bad))
        except BaseException:
            sink.abort()
            raise
    else:
        _batch_records(run, name, column, out, skip_bad, batches)
    what = "row" if report.rows_in == 1 else "rows"
    if skip_bad and report.bad:
        run.warn(f"skipped {report.bad:,} bad {what} of {report.rows_in:,} (--skip-bad)")
    elif report.bad:
        run.info(f"{report.bad:,} bad {what} of {report.rows_in:,}: see the error column")
    run.emitted += report.rows_out
    if report.broken is not None:  # the rows before the break are out (and the file finished): now say so
        raise report.broken
    if report.rows_in and report.bad == report.rows_in:
        from ccrawl.errors import InputError

        raise InputError(f"every one of the {report.rows_in:,} input rows was bad (see the error column)")


def _batch_records(run: Run, name: str, column: str, out: str | None, skip_bad: bool,
                   results: Iterable[pa.RecordBatch]) -> None:
    """--from with a text format (-o tsv/jsonl/...): the result rows rendered by the usual emitter."""
    import itertools

    from ccrawl.batchout import emit_batches
    from ccrawl.url import batchio

    rest = iter(results)
    first = next(rest, None)
    if first is None:
        columns = list(batchio.empty_schema(name, column, skip_bad).names)
        batches: Iterator[pa.RecordBatch] = iter(())
    else:
        columns = list(first.schema.names)
        batches = itertools.chain([first], rest)
    if out is not None:
        with open(out, "w", encoding="utf-8", newline="") as stream:
            emit_batches(batches, run.output, columns=columns, stream=stream)
    else:
        emit_batches(batches, run.output, columns=columns)


def _leaf(name: str, op_name: str, help_text: str) -> click.Command:
    @command(name, help=help_text)
    @click.argument("urls", nargs=-1)
    @_batch_options
    def leaf(run: Run, urls: tuple[str, ...], from_file: str | None, column: str, out: str | None, skip_bad: bool,
             workers: int | None) -> None:
        if from_file is not None:
            _run_batch(run, name, urls, from_file, column, out, skip_bad, workers)
            return
        _no_batch_flags(out, skip_bad)
        _run_op(run, op_name, urls)

    return leaf


def _no_batch_flags(out: str | None, skip_bad: bool) -> None:
    if out is not None or skip_bad:
        raise UsageError("--out and --skip-bad go with --from FILE")


url.add_command(_leaf("surt", "url.surt", "SURT form of each URL (Common Crawl's url_surtkey)."))
url.add_command(_leaf("canon", "url.canon", "Canonical form of each URL under canon/1."))
url.add_command(_leaf("key", "url.key", "URL key: first 10 bytes of blake3 of the canonical URL, hex."))
url.add_command(_leaf("domain", "url.domain", "Host, registered domain (public suffix list) and shard key."))


@command("shard", help="Which of --shards machines owns each URL (FNV-1a 64 of the registered domain, mod n).")
@click.argument("urls", nargs=-1)
@click.option("--shards", type=int, default=None,
              help="How many machines split the work list (required unless --shard auto finds it)")
@click.option("--shard", "only", default=None,
              help="Only print the URLs this shard owns: an index, or auto (from the engine)")
@_batch_options
def shard(run: Run, urls: tuple[str, ...], shards: int | None, only: str | None, from_file: str | None,
          column: str, out: str | None, skip_bad: bool, workers: int | None) -> None:
    # the --from option's name is from_file: a parameter named like a global flag ("source") hides it
    def go(count: int, index: int | None) -> None:
        if from_file is not None:
            _run_batch(run, "shard", urls, from_file, column, out, skip_bad, workers, shards=count, only=index)
            return
        _no_batch_flags(out, skip_bad)
        params: dict[str, int] = {"shards": count}
        if index is not None:
            params["shard"] = index
        _run_op(run, "url.shard", urls, **params)

    if only is not None and only.strip().lower() == "auto":
        from ccrawl.scale.engine import resolve_shard

        assignment = resolve_shard(only, shards)
        go(assignment.count, assignment.index)
        return
    if shards is None:
        raise UsageError("--shards is required (or give --shard auto to read it from the engine)")
    if only is not None:
        try:
            only_index: int | None = int(only)
        except ValueError:
            raise UsageError(f"--shard {only!r}: give a 0-based index or auto") from None
    else:
        only_index = None
    go(shards, only_index)  # the operation checks the two numbers (url.shard, and url.batch for --from)


url.add_command(shard)
