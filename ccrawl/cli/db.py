"""``ccrawl db load|sql|shell|path``: a local DuckDB database of columnar-index rows.

The file is ``db_path`` (``CCRAWL_DB_PATH``), else ``<data_dir>/ccrawl.duckdb``.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import click

from ccrawl.cli.columnar import common, emit_with_explain, filter_options
from ccrawl.cli.common import Run, command, op_option
from ccrawl.errors import UsageError


def _db(run: Run) -> str:
    from ccrawl.ops.db import db_file

    return str(db_file(run.settings.db_path, run.settings.data_dir))


@click.group("db", help="Build and query a local DuckDB database.")
def db() -> None:
    pass


@command("load", help="Load matching index records into local DuckDB (the columnar filter flags).")
@filter_options
@op_option("db.load", "table", help="Table to append to [ccindex]")
@click.option("--explain", "explain_", is_flag=True, help="On stderr: bytes read vs the index total")
def db_load(run: Run, table: str, explain_: bool, **params: Any) -> None:
    from ccrawl import ops
    from ccrawl.commoncrawl.columnar.query import Explain

    op = ops.get("db.load")
    explain = Explain()
    records = op(db=_db(run), table=table, limit=run.output.limit or None, explain=explain, **common(run, params))
    emit_with_explain(run, records, op.columns, explain, explain_, single=True)


@command("sql", help="Run SQL against the local database.")
@click.argument("sql_text", metavar="QUERY")
def db_sql(run: Run, sql_text: str) -> None:
    from ccrawl import ops

    # trusted: the user at their own shell gets all of DuckDB (COPY ... TO a file included)
    run.emit(ops.get("db.sql")(sql=sql_text, db=_db(run), trusted=True))


@command("shell", help="Open DuckDB's own interactive shell on the database (needs the duckdb CLI on PATH).")
def db_shell(run: Run) -> None:
    exe = shutil.which("duckdb")
    if exe is None:
        raise UsageError(
            "db shell needs the duckdb command-line shell on PATH (https://duckdb.org/docs/installation); "
            f"meanwhile `ccrawl db sql '...'` queries {_db(run)}"
        )
    os.execv(exe, [exe, _db(run)])


@command("path", help="Print the database file path.")
def db_path(run: Run) -> None:
    if run.flags.get("output") in (None, "auto", "raw"):
        click.echo(_db(run))  # a bare path, for $(ccrawl db path)
        return
    run.emit([{"path": _db(run)}], columns=("path",), single=True)


for _cmd in (db_load, db_sql, db_shell, db_path):
    db.add_command(_cmd)
