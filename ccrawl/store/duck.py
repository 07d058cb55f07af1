"""DuckDB connections that never reach for the network, a sandbox for client SQL, and ``--db``.

DuckDB wheels do not ship httpfs and, left at their defaults, try to download extensions at run
time; every connection made here turns extension autoinstall and autoload off first.

SQL written by a client of ``serve`` / ``mcp`` (``db.sql``, ``columnar.query``) runs on a connection
passed through :func:`sandbox`: DuckDB's own settings, not a blacklist of statements, keep it off the
file system (``enable_external_access = false``, with ``allowed_paths`` naming only the relations the
operation set up), from spilling to disk, and within a memory and thread budget; the configuration
is locked last, so the SQL cannot undo any of it. :func:`stream` runs the SQL and yields rows a batch
at a time; every query it runs can be stopped from another thread (or a signal handler) with
:func:`interrupt_all`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl.errors import CcrawlError, InputError, UsageError
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

_BATCH = 5_000

#: The sandbox's budgets (read when :func:`sandbox` runs, so a test can lower them).
MEMORY_LIMIT = "1GB"
THREADS = 2
#: Rows fetched at a time by :func:`stream`.
BATCH_ROWS = 1_000

# Connections with a query running under stream(). An RLock: interrupt_all may run in a signal
# handler on the thread that holds the lock (inside stream()'s add/discard), and must not deadlock.
_RUNNING: set[DuckDBPyConnection] = set()
_RUNNING_LOCK = threading.RLock()


def connect(path: str = ":memory:", *, read_only: bool = False) -> DuckDBPyConnection:
    """A DuckDB connection with extension autoinstall and autoload disabled."""
    import duckdb

    return duckdb.connect(path, read_only=read_only, config={
        "autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sandbox(
    con: DuckDBPyConnection, *, allowed_paths: Sequence[str] = (), memory_limit: str | None = None,
    threads: int | None = None,
) -> DuckDBPyConnection:
    """Lock ``con`` down for SQL from a client, and return it.

    Call it after the operation's own relations (views, registered tables and filesystems) are set
    up. Afterwards the connection reads no file and no URL except ``allowed_paths`` (the exact
    paths its views read, e.g. ``ccrange://<part>``), writes none (no COPY, EXPORT, ATTACH of a
    file, spill files or logs), loads no extension, does not resolve Python variables as tables,
    uses at most ``memory_limit`` (default :data:`MEMORY_LIMIT`) and ``threads`` (default
    :data:`THREADS`), and cannot change any of this: ``lock_configuration`` is set last.

    DuckDB's settings belong to the database instance, not the connection: ``con`` must be an
    instance of its own (an in-memory :func:`connect`, or :func:`connect_sandboxed` for a file).
    """
    memory = memory_limit or MEMORY_LIMIT
    n = max(1, int(threads or THREADS))
    settings = [
        "SET python_enable_replacements = false",
        "SET allow_community_extensions = false",
        "SET allow_unsigned_extensions = false",
        "SET autoinstall_known_extensions = false",
        "SET autoload_known_extensions = false",
        "SET temp_directory = ''",  # no spilling: past memory_limit a query fails instead of filling the disk
        f"SET memory_limit = {_literal(memory)}",
        f"SET threads = {n}",
    ]
    if allowed_paths:
        settings.append("SET allowed_paths = [" + ", ".join(_literal(p) for p in allowed_paths) + "]")
    settings += ["SET enable_external_access = false", "SET lock_configuration = true"]
    for statement in settings:
        con.execute(statement)
    return con


def connect_sandboxed(
    path: str | None = None, *, memory_limit: str | None = None, threads: int | None = None
) -> DuckDBPyConnection:
    """A sandboxed connection (:func:`sandbox`) with the DuckDB file ``path``, if given, attached read-only.

    The connection is a DuckDB instance of its own (in memory, the file attached into it under
    the name DuckDB would give it, and made the default): DuckDB's settings belong to an instance,
    and every ``duckdb.connect(path)`` in a process shares the one instance of ``path``, so
    locking that one down would lock every other connection to the file (and two sandboxes with
    different budgets could not both open it).
    """
    con = connect()
    try:
        if path is not None:
            name = Path(path).stem or "db"
            con.execute(f"ATTACH {_literal(path)} AS {_ident(name)} (READ_ONLY)")
            con.execute(f"USE {_ident(name)}")
        return sandbox(con, memory_limit=memory_limit, threads=threads)
    except BaseException:
        con.close()
        raise


def stream(con: DuckDBPyConnection, sql: str, *, batch: int = BATCH_ROWS) -> Iterator[Record]:
    """The rows of ``sql`` on ``con`` as dicts, fetched ``batch`` at a time, never the whole result.

    DuckDB's errors are one line (``SQL: ...``, a :class:`UsageError`). While the query runs,
    :func:`interrupt_all` can stop it; closing the generator early interrupts it too.
    """
    with _RUNNING_LOCK:
        _RUNNING.add(con)
    finished = False
    try:
        with duck_errors("SQL"):
            cur = con.execute(sql)
            names = [d[0] for d in cur.description] if cur.description else []
        while names:
            with duck_errors("SQL"):
                rows = cur.fetchmany(batch)
            if not rows:
                break
            for row in rows:
                yield dict(zip(names, row, strict=True))
        finished = True
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(con)
        if not finished:
            _interrupt(con)


def _interrupt(con: DuckDBPyConnection) -> bool:
    try:
        con.interrupt()
    except Exception:  # a connection closed meanwhile has nothing left to stop
        return False
    return True


def interrupt_all() -> int:
    """Interrupt every query :func:`stream` is running (thread-safe; fit for a SIGTERM handler).

    Each interrupted query raises ``UsageError("SQL: INTERRUPT Error: Interrupted!")`` in the
    thread that runs it. Returns how many were interrupted.
    """
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    return sum(_interrupt(con) for con in running)


def running() -> int:
    """How many queries :func:`stream` is running now."""
    with _RUNNING_LOCK:
        return len(_RUNNING)


@contextmanager
def duck_errors(say: str, error: type[CcrawlError] = UsageError) -> Iterator[None]:
    """DuckDB's own exceptions inside the block become one line, ``<say>: <DuckDB's first line>``."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.startswith(("duckdb", "_duckdb")):
            raise error(f"{say}: {str(exc).splitlines()[0]}") from exc
        raise


def table_name_for(command_path: str) -> str:
    """``ccrawl url surt`` -> ``url_surt``: the table a command's records are teed into."""
    words = command_path.split()[1:] or ["records"]
    name = re.sub(r"[^A-Za-z0-9_]", "_", "_".join(words)).strip("_").lower()
    return name or "records"


def _check_target(target: str) -> None:
    if "://" in target:
        scheme = target.split("://", 1)[0]
        raise UsageError(f"--db: {scheme}:// stores are not supported; give a DuckDB file path such as out.db, "
                         "or a postgresql:// URL")


def tee(
    records: Iterable[Mapping[str, object]], target: str, table: str, *, columns: Sequence[str] = ()
) -> Iterator[Mapping[str, object]]:
    """Yield ``records`` unchanged while appending them, in batches, to ``table`` in the DuckDB file ``target``.

    The table is created from the first batch's shape; later batches insert by column name, so a
    missing value is NULL. A value that is a container is stored as JSON text. A ``postgres://`` or
    ``postgresql://`` target goes to PostgreSQL instead, in the same shape (:mod:`ccrawl.store.pgtee`).
    """
    from ccrawl.store.pgtee import is_postgres, tee_postgres

    if is_postgres(target):
        yield from tee_postgres(records, target, table, columns=columns)
        return
    _check_target(target)
    import json

    import duckdb
    import pyarrow as pa

    def failed(exc: Exception) -> InputError:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return InputError(f"--db {target}: cannot write the records there ({reason})")

    try:
        con = connect(target)
    except duckdb.Error as exc:
        raise failed(exc) from None
    batch: list[Mapping[str, object]] = []
    names: list[str] = []
    created = False

    def flush() -> None:
        nonlocal created, names
        if not batch:
            return
        if not names:
            names = list(columns) or list(batch[0].keys())
        rows = [
            {c: (json.dumps(v) if isinstance(v, dict | list) else v) for c, v in ((c, r.get(c)) for c in names)}
            for r in batch
        ]
        arrow = pa.Table.from_pylist(rows)
        con.register("ccrawl_batch", arrow)
        if not created:
            con.execute(f'CREATE TABLE IF NOT EXISTS "{table}" AS SELECT * FROM ccrawl_batch LIMIT 0')
            created = True
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM ccrawl_batch')
        con.unregister("ccrawl_batch")
        batch.clear()

    try:
        for record in records:
            batch.append(record)
            if len(batch) >= _BATCH:
                try:
                    flush()
                except duckdb.Error as exc:
                    raise failed(exc) from None
            yield record
    finally:
        try:
            flush()
        except duckdb.Error as exc:
            raise failed(exc) from None
        finally:
            con.close()
