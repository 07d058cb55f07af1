"""``ccrawl recrawl run``: parse the flags, call :func:`ccrawl.recrawl.run_recrawl`, print the summary."""

from __future__ import annotations

from typing import Any

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.errors import UsageError


def parse_size(value: str, flag: str) -> int:
    """Bytes from ``--shard-size`` and the like: :func:`ccrawl.config.parse_size` (SI and IEC units)."""
    from ccrawl.config import size_flag

    return size_flag(value, flag)


def parse_seconds(value: str, flag: str) -> float:
    from ccrawl.config import duration_flag

    return duration_flag(value, flag)


def check_local_source(source: str) -> None:
    """A ``--from`` that names a local path which is not there says so, before it is taken for a repo id."""
    from pathlib import Path

    from ccrawl.recrawl.worklist import SHORTHANDS

    if source in SHORTHANDS:
        return
    path = Path(source).expanduser()
    if path.is_dir() or path.is_file():
        return
    if path.exists():
        raise UsageError(f"--from {source!r} is neither a file nor a directory: give a list of URLs")
    parent = path.parent
    looks_local = (source.startswith(("/", ".", "~")) or source.count("/") != 1
                   or (str(parent) not in ("", ".") and parent.is_dir()))
    if looks_local:
        raise UsageError(f"--from {source!r}: no such file or directory (a local work list is a text, JSONL, CSV or "
                         "Parquet file, or a directory of them; a Hub dataset is written owner/name)")


def _defaults() -> dict[str, Any]:
    """Every RunParams default, so a flag's default is the library's (one place: params.py)."""
    import dataclasses

    from ccrawl.recrawl.params import RunParams

    return {f.name: f.default for f in dataclasses.fields(RunParams) if f.default is not dataclasses.MISSING}


D = _defaults()


def _size_text(n: int) -> str:
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


@command("run", help="Walk a published dataset and fetch every URL in it, resumable from a checkpoint.")
@click.option("--from", "source", required=True,
              help="Work list: a text file (one URL a line), JSONL, CSV or Parquet file, a directory of them, "
              "domains, urls or a dataset repo ID")
@op_option("recrawl.run", "release", "--dir", help="Directory of parts inside the dataset [the newest release]")
@op_option("recrawl.run", "column",
           help="Column (JSONL field) holding the work, domain or url [url; domain for --from domains]")
@op_option("recrawl.run", "out", help="Directory to write output files into (empty fetches without archiving)")
@click.option("--format", "fmt", type=click.Choice(["parquet", "warc"]), default=D["format"], show_default=True)
@op_option("recrawl.run", "state", help="Checkpoint file, so a killed run resumes where it stopped "
           "[with --out: <out>/.ccrawl-state.json, so the same command resumes]")
@click.option("--delay", default=f"{D['delay']:g}s", show_default=True,
              help="Minimum spacing between two requests to one host")
@op_option("recrawl.run", "max_pages", show_default=True,
           help="Stop after this many fetches (0 = no limit)")
@op_option("recrawl.run", "robots", help="Check robots.txt before fetching (off by default on a recrawl)")
@op_option("recrawl.run", "no_extract", help="Store the body without rendering it to text and Markdown")
@op_option("recrawl.run", "extractor", show_default=True, help="Engine that renders a page to Markdown")
@op_option("recrawl.run", "extractors", help="Extract processes [from the core count: see docs/recrawl.md]")
@click.option("--shard-size", default=_size_text(D["shard_size"]), show_default=True,
              help="Rotate to a new output shard past this payload (MB = 10^6 bytes, MiB = 2^20)")
@op_option("recrawl.run", "prefix", show_default=True, help="File name prefix for the output files")
@op_option("recrawl.run", "writers", help="Writer processes, each with its own open file [from the core count; "
           "a --no-extract Parquet run without it writes in its fetch processes]")
@op_option("recrawl.run", "batch", show_default=True, help="Work items between WARC checkpoints")
@op_option("recrawl.run", "queue_mb", show_default=True,
           help="MB of finished work that may wait between stages (a quarter more for work read ahead)")
@click.option("--shard", default=str(D["shard"]), show_default=True,
              help="Which partition of the work list, 0-based, or auto (from Slurm, Kubernetes or RANK)")
@click.option("--shards", type=int, default=None, help="How many machines split the work list [1, or the engine's]")
@op_option("recrawl.run", "workers", "--workers", "-j", show_default=True, help="Concurrent fetches in total")
@op_option("recrawl.run", "fetchers", help="Fetch processes [from the core count: see docs/recrawl.md]")
@op_option("recrawl.run", "dns_lookups", help="DNS lookups in flight [workers/8, floored at 16, capped at 128]")
@click.option("--robots-timeout", default=f"{D['robots_timeout']:g}s", show_default=True,
              help="Budget for one host's robots.txt")
@click.option("--timeout", default=f"{D['timeout']:g}s", show_default=True,
              help="Budget for one fetch, redirects included")
@click.option("--start-timeout", default=f"{D['start_timeout']:g}s", show_default=True,
              help="Fail (exit 75) naming a pipeline process that has not reported ready this long after its start")
@click.option("--stall-timeout", default=f"{D['stall_timeout']:g}s", show_default=True,
              help="Fail (exit 75, checkpoint written) naming a pipeline process silent this long with work left")
@click.option("--waiting-after", default=f"{D['waiting_after']:g}s", show_default=True,
              help="When nothing has moved this long, the progress names which stage waits on what")
@op_option("recrawl.run", "previous",
           help="Earlier capture directory: send its validators, store 304s as unchanged rows")
@op_option("recrawl.run", "profile_dir", help="Write a CPU and a heap profile per process into this directory")
@op_option("recrawl.run", "profile_name", show_default=True,
           help="Name the profile files, to diff runs")
@click.option("--resolve", multiple=True, help="Resolver override HOST=IP or '*.suffix=IP' (repeatable)")
@click.option("--allow-private-addresses", is_flag=True, default=None,
              help="Also fetch loopback, private and link-local addresses [setting allow_private_addresses]")
def run(run: Run, source: str, fmt: str, delay: str, shard_size: str, robots_timeout: str, timeout: str,
        start_timeout: str, stall_timeout: str, waiting_after: str, resolve: tuple[str, ...], shard: str,
        shards: int | None, allow_private_addresses: bool | None,
        **flags: Any) -> None:
    from ccrawl import ops
    from ccrawl.fetch.config import parse_resolve
    from ccrawl.recrawl.summary import RunSummary
    from ccrawl.scale.engine import resolve_shard

    assignment = resolve_shard(shard, shards)
    flags.update(shard=assignment.index, shards=assignment.count)
    check_local_source(source)
    records = ops.get("recrawl.run")(
        source=source,
        format=fmt,
        delay=parse_seconds(delay, "--delay"),
        shard_size=parse_size(shard_size, "--shard-size"),
        robots_timeout=parse_seconds(robots_timeout, "--robots-timeout"),
        timeout=parse_seconds(timeout, "--timeout"),
        start_timeout=parse_seconds(start_timeout, "--start-timeout"),
        stall_timeout=parse_seconds(stall_timeout, "--stall-timeout"),
        waiting_after=parse_seconds(waiting_after, "--waiting-after"),
        resolve=parse_resolve(resolve),
        allow_private_addresses=bool(run.settings.allow_private_addresses if allow_private_addresses is None
                                     else allow_private_addresses),
        journal=run.flags.get("journal"),
        metrics_addr=run.flags.get("metrics_addr"),
        ctx=run.context(),
        **{k: v for k, v in flags.items() if v is not None or k in ("column", "release", "out", "state")},
    )
    record = next(iter(records))
    summary = RunSummary(**record)
    for line in summary.lines():
        run.info(line)
    if not summary.state:
        run.warn("recrawl run: no --out and no --state, so nothing was archived or checkpointed "
                 "and a rerun fetches the whole work list again")
    if assignment.source != "flag" or assignment.count > 1:
        run.info(f"recrawl: this run was {assignment.describe()}")
    if run.flags.get("output"):
        run.emit([{**record, **assignment.as_dict()}], single=True)
