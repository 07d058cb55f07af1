"""``ccrawl extract title|text|markdown|links <url>``: what the h2m engine makes of a captured page.

The page is Common Crawl's capture of the URL (the newest 200 in the newest crawl ``-c`` names
that has it, as ``get`` finds it), not a live fetch: ``content`` is the live-fetch family.
"""

from __future__ import annotations

import click

from ccrawl.cli.common import Run, command

_HELP = {
    "title": "The page title",
    "text": "Readable plain text, boilerplate stripped",
    "markdown": "HTML converted to GitHub-flavoured Markdown",
    "links": "Outbound links, one row per link (source, url)",
}


@click.group("extract", help="Pull text, links, title, or Markdown from a page Common Crawl captured.")
def extract() -> None:
    pass


def _leaf(content: str) -> click.Command:
    @command(content, help=f"{_HELP[content]}, from the newest capture of URL.")
    @click.argument("url")
    def leaf(run: Run, url: str) -> None:
        from ccrawl import ops
        from ccrawl.cli.commoncrawl import content_columns, crawl_of, default_format

        default_format(run, "text" if content == "title" else content)
        records = ops.get("cc.get")(url=url, content=content, crawl=crawl_of(run), ctx=run.context())
        run.emit(records, columns=content_columns(content), single=content != "links")

    return leaf


for _content in _HELP:
    extract.add_command(_leaf(_content))
