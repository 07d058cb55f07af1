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
@click.option("--shards", type=int, required=True, help="How many machines split the work list")
@click.option("--shard", "only", type=int, default=None, help="Only print the URLs this shard owns")
def shard(run: Run, urls: tuple[str, ...], shards: int, only: int | None) -> None:
    if shards < 1:
        raise UsageError(f"--shards must be at least 1, not {shards}")
    if only is not None and not 0 <= only < shards:
        raise UsageError(f"--shard {only} is outside 0..{shards - 1} for --shards {shards}")
    params: dict[str, Any] = {"shards": shards}
    if only is not None:
        params["shard"] = only
    _run_op(run, "url.shard", urls, **params)


url.add_command(shard)
