"""``ccrawl markdown``: build Markdown Parquet datasets from Common Crawl (parsing and rendering only).

``export`` converts the HTML Common Crawl captured (``ccrawl.markdown.export``); ``refetch`` fetches
every URL of a shard live through the recrawl engine and converts that (``ccrawl.markdown.refetch``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ccrawl.cli.common import Run, command, op_option


@click.group("markdown", help="Build Markdown Parquet datasets from Common Crawl WARCs and publish them.")
def markdown() -> None:
    pass


def _size(flag: str, value: str) -> int:
    from ccrawl.cli.commoncrawl import parse_size

    return parse_size(value, flag)


def _locations(run: Run, source: str) -> Iterator[Any]:
    """Locations from a JSONL file or stdin (``-``); a bad line is named on stderr and skipped."""
    from ccrawl.commoncrawl.records import location_from_line
    from ccrawl.errors import InputError, UsageError

    if source == "-":
        stream: Any = sys.stdin
    else:
        try:
            stream = open(source, encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise UsageError(f"--locations {source}: cannot open ({exc.strerror})") from None
    try:
        for n, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                yield location_from_line(line, lineno=n)
            except InputError as exc:
                run.warn(f"markdown export: {exc}; skipped")
    finally:
        if stream is not sys.stdin:
            stream.close()


def _keep(run: Run, command: str, keep: bool, keep_parquet: bool) -> bool:
    """``--keep``, or its deprecated spelling ``--keep-parquet`` (still honoured, with one line saying so)."""
    if keep_parquet:
        run.warn(f"{command}: --keep-parquet is deprecated; use --keep (the same flag as every publish command)")
    return keep or keep_parquet


def _task_share(run: Run, spec: str, task: str, tasks: int | None) -> str:
    """``--shards`` cut down to this task's share (round robin), as an explicit list for the exporter."""
    from ccrawl.errors import UsageError
    from ccrawl.markdown.units import parse_shards
    from ccrawl.scale.engine import resolve_shard, take

    assignment = resolve_shard(task, tasks)
    if spec.strip().lower() in ("", "all"):
        raise UsageError(f"--shard {task} needs an explicit --shards N-M (the manifest's length is not known "
                         "before it is read; give the range every task shares)")
    mine = take(parse_shards(spec, 1 << 62), assignment)
    run.info(f"markdown export: {assignment.describe().replace('shard', 'task', 1)}: "
             f"{len(mine)} of the manifest shards {spec}")
    if not mine:
        from ccrawl.errors import NothingMatched

        raise NothingMatched(f"markdown export: task {assignment.index} of {assignment.count} has no shard of "
                             f"--shards {spec}")
    return ",".join(str(i) for i in mine)


@command("export", help="Convert the HTML Common Crawl captured to Markdown Parquet.")
@op_option("markdown.export", "shards", help="Shards of the crawl's manifest: N, N-M, N,M or all")
@click.option("--task", "--shard", "task", default=None,
              help="Take only this task's share of --shards (every count-th): an index, or auto (from the engine)")
@click.option("--tasks", type=int, default=None, help="How many tasks split --shards [the engine's count]")
@click.option("--source-kind", type=click.Choice(["warc", "wet"]), default=None,
              help="Manifest to read: warc or wet (default: what the extractor needs)")
@op_option("markdown.export", "extractor", help="Engine: h2m (default), readability, raw or wet")
@op_option("markdown.export", "lang", help="Keep only documents detected as this ISO 639-3 language, e.g. vie")
@op_option("markdown.export", "min_lang_confidence", help="Confidence a document must clear for --lang")
@op_option("markdown.export", "dedup_digest", help="Skip records whose payload digest was already seen in the shard")
@click.option("--locations", default=None, help="Convert the records of this JSONL location stream, - for stdin")
@op_option("markdown.export", "part_size", help="Locations per Parquet part (default 50000)")
@click.option("--gap", default="1MiB", help="Coalesce records closer than this into one ranged read (default 1 MiB)")
@click.option("--max-span", default="16MiB", help="Cap on one coalesced ranged read (default 16 MiB)")
@op_option("markdown.export", "parallel", help="Shards built at once (default 1)")
@op_option("markdown.export", "workers",
           help="Conversion processes shared by every shard; 1 converts in this process, 0 one per CPU")
@op_option("markdown.export", "limit", help="Convert at most this many documents per shard (0 = all)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("md"),
              help="Local directory for shards, the ledger and the journal (default ./md)")
@click.option("--push", type=click.BOOL, default=True, is_flag=False, flag_value=True,
              help="Commit to the dataset repo (default); --push=false builds locally only")
@op_option("markdown.export", "repo", help="Dataset repo to commit to, owner/name")
@op_option("markdown.export", "commit_batch", help="Shards per commit (default 10)")
@click.option("--keep", "keep", is_flag=True,
              help="Keep the local shards after upload; by default each is deleted once its commit lands")
@click.option("--keep-parquet", "keep_parquet", is_flag=True, hidden=True,
              help="Deprecated spelling of --keep")
@op_option("markdown.export", "min_free_gb", help="Pause new shards while free disk is under this")
@click.option("--ledger", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ledger of finished shards (default <out>/.committed); rerunning resumes from it")
@op_option("markdown.export", "skip_errors",
           help="Report a shard or page that fails and go on, instead of stopping the run")
@op_option("markdown.export", "executor", type=click.Choice(["local", "ray"]), show_default=True,
           help="Where units are built: here, or a Ray task per WARC/WET file (pip install 'ccrawl[ray]')")
@op_option("markdown.export", "ray_address",
           help="Ray cluster to join [$RAY_ADDRESS, else a local one sized to this machine]")
def export(run: Run, shards: str, task: str | None, tasks: int | None, source_kind: str | None, extractor: str,
           lang: str, min_lang_confidence: float,
           dedup_digest: bool, locations: str | None, part_size: int, gap: str, max_span: str, parallel: int,
           workers: int, limit: int, out: Path, push: bool, repo: str, commit_batch: int, keep: bool,
           keep_parquet: bool, min_free_gb: float, ledger: Path | None, skip_errors: bool, executor: str,
           ray_address: str) -> None:
    from ccrawl import ops

    if task is not None:
        shards = _task_share(run, shards, task, tasks)
    op = ops.get("markdown.export")
    run.emit(op(
        out=str(out), crawl=str(run.settings.crawl or ""), shards=shards, source_kind=source_kind or "",
        extractor=extractor, lang=lang, min_lang_confidence=min_lang_confidence, dedup_digest=dedup_digest,
        locations=_locations(run, locations) if locations is not None else None, part_size=part_size,
        gap=_size("--gap", gap), max_span=_size("--max-span", max_span), parallel=parallel, workers=workers,
        limit=limit, push=push, repo=repo, commit_batch=commit_batch,
        keep_parquet=_keep(run, "markdown export", keep, keep_parquet), min_free_gb=min_free_gb,
        ledger=str(ledger or ""), skip_errors=skip_errors, endpoint=str(run.settings.hf_endpoint or "") if push else "",
        journal=str(run.flags.get("journal") or ""), executor=executor, ray_address=ray_address,
        ctx=run.context(run.warn),
    ), columns=op.columns, verdict=True)


markdown.add_command(export)


@command("refetch", help="Re-fetch every URL in a shard live, then convert to Markdown Parquet.")
@op_option("markdown.refetch", "shards", help="Shards of the crawl's warc.paths: N, N-M, N,M or all")
@op_option("markdown.refetch", "extractor", help="Engine: h2m (default), readability or raw")
@op_option("markdown.refetch", "lang", help="Keep only pages detected as this ISO 639-3 language (failures are kept)")
@op_option("markdown.refetch", "min_lang_confidence", help="Confidence a page must clear for --lang")
@op_option("markdown.refetch", "fetch_workers", help="Requests in flight (default 64)")
@op_option("markdown.refetch", "fetch_only", help="Fetch and store the capture columns, no Markdown")
@click.option("--rate", default="1s", help="Minimum gap between two requests to one host (default 1s)")
@click.option("--timeout", default="30s", help="Per-request timeout (default 30s)")
@op_option("markdown.refetch", "max_redirects",
           help="Redirect hops followed per URL; a longer chain is a failed row (default 5)")
@click.option("--warc-cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where downloaded shards are kept for the next run (default <out>/.warc-cache)")
@op_option("markdown.refetch", "no_warc_cache", help="Delete each shard's WARC once its URLs are read")
@op_option("markdown.refetch", "limit", help="Fetch at most this many URLs per shard (0 = all)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("md"),
              help="Local directory for shards, the ledger and the journal (default ./md)")
@click.option("--push", type=click.BOOL, default=True, is_flag=False, flag_value=True,
              help="Commit to the dataset repo (default); --push=false builds locally only")
@op_option("markdown.refetch", "repo", help="Dataset repo to commit to, owner/name")
@op_option("markdown.refetch", "commit_batch", help="Shards per commit (default 10)")
@click.option("--keep", "keep", is_flag=True,
              help="Keep the local shards after upload; by default each is deleted once its commit lands")
@click.option("--keep-parquet", "keep_parquet", is_flag=True, hidden=True,
              help="Deprecated spelling of --keep")
@click.option("--ledger", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ledger of finished shards (default <out>/.committed); rerunning resumes from it")
@op_option("markdown.refetch", "skip_errors", help="Report a shard that fails and go on")
def refetch(run: Run, shards: str, extractor: str, lang: str, min_lang_confidence: float, fetch_workers: int,
            fetch_only: bool, rate: str, timeout: str, max_redirects: int, warc_cache_dir: Path | None,
            no_warc_cache: bool, limit: int, out: Path, push: bool, repo: str, commit_batch: int, keep: bool,
            keep_parquet: bool, ledger: Path | None, skip_errors: bool) -> None:
    from ccrawl import ops
    from ccrawl.cli.publish import duration_arg

    op = ops.get("markdown.refetch")
    run.emit(op(
        out=str(out), shards=shards, crawl=str(run.settings.crawl or ""), extractor=extractor, lang=lang,
        min_lang_confidence=min_lang_confidence, fetch_workers=fetch_workers, fetch_only=fetch_only,
        delay=duration_arg("--rate", rate), timeout=duration_arg("--timeout", timeout), max_redirects=max_redirects,
        warc_cache_dir=str(warc_cache_dir or ""), no_warc_cache=no_warc_cache, limit=limit, push=push, repo=repo,
        commit_batch=commit_batch, keep_parquet=_keep(run, "markdown refetch", keep, keep_parquet),
        ledger=str(ledger or ""), skip_errors=skip_errors, endpoint=str(run.settings.hf_endpoint or "") if push else "",
        journal=str(run.flags.get("journal") or ""), ctx=run.context(run.warn),
    ), columns=op.columns)


markdown.add_command(refetch)
