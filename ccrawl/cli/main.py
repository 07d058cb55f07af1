"""The ``ccrawl`` command: a lazily loaded click tree, one line of error and the right exit code.

Command modules are imported only when their command runs (or its ``--help`` is asked for), so
``ccrawl --help`` and ``ccrawl version`` do not pay for aiohttp, pyarrow, duckdb or
huggingface_hub. A module that is not in this checkout yet is simply not listed.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import signal
import sys
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import click

from ccrawl.cli.common import add_global_options, store_group_flags
from ccrawl.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CcrawlError


class ReaderGone(Exception):
    """The process reading our standard output closed it (EPIPE)."""


class LazyGroup(click.Group):
    """A group whose subcommands live in modules named ``"pkg.module:attr"``, imported on use."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def _available(self, name: str) -> bool:
        module = self.lazy[name][0].split(":")[0]
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx))
        names.update(n for n in self.lazy if self._available(n))
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in self.lazy or not self._available(cmd_name):
            return None
        module_name, attr = self.lazy[cmd_name][0].split(":")
        cmd = getattr(importlib.import_module(module_name), attr)
        if not isinstance(cmd, click.Command):
            raise TypeError(f"{module_name}:{attr} is not a click command")
        return cmd

    def invoke(self, ctx: click.Context) -> object:
        # click turns a broken pipe into a silent exit 1 before we see it; a reader that went away
        # (`| head`) is not an error, so carry it past click as our own type
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno == errno.EPIPE or isinstance(exc, BrokenPipeError):
                raise ReaderGone from None
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy[name][1]))
            else:
                cmd = self.commands[name]
                rows.append((name, cmd.get_short_help_str(limit=70)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


#: name -> ("module:attr", one-line help). Help text is here so ``--help`` imports nothing.
COMMANDS: dict[str, tuple[str, str]] = {
    "crawls": ("ccrawl.cli.commoncrawl:crawls", "List, resolve, and inspect the monthly crawls"),
    "stats": ("ccrawl.cli.commoncrawl:stats", "Show the shape of a crawl: file counts per archive kind"),
    "paths": ("ccrawl.cli.commoncrawl:paths", "List the archive file paths for a crawl"),
    "download": ("ccrawl.cli.commoncrawl:download", "Download whole archive files for a crawl"),
    "get": ("ccrawl.cli.commoncrawl:get", "Fetch what Common Crawl captured for a URL"),
    "fetch": ("ccrawl.cli.commoncrawl:fetch", "Retrieve WARC records by explicit location, or from stdin"),
    "export": ("ccrawl.cli.commoncrawl:export", "Write matching captures into WARC files with provenance"),
    "search": ("ccrawl.cli.search:search", "Query the URL index (CDX) for captures of a URL or pattern"),
    "cdx": ("ccrawl.cli.search:cdx", "Alias of search"),
    "parse": ("ccrawl.cli.parse:parse", "Decode a local WARC/WAT/WET file into records"),
    "extract": ("ccrawl.cli.extract:extract", "Pull text, links, title, or Markdown from a captured page"),
    "content": ("ccrawl.cli.content:content", "Live-fetch content signals: text, outlinks, quality"),
    "recrawl": ("ccrawl.cli.recrawl:recrawl", "Recrawl a published dataset, streaming the work list"),
    "markdown": ("ccrawl.cli.markdown:markdown", "Build Markdown Parquet datasets from CC WARCs and publish them"),
    "dedup": ("ccrawl.cli.dedup:dedup", "Report exact and near duplicate documents in a Markdown Parquet dataset"),
    "convert": ("ccrawl.cli.convert:convert", "Convert WARC/WAT/WET archives to Parquet or JSONL"),

    "rank": ("ccrawl.cli.rank:rank", "Look up host and domain ranks from the web graph"),
    "host": ("ccrawl.cli.host:host", "Enumerate and enrich hosts from the CC web graph"),
    "crawl": ("ccrawl.cli.crawl:crawl", "Discovery crawl: seed, fetch, run with a resumable frontier, status"),
    "sched": ("ccrawl.cli.sched:sched", "Recrawl scheduling: tier assignment and differential CDX analysis"),
    "library": ("ccrawl.cli.library:library", "Inspect, verify, and collect the dataset library"),
    "columnar": ("ccrawl.cli.columnar:columnar", "Query the columnar Parquet index"),
    "table": ("ccrawl.cli.columnar:columnar", "Alias of columnar"),
    "athena": ("ccrawl.cli.columnar:columnar", "Alias of columnar"),
    "db": ("ccrawl.cli.db:db", "Build and query a local DuckDB database"),

    "news": ("ccrawl.cli.news:news", "Work with the continuous CC-NEWS dataset"),
    "urls": ("ccrawl.cli.urls:urls", "Mirror the Common Crawl URL index to a HuggingFace dataset"),
    "domains": ("ccrawl.cli.domains:domains", "Mirror the Common Crawl domain ranks to a HuggingFace dataset"),
    "publish": ("ccrawl.cli.publish_maint:publish", "Maintenance for the published Common Crawl datasets"),
    "url": ("ccrawl.cli.url:url", "URL toolkit: SURT, canonical form, URL key, registered domain, shard"),
    "index": ("ccrawl.cli.index:index", "Build and query a local BM25 full-text search index"),
    "api": ("ccrawl.cli.servers:api", "Start the v2 REST API server"),
    "serve": ("ccrawl.cli.servers:serve", "Serve the operations over HTTP as NDJSON"),
    "mcp": ("ccrawl.cli.servers:mcp", "Run as an MCP server over stdio"),
    "config": ("ccrawl.cli.meta:config", "Show resolved configuration and data paths"),
    "cache": ("ccrawl.cli.meta:cache", "Inspect and clear the on-disk cache"),
    "version": ("ccrawl.cli.meta:version", "Print the version and exit"),
}


@click.group(
    cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]},
    help="ccrawl: a toolkit for Common Crawl around a native-accelerated recrawler.\n\n"
    "Run `ccrawl <command> --help` for a command's flags. Global flags work before or after the command.",
)
@click.option("--version", "-V", "show_version", is_flag=True, help="Print the version and exit (as `ccrawl version`)")
@click.pass_context
def cli(ctx: click.Context, /, **params: object) -> None:
    params.pop("show_version", None)  # main() turns the flag into the version command before parsing
    store_group_flags(ctx, params)


add_global_options(cli)


def _verbose(argv: Sequence[str]) -> bool:
    for arg in argv:
        if arg == "--":
            break
        if arg == "--verbose" or (arg.startswith("-") and not arg.startswith("--") and set(arg[1:]) == {"v"}):
            return True
    return False


def _version_flag(args: list[str]) -> list[str]:
    """``ccrawl --version`` (and ``-V``) is ``ccrawl version``: the flag, given before any command, becomes it."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg in COMMANDS:
            break
        if arg in ("--version", "-V"):
            return [*args[:i], "version", *args[i + 1 :]]
    return args


def _fail(message: str) -> None:
    from ccrawl.redact import redact_userinfo

    click.echo(f"ccrawl: {redact_userinfo(message)}", err=True)  # an endpoint's user:password@ stays private


def _print_traceback() -> None:
    """The traceback of the exception being handled (``-v``), with every URL's user-info redacted.

    An HTTP error's text carries its URL (httpx's ``HTTPStatusError``: ``for url 'http://u:pw@host/...'``),
    so the traceback goes through the same filter as the one-line error (issue #36).
    """
    _write_traceback(*sys.exc_info())


def _write_traceback(exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
    import traceback

    from ccrawl.redact import redact_userinfo

    text = "".join(traceback.format_exception(exc_type, exc, tb)) if exc is not None else ""
    if text:
        sys.stderr.write(redact_userinfo(text))
        sys.stderr.flush()


def _thread_traceback(args: threading.ExceptHookArgs) -> None:
    """A thread's uncaught exception (Python prints its traceback): redacted like the CLI's own."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    sys.stderr.write(f"Exception in thread {name}:\n")
    _write_traceback(args.exc_type, args.exc_value, args.exc_traceback)


def install_redacting_hooks() -> None:
    """Any traceback Python itself prints (uncaught, at the top or in a thread) is redacted too.

    Installed by the console script and ``python -m ccrawl`` (:mod:`ccrawl._entry`), not by :func:`main`,
    which a test or a library may call inside a process whose hooks are not ours.
    """
    sys.excepthook = _write_traceback
    threading.excepthook = _thread_traceback


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns (and, as a console script, exits with) the exit code.

    Started through :mod:`ccrawl._entry`, SIGINT exits at once until here; while the command
    runs it is ``KeyboardInterrupt`` (so the command's cleanup runs), and after it the
    immediate exit again (see :mod:`ccrawl._entry`).
    """
    from ccrawl import sigint

    immediate = signal.getsignal(signal.SIGINT) is sigint.interrupted_now
    try:
        if immediate:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return _run(argv)
    except KeyboardInterrupt:
        if immediate:  # a second Ctrl-C while the line is written exits at once, no traceback
            sigint.install()
        _fail("interrupted")
        return 130
    finally:
        if immediate:
            sigint.install()


def _run(argv: Sequence[str] | None) -> int:
    args = _version_flag(list(sys.argv[1:] if argv is None else argv))
    verbose = _verbose(args)
    try:
        result = cli.main(args=args, prog_name="ccrawl", standalone_mode=False, obj={"argv": args})
        return int(result) if isinstance(result, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.format_message(), err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see `{ctx.command_path} --help`)"
        _fail(exc.format_message().replace("\n", " ") + hint)
        return exc.exit_code if exc.exit_code else EXIT_USAGE
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C (and EOF at a prompt) into Abort; say which it was
        _fail("interrupted" if isinstance(exc.__cause__, KeyboardInterrupt) else "aborted")
        return 130
    except CcrawlError as exc:
        if verbose:
            _print_traceback()
        _fail(str(exc).replace("\n", " ") or type(exc).__name__)
        return exc.exit_code
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except (BrokenPipeError, ReaderGone):
        # the reader went away (`| head`): not an error, and nothing more can be written
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        # the system refused a read or a write (disk full, quota, read-only, gone): the user's to fix
        if verbose:
            _print_traceback()
        _fail(_os_message(exc))
        return EXIT_ERROR
    except Exception as exc:
        if verbose:
            _print_traceback()
        _fail(f"internal error: {type(exc).__name__}: {exc} (run with -v for the traceback)".replace("\n", " "))
        return EXIT_ERROR


def _os_message(exc: OSError) -> str:
    """One line for an OSError: what failed, on which file when known, without the errno noise."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = exc.filename if isinstance(exc.filename, str) else None
    return (f"{where}: {reason}" if where else f"system error: {reason}").replace("\n", " ")


def entry() -> None:
    """Run the CLI and exit with its code (prefer :func:`ccrawl._entry.run`, which also covers
    SIGINT during the imports)."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
