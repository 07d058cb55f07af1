"""``ccrawl columnar`` (aliases ``table``, ``athena``): query the columnar Parquet index.

Parses the filter flags, hands them to the ``columnar.*`` operations and renders their records.
``--engine print`` (and ``columnar sql``) prints the SQL for Athena / Spark SQL instead of running.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import click

from ccrawl.cli.common import Run, command, echo_err, op_option

if TYPE_CHECKING:
    from pyarrow import RecordBatch

    from ccrawl.commoncrawl.columnar.query import Explain

F = TypeVar("F", bound=Callable[..., object])

ENGINE_HELP = "auto (native for filters, DuckDB for SQL), native, duckdb, or print (the SQL for a cluster) [auto]"


def filter_options(func: F) -> F:
    """The filter flags every columnar query (and ``db load``) takes, generated from ``columnar.urls``' parameters
    (every columnar query and ``db.load`` has the same ones; tests/cli/test_flags_match_operations.py holds each
    leaf's flags to its own operation)."""
    opts = [
        op_option("columnar.urls", "domain", multiple=True,
                  help="Registered domain (url_host_registered_domain); repeatable"),
        op_option("columnar.urls", "host", multiple=True, help="Exact host name (url_host_name); repeatable"),
        op_option("columnar.urls", "tld", multiple=True, help="Top-level domain (url_host_tld); repeatable"),
        op_option("columnar.urls", "mime", multiple=True, help="Content-Type sent (content_mime_type); repeatable"),
        op_option("columnar.urls", "status", multiple=True, help="HTTP status (fetch_status); repeatable"),
        op_option("columnar.urls", "lang", multiple=True, help="ISO 639-3 code among content_languages; repeatable"),
        op_option("columnar.urls", "path_prefix", help="url_path starts with this (e.g. /news/)"),
        op_option("columnar.urls", "subset", multiple=True, help="warc, crawldiagnostics or robotstxt; repeatable"),
        op_option("columnar.urls", "not_tld", multiple=True, help="TLD is missing or not this"),
        op_option("columnar.urls", "not_mime", multiple=True, help="MIME type is missing or not this"),
        op_option("columnar.urls", "not_lang", multiple=True,
                  help="Language missing or not among content_languages"),
        op_option("columnar.urls", "not_status", multiple=True, help="Status is missing or not this"),
        op_option("columnar.urls", "hosts_file", type=click.Path(dir_okay=False),
                  help="Hosts, one a line (# comments): one query for the whole list"),
        op_option("columnar.urls", "domains_file", type=click.Path(dir_okay=False),
                  help="Registered domains, one a line (# comments): one query for the whole list"),
        op_option("columnar.urls", "local", type=click.Path(file_okay=False),
                  help="Read a local copy of the bucket (holding cc-index/table/...) instead of HTTP"),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


FILTER_KEYS = ("domain", "host", "tld", "mime", "status", "lang", "path_prefix", "subset", "not_tld", "not_mime",
               "not_lang", "not_status", "hosts_file", "domains_file")


def common(run: Run, params: Mapping[str, object]) -> dict[str, object]:
    """Keyword arguments for a columnar operation from parsed flags and global settings."""
    out = {k: params.get(k) for k in FILTER_KEYS}
    out["crawl"] = run.settings.crawl or "latest"
    out["jobs"] = int(run.settings.workers or 4)
    out["local"] = params.get("local")
    out["ctx"] = run.context()
    return out


def print_sql(run: Run, kind: str, params: Mapping[str, object], **extra: str) -> None:
    """Print the cluster SQL of ``kind`` with the crawl resolved (explicit IDs need no network)."""
    from ccrawl.commoncrawl.columnar import sql
    from ccrawl.ops.columnar import filters_from

    f = filters_from(params)
    local = params.get("local")
    crawls = resolve_crawls(run, local if isinstance(local, str) else None)
    text = sql.build(kind, f.with_crawls(crawls), limit=run.output.limit or None, **extra)
    click.echo(sql.cluster_preamble() + text + ";")


def resolve_crawls(run: Run, local: str | None) -> list[str]:
    from ccrawl.commoncrawl.crawls import explicit_id, resolve
    from ccrawl.net.client import run as run_client

    ref = run.settings.crawl or "latest"
    if local:
        from ccrawl.commoncrawl.columnar.parts import open_local
        from ccrawl.ops.columnar import select_crawls

        index = open_local(local)
        return select_crawls(index, ref, local)
    ids = [explicit_id(r.strip()) for r in ref.split(",")]
    if all(ids):
        return [i for i in ids if i]
    return list(run_client(lambda cc: resolve(cc, ref), run.context().client, warn=echo_err))


def emit_items(run: Run, items: Iterable[Mapping[str, object] | RecordBatch], *, columns: Sequence[str] = (),
               single: bool = False) -> int:
    """Render a stream of records or of Arrow record batches (an operation called with ``arrow=True``
    yields one or the other), as they come: batches through :meth:`Run.emit_batches`."""
    iterator = iter(items)
    first = next(iterator, None)
    if first is None or isinstance(first, Mapping):
        records: Iterator[Mapping[str, object]] = iter(()) if first is None else itertools.chain([first], iterator)
        return run.emit(records, columns=columns, single=single)
    return run.emit_batches(itertools.chain([first], iterator), columns=columns, single=single)


def emit_rows(run: Run, records: Iterable[Mapping[str, object]], *, columns: Sequence[str],
              single: bool = False) -> int:
    """Render an operation's records as :meth:`Run.emit` does; JSONL, CSV and TSV a chunk of records at a time
    through the batch writers (:func:`ccrawl.batchout.emit_records`). ``--db`` takes records: :meth:`Run.emit`."""
    if run.flags.get("db"):
        return run.emit(records, columns=columns, single=single)
    from ccrawl.batchout import emit_records

    count = emit_records(records, run.output, columns=columns, single=single)
    run.emitted += count
    return count


def emit_with_explain(run: Run, records: Iterable[Mapping[str, object] | RecordBatch], columns: Iterable[str],
                      explain: Explain, want: bool, *, single: bool = False) -> int:
    """Render ``records`` (or record batches); with ``want``, the explain line on stderr afterwards. Returns the
    count written."""
    try:
        return emit_items(run, records, columns=tuple(columns), single=single)
    finally:
        if want and explain.engine:
            click.echo(f"explain: {explain.line()}", err=True)
            if explain.sql:
                click.echo("explain: sql: " + " ".join(explain.sql.split()), err=True)


@click.group("columnar", help="Query the columnar Parquet index (aliases: table, athena).")
def columnar() -> None:
    pass


def _query_command(kind: str, help_text: str) -> click.Command:
    @command(kind, help=help_text)
    @filter_options
    @op_option(f"columnar.{kind}", "engine", help=ENGINE_HELP)
    @click.option("--explain", "explain_", is_flag=True, help="On stderr: bytes read vs the index total, parts "
                  "and row groups skipped")
    def cmd(run: Run, engine: str, explain_: bool, **params: object) -> None:
        from ccrawl import ops
        from ccrawl.commoncrawl.columnar.query import Explain, choose_engine

        if choose_engine(engine) == "print":
            print_sql(run, kind, params)
            return
        if choose_engine(engine) == "native" and not run.flags.get("db"):
            from ccrawl.leanarrow import import_pyarrow_lean

            import_pyarrow_lean("pyarrow._compute")  # the engine's kernels: commoncrawl.columnar.kernels
        op = ops.get(f"columnar.{kind}")
        explain = Explain()
        records = op(**common(run, params), engine=engine, limit=run.output.limit or None, explain=explain,
                     arrow=True)
        written = emit_with_explain(run, records, op.columns, explain, explain_, single=kind == "count")
        if written == 0 and kind != "count":
            from ccrawl.errors import NothingMatched

            raise NothingMatched(f"no captures match these filters in {run.settings.crawl or 'latest'}")

    return cmd


for _kind, _help in (
    ("urls", "Matching URLs."),
    ("locations", "Record locations (warc_filename, offset, length), ready for `fetch - --batch`."),
    ("count", "Count of matching captures."),
    ("langs", "Breakdown by content language (content_languages as published)."),
    ("mimes", "Breakdown by MIME type."),
):
    columnar.add_command(_query_command(_kind, _help))


@command("sql", help="Build the SQL from the filter flags and print it (Athena / Spark SQL / DuckDB).")
@filter_options
@click.option("--for", "kind", default="locations",
              type=click.Choice(["urls", "locations", "count", "langs", "mimes", "rows", "hostcdx"]),
              help="Which query's SQL [locations]")
def columnar_sql(run: Run, kind: str, **params: object) -> None:
    print_sql(run, kind, params)


columnar.add_command(columnar_sql)


@command("query", help="Run raw SQL; the table ccindex is the index of the selected crawls (-c).")
@click.argument("sql_text", metavar="SQL")
@op_option("columnar.query", "engine", help="auto or duckdb run it; print echoes it; native refuses [auto]")
@op_option("columnar.query", "local", type=click.Path(file_okay=False), help="Read a local copy of the bucket")
def columnar_query(run: Run, sql_text: str, engine: str, local: str | None) -> None:
    from ccrawl import ops

    op = ops.get("columnar.query")
    if engine == "print":
        from ccrawl.commoncrawl.columnar.query import choose_engine

        choose_engine(engine, raw_sql=True)
        click.echo(sql_text)
        return
    # trusted: the user at their own shell gets all of DuckDB (COPY ... TO a file included)
    rows = op(sql=sql_text, crawl=run.settings.crawl or "latest", engine=engine,
              jobs=int(run.settings.workers or 4), local=local, ctx=run.context(), trusted=True)
    run.emit(rows)


columnar.add_command(columnar_query)


@command("schema", help="The columns of the index (name, type, nullable, partition).")
def columnar_schema(run: Run) -> None:
    from ccrawl import ops

    op = ops.get("columnar.schema")
    run.emit(op(), columns=op.columns)


columnar.add_command(columnar_schema)
