"""What every command shares: the global flags, the resolved settings, output and stderr helpers.

A leaf command is written as::

    @command("surt", help="SURT form of URLs", columns=...)
    @click.argument("urls", nargs=-1)
    def surt(run: Run, urls: tuple[str, ...]) -> None:
        run.emit(ops.url_surt(urls=run.inputs(urls)), columns=("url", "surt"))

The decorator adds the seed's global flags to the command (they are accepted before the command
name too: ``ccrawl -o json url surt x``), resolves them into a :class:`Run` and passes it first.
A command that defines a flag of the same name (``recrawl run --workers``) keeps its own.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ccrawl.errors import UsageError
from ccrawl.output import FORMATS, OutputOptions, emit, parse_fields

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.config import Settings
    from ccrawl.ops import Param
    from ccrawl.ops.caps import Bounds
    from ccrawl.ops.context import Notice, OpContext

R = TypeVar("R")
FC = TypeVar("FC", bound=Callable[..., object] | click.Command)


@dataclass(frozen=True, slots=True)
class GlobalFlag:
    """One global flag: its click declaration and, when it sets one, the settings key it feeds."""

    decls: tuple[str, ...]
    name: str
    kwargs: Mapping[str, Any]
    setting: str | None = None


def _flag(*decls: str, name: str, setting: str | None = None, **kwargs: Any) -> GlobalFlag:
    return GlobalFlag(tuple(decls), name, kwargs, setting)


GLOBAL_FLAGS: tuple[GlobalFlag, ...] = (
    _flag("--crawl", "-c", name="crawl", setting="crawl",
          help="Crawl ID, year, latest, all, an integer N for the newest N, or a comma list [latest]"),
    _flag("--output", "-o", name="output", help="Output format: " + ", ".join(FORMATS) + " [auto]"),
    _flag("--limit", "-n", name="limit", type=int, help="Maximum records (0 = unlimited) [0]"),
    _flag("--workers", "-j", name="workers", setting="workers", type=int,
          help="Concurrency for downloads and scans [8]"),
    _flag("--source", name="source", setting="source", help="Bulk data source: https or s3 [https]"),
    _flag("--rate", name="rate", setting="rate", help="Minimum delay between requests, this process alone [0s]"),
    _flag("--global-rate", name="global_rate", setting="global_rate",
          help="Minimum gap between Common Crawl requests across every ccrawl process on this host [200ms]"),
    _flag("--timeout", name="timeout", setting="timeout", help="Per-request timeout [0s = none]"),
    _flag("--retries", name="retries", setting="retries", type=int,
          help="Retries of a Common Crawl request that failed transiently (429, 5xx, dropped connection) [5]"),
    _flag("--no-cache", name="no_cache", is_flag=True, default=None, help="Bypass the on-disk cache"),
    _flag("--fields", name="fields", help="Comma-separated columns to show"),
    _flag("--template", name="template", help="Template applied per record, e.g. '{{.url}}\\t{{.status}}'"),
    _flag("--library", name="library", is_flag=True, default=None, help="Read and write under the dataset library"),
    _flag("--library-dir", name="library_dir", setting="library_dir", help="Library root [~/notes/ccrawl]"),
    _flag("--data-dir", name="data_dir", setting="data_dir", help="Root data directory [~/data/ccrawl]"),
    _flag("--dry-run", name="dry_run", is_flag=True, default=None, help="Print actions, do not perform them"),
    _flag("--quiet", "-q", name="quiet", is_flag=True, default=None, help="Suppress progress output"),
    _flag("--verbose", "-v", name="verbose", count=True, help="Increase verbosity (repeatable)"),
    _flag("--color", name="color", type=click.Choice(["auto", "always", "never"]), help="Color output [auto]"),
    _flag("--no-header", name="no_header", is_flag=True, default=None, help="Omit the header row in table output"),
    _flag("--db", name="db",
          help="Tee every record into a DuckDB file or a postgresql:// database (table named after the command)"),
    _flag("--profile", name="profile", help="Named profile of the config file to load"),
    _flag("--progress", name="progress", type=click.Choice(["text", "json", "none"]),
          help="Progress reporting for long runs [text on a terminal, json otherwise]"),
    _flag("--journal", name="journal",
          help="Append run events as JSON Lines to this file (start and end; recrawl run adds its progress)"),
    _flag("--metrics-addr", name="metrics_addr", help="Serve Prometheus metrics for the run on this address"),
)

GLOBAL_NAMES = frozenset(f.name for f in GLOBAL_FLAGS)


class GlobalOption(click.Option):
    """An option every command shares (listed under "Global options" in a command's help)."""


class CcrawlCommand(click.Command):
    """A command whose ``--help`` lists its own options first, the shared ones under their own heading."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        own: list[tuple[str, str]] = []
        shared: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                (shared if isinstance(param, GlobalOption) else own).append(record)
        if own:
            with formatter.section("Options"):
                formatter.write_dl(own)
        if shared:
            with formatter.section("Global options"):
                formatter.write_dl(shared)


def _options(skip: frozenset[str] = frozenset()) -> list[click.Option]:
    return [
        GlobalOption([*f.decls, f.name], show_default=False, **f.kwargs) for f in GLOBAL_FLAGS if f.name not in skip
    ]


@dataclass(slots=True)
class Run:
    """One invocation: global flag values, settings resolved on first use, output and stderr."""

    flags: dict[str, Any]
    command_path: str
    _settings: Settings | None = field(default=None, repr=False)
    emitted: int = 0
    """Records written by :meth:`emit` so far (the journal's ``end`` event counts them)."""

    @property
    def verbose(self) -> int:
        return int(self.flags.get("verbose") or 0)

    @property
    def quiet(self) -> bool:
        return bool(self.flags.get("quiet"))

    @property
    def dry_run(self) -> bool:
        return bool(self.flags.get("dry_run"))

    @property
    def no_cache(self) -> bool:
        return bool(self.flags.get("no_cache"))

    @property
    def progress(self) -> str:
        chosen = self.flags.get("progress")
        if chosen:
            return str(chosen)
        if self.quiet:
            return "none"
        return "text" if sys.stderr.isatty() else "json"

    @property
    def settings(self) -> Settings:
        """The resolved :class:`ccrawl.config.Settings` (flag > env > profile > [default] > built-in)."""
        if self._settings is None:
            from ccrawl import config

            given = {f.setting: self.flags.get(f.name) for f in GLOBAL_FLAGS if f.setting}
            self._settings = config.resolve(given, profile=self.flags.get("profile"), warn=self.warn)
        return self._settings

    @property
    def output(self) -> OutputOptions:
        return OutputOptions(
            fmt=self.flags.get("output") or "auto",
            fields=parse_fields(self.flags.get("fields")),
            template=self.flags.get("template"),
            no_header=bool(self.flags.get("no_header")),
            limit=int(self.flags.get("limit") or 0),
        )

    @property
    def command_line(self) -> str:
        """The command as the user gave it (``ccrawl markdown export ...``), for provenance."""
        import shlex

        ctx = click.get_current_context(silent=True)
        root = ctx.find_root().obj if ctx is not None else None
        given = root.get("argv") if isinstance(root, dict) else None
        argv = [str(a) for a in given] if isinstance(given, list) else sys.argv[1:]
        return shlex.join(["ccrawl", *argv])

    def context(self, notice: Notice | None = None) -> OpContext:
        """What this invocation injects into an operation: the Common Crawl client's options from the
        resolved settings (with ``--no-cache`` and ``-v``), notices on stderr (or ``notice``), progress and
        summary lines to :meth:`info` (silenced by ``-q``), the command line, the Hub endpoint and the chosen
        ``--progress``."""
        from ccrawl.net.options import ClientOptions
        from ccrawl.ops.context import OpContext

        settings = self.settings
        client = ClientOptions.parse({**settings.values, "no_cache": self.no_cache, "verbose": self.verbose})
        hub = str(getattr(settings, "hf_endpoint", "") or "") or None
        # module functions, not bound methods: ``serve`` sends this context to its operations' processes
        info = _silent if self.quiet else echo_info
        return OpContext(client, notice or echo_err, self.command_line, hub, self.progress, info=info)

    def emit(self, records: Iterable[Mapping[str, object]], *, columns: Sequence[str] = (), single: bool = False,
             verdict: bool = False) -> int:
        """Render ``records``; with ``verdict``, an error the operation marks as its verdict on the whole
        stream (:func:`ccrawl.ops.context.after_stream`) is raised once the output is finished."""
        held: list[BaseException] = []
        count = self._emit(_until_verdict(records, held) if verdict else records, columns=columns, single=single)
        self.emitted += count
        if held:
            raise held[0]
        return count

    def emit_batches(self, batches: Iterable[pa.RecordBatch], *, columns: Sequence[str] = (),
                     single: bool = False) -> int:
        """Render Arrow record batches as :meth:`emit` renders their rows (CSV, TSV and JSONL at Arrow speed)."""
        from ccrawl.batchout import batch_records, emit_batches

        if self.flags.get("db"):  # the tee takes records
            return self.emit(batch_records(batches), columns=columns, single=single)
        count = emit_batches(batches, self.output, columns=columns, single=single)
        self.emitted += count
        return count

    def _emit(self, records: Iterable[Mapping[str, object]], *, columns: Sequence[str] = (),
              single: bool = False) -> int:
        """Render records to stdout in the chosen format (and into ``--db``); returns the count written."""
        target = self.flags.get("db")
        if target:
            from ccrawl.store.duck import table_name_for, tee

            records = tee(records, target, table_name_for(self.command_path), columns=columns)
        return emit(records, self.output, columns=columns, single=single)

    def info(self, message: str) -> None:
        """Progress and diagnostics: stderr, silenced by -q."""
        if not self.quiet:
            echo_info(message)

    def warn(self, message: str) -> None:
        """A warning: always on stderr."""
        click.echo(f"ccrawl: warning: {_redacted(message)}", err=True)

    def debug(self, message: str) -> None:
        """Only with -v."""
        if self.verbose:
            click.echo(_redacted(message), err=True)

    def inputs(self, args: Sequence[str], *, field: str = "url") -> Iterator[str | InputLineError]:
        """Arguments, or stdin lines when none (or ``-``) are given: one value per line or JSONL with ``field``.

        A line that is not UTF-8 text comes back as an :class:`InputLineError` so the caller can
        name it on stderr and carry on with the rest of the stream.
        """
        if args and list(args) != ["-"]:
            yield from args
            return
        if "-" in args and len(args) > 1:
            raise UsageError("'-' (read stdin) cannot be mixed with other arguments")
        yield from read_stdin_values(sys.stdin.buffer, field=field)


def _until_verdict(records: Iterable[Mapping[str, object]],
                   verdict: list[BaseException]) -> Iterator[Mapping[str, object]]:
    """``records``; an error the operation marks as its verdict after the last record
    (:func:`ccrawl.ops.context.after_stream`) is kept in ``verdict`` so the output is finished first."""
    try:
        yield from records
    except Exception as exc:
        if not getattr(exc, "after_stream", False):
            raise
        verdict.append(exc)


def echo_err(message: str) -> None:
    """An operation's notice at a shell: the line on stderr as it is."""
    click.echo(message, err=True)


def echo_info(message: str) -> None:
    """An operation's progress or summary line at a shell (:meth:`Run.info` without ``-q``)."""
    click.echo(_redacted(message), err=True)


def _silent(_message: str) -> None:
    """Progress and summary lines under ``-q``."""


def _redacted(message: str) -> str:
    """Every line to stderr goes out with URLs' ``user:password@`` redacted (issue #13, #36)."""
    from ccrawl.redact import redact_userinfo

    return redact_userinfo(message)


@dataclass(frozen=True, slots=True)
class InputLineError:
    """A stdin line that could not be read as a value."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"stdin line {self.line}: {self.reason}"


def read_stdin_values(stream: Iterable[bytes], *, field: str = "url") -> Iterator[str | InputLineError]:
    """Values from a byte stream: plain lines, or JSON objects carrying ``field``; blank lines skipped."""
    for _n, value in numbered_stdin_values(stream, field=field):
        yield value


def numbered_stdin_values(stream: Iterable[bytes], *, field: str = "url") -> Iterator[tuple[int, str | InputLineError]]:
    """:func:`read_stdin_values` with each value's line number (1-based)."""
    for n, raw in enumerate(stream, start=1):
        if b"\x00" in raw:
            yield n, InputLineError(n, "binary data (a NUL byte), not a line of text")
            continue
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            yield n, InputLineError(n, f"not UTF-8 text (byte {exc.start})")
            continue
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield n, InputLineError(n, f"not valid JSON ({exc.msg})")
                continue
            value = obj.get(field) if isinstance(obj, dict) else None
            if not isinstance(value, str) or not value:
                yield n, InputLineError(n, f"a JSON line without a {field!r} field")
                continue
            yield n, value
        else:
            yield n, line


def _root_flags(ctx: click.Context) -> dict[str, Any]:
    root = ctx.find_root()
    obj = root.obj if isinstance(root.obj, dict) else {}
    return dict(obj.get("global_flags", {}))


def merge_flags(ctx: click.Context, local: dict[str, Any]) -> dict[str, Any]:
    """Flags given after the command win over the same flags given before it."""
    merged = _root_flags(ctx)
    for name, value in local.items():
        if name == "verbose":
            merged[name] = int(merged.get(name) or 0) + int(value or 0)
        elif value is not None:
            merged[name] = value
    return merged


def command(name: str | None = None, **kwargs: Any) -> Callable[[Callable[..., None]], click.Command]:
    """A click command with the global flags, calling ``func(run, **own_params)``."""

    def decorate(func: Callable[..., None]) -> click.Command:
        own = {p.name for p in getattr(func, "__click_params__", [])}
        skip = frozenset(GLOBAL_NAMES & own)

        @functools.wraps(func)
        def callback(**params: object) -> None:
            ctx = click.get_current_context()
            local = {k: params.pop(k) for k in list(params) if k in GLOBAL_NAMES and k not in skip}
            run = Run(merge_flags(ctx, local), ctx.command_path)
            for k in skip:
                run.flags.setdefault(k, None)
            journal = run.flags.get("journal")
            if journal and "journal" not in skip:
                from ccrawl.cli.journal import journaled, self_journaled

                if not self_journaled(ctx.command_path):
                    with journaled(str(journal), ctx.command_path, lambda: run.emitted):
                        func(run, **params)
                        return
            func(run, **params)

        cls: type[click.Command] = kwargs.pop("cls", CcrawlCommand)
        cmd = cls(name or func.__name__.replace("_", "-"), callback=callback, **kwargs)
        cmd.params.extend(reversed(getattr(func, "__click_params__", [])))
        cmd.params.extend(_options(skip))
        return cmd

    return decorate


def add_global_options(cmd: click.Command) -> click.Command:
    """Give a group the global flags; its callback stores them with :func:`store_group_flags`."""
    cmd.params.extend(_options())
    return cmd


def store_group_flags(ctx: click.Context, params: Mapping[str, object]) -> None:
    """Remember the global flags given before the subcommand name, for the leaf to merge."""
    ctx.ensure_object(dict)
    stored = dict(ctx.obj.get("global_flags", {}))
    for name, value in params.items():
        if name not in GLOBAL_NAMES:
            continue
        if name == "verbose":
            stored[name] = int(stored.get(name) or 0) + (value if isinstance(value, int) else 0)
        elif value is not None or name not in stored:
            stored[name] = value
    ctx.obj["global_flags"] = stored


def exit_for_stream(ok: int, failed: int, *, what: str = "input") -> None:
    """Exit codes of a per-item stream: 3 when there was nothing, 1 when every item failed."""
    from ccrawl.errors import CcrawlError, NothingMatched

    if ok == 0 and failed == 0:
        raise NothingMatched(f"no {what} to work on (stdin was empty)")
    if ok == 0:
        raise CcrawlError(f"every {what} failed ({failed}); see the lines above")


def failing_stream(records: Iterable[R], counts: Callable[[], tuple[int, int]], *,
                   what: str = "input") -> Iterator[R]:
    """``records``, then the error of a run where every item failed raised from inside the stream: the
    renderer never closes, so ``-o json`` prints nothing (not ``[]``) and a table no header on a failed
    run. A run with nothing to work on still renders its empty result (then exits 3)."""
    yield from records
    ok, failed = counts()
    if ok == 0 and failed:
        exit_for_stream(ok, failed, what=what)


def env_flag(name: str) -> bool:
    """A boolean environment switch."""
    return os.environ.get(name, "") not in ("", "0", "false", "no")


#: ``--allow-private-addresses`` for every command that fetches; unset, the setting decides (see :func:`allow_private`)
ALLOW_PRIVATE = click.option(
    "--allow-private-addresses", is_flag=True, default=None,
    help="Also fetch loopback, private and link-local addresses [setting allow_private_addresses]")


def allow_private(run: Run, flag: bool | None) -> bool:
    """The flag when given, else the ``allow_private_addresses`` setting (``CCRAWL_ALLOW_PRIVATE_ADDRESSES``)."""
    return bool(run.settings.allow_private_addresses if flag is None else flag)


def _op_param(op_name: str, param: str) -> Param:
    from ccrawl import ops

    found = [p for p in ops.get(op_name).params if p.name == param]
    if not found:
        raise TypeError(f"operation {op_name!r} has no parameter {param!r}")
    return found[0]


def _bounded(number: float, bounds: Bounds, value: object, param: click.Parameter | None) -> None:
    """Refuse a number outside its operation's :class:`~ccrawl.ops.caps.Bounds` in the project's words
    (``--distance 65: must be at most 64``)."""
    problem = bounds.check(number)
    if problem:
        flag = max(param.opts, key=len) if param is not None and param.opts else "value"
        raise UsageError(f"{flag} {value}: {problem}")


class BoundedInt(click.types.IntParamType):
    """An integer flag held to its operation's Bounds (``--help`` keeps the flag's own words about them)."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        number = super().convert(value, param, ctx)  # type: ignore[arg-type]
        _bounded(number, self.bounds, value, param)
        return number


class BoundedFloat(click.types.FloatParamType):
    """A number flag held to its operation's Bounds (``--help`` keeps the flag's own words about them)."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)  # type: ignore[arg-type]
        _bounded(number, self.bounds, value, param)
        return number


def op_type(op_name: str, param: str) -> click.ParamType[int | float | str] | None:
    """The click type of the parameter ``param`` of ``op_name``, read off its annotation: an ``int`` or ``float``
    with :class:`~ccrawl.ops.caps.Bounds` a range of them (so a flag takes no number its operation declares out of
    range, and says so as the operation would), a plain ``int``/``float`` otherwise, a ``Literal`` a ``Choice``;
    None for text and what a flag does not carry as is."""
    p = _op_param(op_name, param)
    base = p.annotation.removesuffix(" | None")
    if base.startswith("Literal[") and base.endswith("]"):
        import ast

        return click.Choice([str(v) for v in ast.literal_eval(f"[{base[len('Literal['):-1]}]")])
    if base == "int":
        return BoundedInt(p.bounds) if p.bounds is not None else click.INT
    if base == "float":
        return BoundedFloat(p.bounds) if p.bounds is not None else click.FLOAT
    return None


def op_option(op_name: str, param: str, *decls: str, **kwargs: Any) -> Callable[[FC], FC]:
    """A click option for the parameter ``param`` of the operation ``op_name``, generated from the operation's
    signature (the registry), so the flag cannot drift from its parameter: its default is the operation's, its
    type the parameter's (:func:`op_type`: ``Bounds`` become a range, a ``bool`` a flag unless ``decls`` spell
    an ``--x/--no-x`` pair) unless ``type`` is given, and a required parameter makes a required option. The
    flag is ``--param-name`` unless ``decls`` says otherwise; the callback receives it as ``param``."""
    if "default" in kwargs:
        raise TypeError(f"op_option({op_name!r}, {param!r}): the default is the operation's, not given here")
    p = _op_param(op_name, param)
    if p.required:
        kwargs.setdefault("required", True)
    else:
        kwargs["default"] = p.default
    base = p.annotation.removesuffix(" | None")
    if base == "bool" and not any("/" in d for d in decls):
        kwargs.setdefault("is_flag", True)
    generated = op_type(op_name, param)
    if generated is not None and "type" not in kwargs:
        kwargs["type"] = generated
    kwargs.setdefault("cls", OpOption)
    option = click.option(*(decls or (f"--{param.replace('_', '-')}",)), param, **kwargs)

    def decorate(func: FC) -> FC:
        out = option(func)
        made = vars(out)["__click_params__"][-1] if not isinstance(out, click.Command) else out.params[-1]
        if isinstance(made, OpOption):
            made.operation = (op_name, param)
        return out

    return decorate


class OpOption(click.Option):
    """An option :func:`op_option` generated from an operation's parameter (``operation`` names them)."""

    operation: tuple[str, str] | None = None
