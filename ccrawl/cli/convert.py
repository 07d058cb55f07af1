"""``ccrawl convert``: WARC/WAT/WET archives to Parquet or JSONL (parsing and rendering only)."""

from __future__ import annotations

from pathlib import Path

import click

from ccrawl.cli.common import Run, command


@command("convert", help="Convert WARC/WAT/WET archives to Parquet or JSONL.")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--to", "fmt", type=click.Choice(["parquet", "jsonl"]), default="parquet",
              help="Output format (default parquet)")
@click.option("-O", "--out", type=click.Path(path_type=Path), default=None,
              help="Output file, or directory for several inputs (default: beside each input)")
@click.option("--markdown", is_flag=True, help="Render HTML bodies to Markdown on the way (a markdown column)")
@click.option("--skip-bad-records", is_flag=True, help="Report a corrupt record and carry on past it")
def convert(run: Run, source: Path, fmt: str, out: Path | None, markdown: bool, skip_bad_records: bool) -> None:
    from ccrawl.markdown.convert_files import convert_file, inputs_of, plan_outputs, record_in_library

    library = Path(run.settings.library_dir).expanduser() if run.flags.get("library") else None
    if library is not None and out is not None:
        from ccrawl.errors import UsageError

        raise UsageError("--library writes beside the raw files in the library layout: leave out -O")
    plans = plan_outputs(inputs_of(source), fmt=fmt, out=out, library=library)
    records = []
    for src, dest, lib_path in plans:
        done = convert_file(src, dest, fmt=fmt, markdown=markdown, skip_bad_records=skip_bad_records)
        done.library_path = lib_path
        if library is not None:
            record_in_library(library, done)
        records.append({"source": str(src), "output": str(dest), "rows": done.rows, "bytes": done.bytes,
                        "sha256": done.sha256, "library": lib_path})
        run.info(f"convert: {src.name}: {done.rows} records -> {dest}")
    run.emit(records, columns=("source", "output", "rows", "bytes", "sha256", "library"))
