"""``ccrawl content extract|outlinks|quality|lang <url|->``: live-fetch pages and report on them.

One URL as the argument, several arguments, or ``-`` (or nothing) to read a list from stdin:
one URL per line or JSONL with a ``url`` field. The fetch uses the crawler's client (10 MB body
cap, gzip/deflate/br/zstd, redirects followed, one request per host per ``--delay``), ``-j``
URLs at a time. A URL that cannot be used is named on stderr and the rest carry on; the
command exits 1 when every URL failed and 3 when stdin was empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import click

from ccrawl.cli.common import (
    ALLOW_PRIVATE,
    InputLineError,
    Run,
    allow_private,
    command,
    exit_for_stream,
    failing_stream,
    op_option,
)


@click.group("content", help="Live-fetch content signals: text, outlinks, quality, language.")
def content() -> None:
    pass


class _Tally:
    """Counts the URLs given and the ones that failed, naming each failure on stderr.

    ``values`` runs on the input thread of the live fetch and ``records`` on this one, so each
    counter has one writer.
    """

    def __init__(self, run: Run) -> None:
        self.run = run
        self.given = 0
        self.bad_lines = 0
        self.errors = 0

    def values(self, items: Iterable[str | InputLineError]) -> Iterator[str]:
        for item in items:
            if isinstance(item, InputLineError):
                self.bad_lines += 1
                self.run.warn(str(item))
                continue
            self.given += 1
            yield item

    def records(self, records: Iterable[Mapping[str, object]]) -> Iterator[Mapping[str, object]]:
        for record in records:
            if record.get("error"):
                self.errors += 1
                self.run.warn(f"{record.get('url', '')}: {record['error']}")
                continue
            yield record

    @property
    def ok(self) -> int:
        return max(self.given - self.errors, 0)

    @property
    def failed(self) -> int:
        return self.bad_lines + self.errors


def _fetch_params(run: Run, extractor: str, delay: float, resolve: tuple[str, ...],
                  allow_private_addresses: bool | None = None) -> dict[str, object]:
    from ccrawl.content.live import DEFAULT_TIMEOUT
    from ccrawl.fetch.config import parse_resolve

    settings = run.settings
    timeout = float(settings.timeout or 0) or DEFAULT_TIMEOUT
    # The configured user agent is the one sent to Common Crawl; a live fetch sends the crawler's
    # own (with its robots.txt token) unless the user set one on purpose.
    agent = settings.user_agent if settings.sources.get("user_agent", "default") != "default" else ""
    return {
        "extractor": extractor,
        "concurrency": max(1, int(settings.workers or 8)),
        "timeout": timeout,
        "delay": delay,
        "user_agent": agent,
        "resolve": parse_resolve(resolve),
        "allow_private_addresses": allow_private(run, allow_private_addresses),
    }


def _run_op(run: Run, name: str, urls: tuple[str, ...], params: dict[str, object], *, one_object: bool) -> None:
    from ccrawl import ops

    op = ops.get(name)
    tally = _Tally(run)
    records = op(urls=tally.values(run.inputs(urls)), **params)
    single = one_object and len(urls) == 1 and urls[0] != "-"
    run.emit(failing_stream(tally.records(records), lambda: (tally.ok, tally.failed), what="URL"),
             columns=op.columns, single=single)
    exit_for_stream(tally.ok, tally.failed, what="URL")


def _leaf(name: str, op_name: str, help_text: str, *, one_object: bool = True) -> click.Command:
    @command(name, help=help_text)
    @click.argument("urls", nargs=-1)
    @op_option(op_name, "extractor", show_default=True, help="Extraction engine: h2m, readability, raw, trafilatura")
    @op_option(op_name, "delay", show_default=True, help="Seconds between two requests to the same host")
    @click.option(
        "--resolve",
        "resolve",
        multiple=True,
        metavar="PATTERN=IP",
        help="Resolve matching hosts to IP without DNS (e.g. '*.test=127.0.0.1'), for servers you run (repeatable)",
    )
    @ALLOW_PRIVATE
    def leaf(run: Run, urls: tuple[str, ...], extractor: str, delay: float, resolve: tuple[str, ...],
             allow_private_addresses: bool | None) -> None:
        if delay < 0:
            from ccrawl.errors import UsageError

            raise UsageError("--delay must be >= 0 seconds (0 turns the per-host spacing off)")
        params = _fetch_params(run, extractor, delay, resolve, allow_private_addresses)
        _run_op(run, op_name, urls, params, one_object=one_object)

    return leaf


content.add_command(
    _leaf("extract", "content.extract", "Clean text, title, description, canonical URL, language, word count.")
)
content.add_command(
    _leaf(
        "outlinks",
        "content.outlinks",
        "Outbound links as (source, url, host) rows, without anchor text.",
        one_object=False,
    )
)
content.add_command(
    _leaf(
        "quality",
        "content.quality",
        "Quality signals: word count, title length, main-content flag, spam score, parked detection.",
    )
)
content.add_command(
    _leaf(
        "lang",
        "content.lang",
        "The language the Markdown pipelines would detect, with the confidence and the text it judged.",
    )
)
