"""``ccrawl url surt|canon|key|domain|shard``: reproduce a key or a shard assignment from the shell.

URLs come as arguments or on stdin (one per line, or JSONL with a ``url`` field). A URL that
cannot be handled is named on stderr and the rest of the stream carries on; the command exits 1
when every URL failed and 3 when stdin was empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import click

from ccrawl.cli.common import InputLineError, Run, command, exit_for_stream
from ccrawl.errors import UsageError


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

    def records(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        for record in records:
            if record.get("error"):
                self.failed += 1
                self.run.warn(f"{record.get('url', '')}: {record['error']}")
                continue
            self.ok += 1
            yield record


def _run_op(run: Run, name: str, urls: tuple[str, ...], **params: Any) -> None:
    from ccrawl import ops

    op = ops.get(name)
    tally = _Tally(run)
    records = op(urls=tally.values(run.inputs(urls)), **params)
    single = len(urls) == 1 and urls[0] != "-"
    run.emit(tally.records(records), columns=op.columns, single=single)
    exit_for_stream(tally.ok, tally.failed, what="URL")


def _leaf(name: str, op_name: str, help_text: str) -> click.Command:
    @command(name, help=help_text)
    @click.argument("urls", nargs=-1)
    def leaf(run: Run, urls: tuple[str, ...]) -> None:
        _run_op(run, op_name, urls)

    return leaf


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
def shard(run: Run, urls: tuple[str, ...], shards: int | None, only: str | None) -> None:
    if only is not None and only.strip().lower() == "auto":
        from ccrawl.scale.engine import resolve_shard

        assignment = resolve_shard(only, shards)
        _run_op(run, "url.shard", urls, shards=assignment.count, shard=assignment.index)
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
    if shards < 1:
        raise UsageError(f"--shards must be at least 1, not {shards}")
    if only_index is not None and not 0 <= only_index < shards:
        raise UsageError(f"--shard {only_index} is outside 0..{shards - 1} for --shards {shards}")
    params: dict[str, Any] = {"shards": shards}
    if only_index is not None:
        params["shard"] = only_index
    _run_op(run, "url.shard", urls, **params)


url.add_command(shard)
