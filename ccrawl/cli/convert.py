"""``ccrawl convert``: WARC/WAT/WET archives to Parquet or JSONL (parsing and rendering only)."""

from __future__ import annotations

from pathlib import Path

import click

from ccrawl.cli.common import Run, command, op_option


@command("convert", help="Convert WARC/WAT/WET archives to Parquet or JSONL.")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--to", "fmt", type=click.Choice(["parquet", "jsonl"]), default="parquet",
              help="Output format (default parquet)")
@click.option("-O", "--out", type=click.Path(path_type=Path), default=None,
              help="Output file, or directory for several inputs (default: beside each input)")
@op_option("convert", "markdown", help="Render HTML bodies to Markdown on the way (a markdown column)")
@op_option("convert", "skip_bad_records", help="Report a corrupt record and carry on past it")
def convert(run: Run, source: Path, fmt: str, out: Path | None, markdown: bool, skip_bad_records: bool) -> None:
    from ccrawl import ops

    library = str(run.settings.library_dir) if run.flags.get("library") else None
    op = ops.get("convert")
    # every archive converted before the first row is written, as the records have always come out
    run.emit(list(op(source=str(source), to=fmt, out=str(out) if out is not None else "", markdown=markdown,
                     skip_bad_records=skip_bad_records, library=library, ctx=run.context())), columns=op.columns)
