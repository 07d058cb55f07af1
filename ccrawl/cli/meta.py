"""``version``, ``config show`` and ``cache``: commands about ccrawl itself."""

from __future__ import annotations

from typing import Any

import click

from ccrawl.cli.common import Run, add_global_options, command, store_group_flags
from ccrawl.ops import meta


@command("version", help="Print the version and exit.")
@click.option("--short", is_flag=True, help="Just the version number")
def version(run: Run, short: bool) -> None:
    info = meta.version_info()
    if short:
        click.echo(info["version"])
    elif run.output.fmt == "auto" and not run.output.template:
        # `-o auto` keeps the sentence even when piped: asking for a format is how you ask for data
        click.echo(meta.version_line(info))
    else:
        run.emit([info], columns=meta.VERSION_FIELDS, single=True)
    if run.verbose:
        for row in meta.native_modules():
            click.echo(f"native: {row['module']}: {row['implementation']}", err=True)


@click.group("config", help="Show resolved configuration and data paths.")
def config() -> None:
    pass


@command("show", help="Every setting, the value it resolved to, and where that came from.")
def config_show(run: Run) -> None:
    run.emit(run.settings.rows(), columns=("key", "value", "source"))


config.add_command(config_show)


@click.group("cache", invoke_without_command=True, help="Inspect and clear the on-disk cache.")
@click.pass_context
def cache(ctx: click.Context, /, **params: Any) -> None:
    store_group_flags(ctx, params)
    if ctx.invoked_subcommand is None:
        ctx.invoke(cache_show)


@command("show", help="Where the cache is and how much it holds.")
def cache_show(run: Run) -> None:
    run.emit(meta.cache_show(cache_dir=run.settings.cache_dir), columns=("path", "files", "bytes"), single=True)


@command("clear", help="Delete everything in the cache.")
def cache_clear(run: Run) -> None:
    if run.dry_run:
        run.info(f"cache: would clear {run.settings.cache_dir}")
        run.emit(meta.cache_show(cache_dir=run.settings.cache_dir), columns=("path", "files", "bytes"), single=True)
        return
    rows = list(meta.cache_clear(cache_dir=run.settings.cache_dir))
    run.info(f"cache: cleared {rows[0]['files']} files, {rows[0]['bytes']} bytes from {rows[0]['path']}")


add_global_options(cache)
cache.add_command(cache_show)
cache.add_command(cache_clear)
