"""``--db postgres://...``: a command's records teed into a PostgreSQL table (psycopg 3, the ``postgres`` extra).

The same table shape as the DuckDB tee (:func:`ccrawl.store.duck.tee`): the table is created, when it
does not exist, from the first batch (each column's type inferred the way DuckDB infers it from that
batch through Arrow, mapped to PostgreSQL's: integers ``BIGINT``, floats ``DOUBLE PRECISION``, booleans,
text, bytes ``BYTEA``, timestamps, and ``TEXT`` for a column with no value yet); every batch is written
by column name with one ``COPY`` and committed, so a missing value is NULL; a container (dict, list) is
stored as JSON text. A server that cannot be reached is exit 8, one that refuses the rows exit 1, each
in one line with the password redacted; without psycopg installed it is exit 2 naming the extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ccrawl.errors import CcrawlError, Unreachable, UsageError
from ccrawl.redact import redact_userinfo

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMES = ("postgres://", "postgresql://")
_BATCH = 5_000


def is_postgres(target: str) -> bool:
    return target.lower().startswith(SCHEMES)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _pg_type(arrow_type: pa.DataType) -> str:
    import pyarrow as pa

    t = pa.types
    if t.is_boolean(arrow_type):
        return "BOOLEAN"
    if t.is_integer(arrow_type):
        return "BIGINT"
    if t.is_floating(arrow_type):
        return "DOUBLE PRECISION"
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return "BYTEA"
    if t.is_timestamp(arrow_type):
        return "TIMESTAMPTZ" if arrow_type.tz else "TIMESTAMP"
    if t.is_date(arrow_type):
        return "DATE"
    return "TEXT"  # strings, and a column that is all NULL in the first batch


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError(
            "--db postgres://: the PostgreSQL driver psycopg is not installed; pip install 'ccrawl[postgres]' "
            "(or psycopg[binary])"
        ) from None
    return psycopg


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_userinfo(text[0] if text else type(exc).__name__)


def tee_postgres(
    records: Iterable[Mapping[str, object]], target: str, table: str, *, columns: Sequence[str] = ()
) -> Iterator[Mapping[str, object]]:
    """Yield ``records`` unchanged while appending them, in batches, to ``table`` in the database ``target``."""
    psycopg = _driver()
    shown = redact_userinfo(target)
    try:
        con = psycopg.connect(target, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise Unreachable(f"--db {shown}: cannot connect: {_first_line(exc)}") from exc
    except psycopg.Error as exc:  # a malformed URL (ProgrammingError) and the like
        raise UsageError(f"--db {shown}: {_first_line(exc)}") from exc
    batch: list[Mapping[str, object]] = []
    names: list[str] = []
    created = False

    def flush() -> None:
        nonlocal created, names
        if not batch:
            return
        if not names:
            names = list(columns) or list(batch[0].keys())
        rows = [[json.dumps(v) if isinstance(v, dict | list) else v for v in (r.get(c) for c in names)]
                for r in batch]
        cols = ", ".join(_ident(c) for c in names)
        try:
            with con.cursor() as cur:
                if not created:
                    import pyarrow as pa

                    schema = pa.Table.from_pylist([dict(zip(names, row, strict=True)) for row in rows]).schema
                    defs = ", ".join(f"{_ident(f.name)} {_pg_type(f.type)}" for f in schema)
                    cur.execute(f"CREATE TABLE IF NOT EXISTS {_ident(table)} ({defs})")
                    created = True
                with cur.copy(f"COPY {_ident(table)} ({cols}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            con.commit()
        except psycopg.OperationalError as exc:
            raise Unreachable(f"--db {shown}: lost the connection: {_first_line(exc)}") from exc
        except psycopg.Error as exc:
            con.rollback()
            raise CcrawlError(f"--db {shown}: table {table}: {_first_line(exc)}") from exc
        batch.clear()

    try:
        for record in records:
            batch.append(record)
            if len(batch) >= _BATCH:
                flush()
            yield record
    finally:
        try:
            flush()
        finally:
            con.close()
