"""Client SQL (``db.sql``, ``columnar.query`` without ``trusted``) runs in a sandboxed DuckDB.

Real DuckDB, real files: every refused statement must fail as a one-line UsageError *and* leave no
trace (no file written, no secret returned); ordinary queries still answer, results stream, and a
running query can be interrupted from another thread.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.errors import UsageError
from ccrawl.ops.columnar import columnar_query
from ccrawl.ops.db import db_sql
from ccrawl.store import duck

SECRET = "TOPSECRET-7f3a9c"
CRAWL = "CC-MAIN-2025-26"
N_INDEX = 100
N_PAGES = 50


@pytest.fixture
def index_root(tmp_path: Path) -> Path:
    """A local copy of the bucket with one small part."""
    root = tmp_path / "bucket"
    part = root / f"cc-index/table/cc-main/warc/crawl={CRAWL}/subset=warc/part-00000.parquet"
    part.parent.mkdir(parents=True)
    pq.write_table(pa.table({"url": [f"http://h{i % 5}.example/{i}" for i in range(N_INDEX)],
                             "url_host_name": [f"h{i % 5}.example" for i in range(N_INDEX)],
                             "fetch_status": [200 + (i % 2) * 104 for i in range(N_INDEX)]}), part)
    return root


@pytest.fixture
def dbfile(tmp_path: Path) -> Path:
    path = tmp_path / "ccrawl.duckdb"
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE pages AS SELECT range AS n, 'p' || range AS name FROM range({N_PAGES})")
    con.close()
    return path


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(f"name,value\nkey,{SECRET}\n")
    return path


Runner = Callable[[str], list[dict[str, Any]]]


@pytest.fixture(params=["columnar", "db"])
def run(request: pytest.FixtureRequest, index_root: Path, dbfile: Path) -> Runner:
    if request.param == "columnar":
        return lambda sql: list(columnar_query(sql=sql, local=str(index_root), jobs=1))
    return lambda sql: list(db_sql(sql=sql, db=str(dbfile)))


def _pages(dbfile: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(dbfile), read_only=True)
    try:
        return [tuple(r) for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()] + [
            tuple(r) for r in con.execute("SELECT count(*), sum(n) FROM pages").fetchall()]
    finally:
        con.close()


def _refused(run: Runner, sql: str) -> str:
    with pytest.raises(UsageError) as info:
        run(sql)
    msg = str(info.value)
    assert msg.startswith("SQL: ") and "\n" not in msg, msg
    assert "Traceback" not in msg
    return msg


# -- writes: the file must not appear ---------------------------------------------------------------

WRITES = [
    pytest.param("COPY (SELECT 'x' AS a) TO '{out}'", id="copy-csv"),
    pytest.param("COPY (SELECT 1 AS a) TO '{out}' (FORMAT parquet)", id="copy-parquet"),
    pytest.param("EXPORT DATABASE '{out}'", id="export-database"),
    pytest.param("ATTACH '{out}' AS evil", id="attach-new-file"),
    pytest.param("ATTACH ':memory:' AS m; COPY (SELECT 1 AS a) TO '{out}'", id="attach-memory-then-copy"),
    pytest.param("SET temp_directory = '{out}'", id="set-temp-directory"),
    pytest.param("SET profiling_output = '{out}'", id="set-profiling-output"),
    pytest.param("SET log_query_path = '{out}'", id="set-log-query-path"),
    pytest.param("LOAD '{out}'", id="load-path"),
    pytest.param("INSTALL httpfs", id="install"),
    pytest.param("LOAD httpfs", id="load"),
    pytest.param("LOAD parquet; INSTALL json FROM '{out}'", id="install-from"),
]


@pytest.mark.parametrize("sql", WRITES)
def test_writes_and_extensions_are_refused_and_leave_no_file(run: Runner, sql: str, tmp_path: Path) -> None:
    out = tmp_path / "written"
    _refused(run, sql.format(out=out))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bucket", "ccrawl.duckdb"]  # nothing else, not a .tmp


# -- reads: the secret must not come back ------------------------------------------------------------

READS = [
    pytest.param("SELECT * FROM read_text('{secret}')", id="read_text"),
    pytest.param("SELECT * FROM read_blob('{secret}')", id="read_blob"),
    pytest.param("SELECT * FROM read_csv('{secret}')", id="read_csv"),
    pytest.param("SELECT * FROM read_csv_auto('{secret}')", id="read_csv_auto"),
    pytest.param("SELECT * FROM sniff_csv('{secret}')", id="sniff_csv"),
    pytest.param("SELECT * FROM read_json('{secret}')", id="read_json"),
    pytest.param("SELECT * FROM read_parquet('{secret}')", id="read_parquet"),
    pytest.param("SELECT * FROM parquet_metadata('{secret}')", id="parquet_metadata"),
    pytest.param("SELECT * FROM glob('{dir}/*')", id="glob"),
    pytest.param("SELECT * FROM '{secret}'", id="replacement-scan"),
    pytest.param("CALL read_text('{secret}')", id="call-read_text"),
    pytest.param("SET allowed_paths = ['{secret}']; SELECT * FROM read_text('{secret}')", id="set-allowed-paths"),
    pytest.param("SET enable_external_access = true; SELECT * FROM read_text('{secret}')", id="set-external-access"),
    pytest.param("SET lock_configuration = false", id="unlock"),
    pytest.param("RESET enable_external_access", id="reset-external-access"),
    pytest.param("SET memory_limit = '100GB'", id="set-memory-limit"),
    pytest.param("RESET memory_limit", id="reset-memory-limit"),
    pytest.param("SET threads = 64", id="set-threads"),
    pytest.param("PRAGMA threads = 64", id="pragma-threads"),
    pytest.param("PRAGMA enable_profiling", id="pragma-profiling"),
    pytest.param("CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')", id="persistent-secret"),
    pytest.param("SELECT * FROM ccrange_parts", id="unknown-name"),
]


@pytest.mark.parametrize("sql", READS)
def test_reads_and_config_changes_are_refused(run: Runner, sql: str, secret: Path) -> None:
    msg = _refused(run, sql.format(secret=secret, dir=secret.parent))
    assert SECRET not in msg


def test_a_path_beside_the_index_parts_is_refused(index_root: Path, secret: Path) -> None:
    """The index's own parts are readable; a sibling path through the same ``ccrange://`` filesystem is not."""
    (index_root / "cc-index" / "secret.txt").write_text(SECRET)
    for path in ("ccrange://cc-index/secret.txt", "ccrange://../secret.txt",
                 f"ccrange://cc-index/table/cc-main/warc/crawl={CRAWL}/subset=warc/../../../../secret.txt"):
        for sql in (f"SELECT * FROM read_text('{path}')", f"SELECT * FROM read_csv('{path}')"):
            with pytest.raises(UsageError) as info:
                list(columnar_query(sql=sql, local=str(index_root), jobs=1))
            assert SECRET not in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(UsageError):
        list(columnar_query(sql="COPY (SELECT 1) TO 'ccrange://cc-index/new.csv'", local=str(index_root)))
    assert not (index_root / "cc-index" / "new.csv").exists()


# -- db.sql opens the file read-only ---------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "CREATE TABLE evil AS SELECT 1 AS a",
    "INSERT INTO pages VALUES (999, 'x')",
    "UPDATE pages SET n = 0",
    "DELETE FROM pages",
    "DROP TABLE pages",
    "ALTER TABLE pages ADD COLUMN c INTEGER",
    "CREATE VIEW v AS SELECT 1",
    "DETACH ccrawl",
])
def test_db_sql_cannot_change_the_database(dbfile: Path, sql: str) -> None:
    before = _pages(dbfile)
    with pytest.raises(UsageError) as info:
        list(db_sql(sql=sql, db=str(dbfile)))
    assert "\n" not in str(info.value)
    assert _pages(dbfile) == before == [("pages",), (N_PAGES, sum(range(N_PAGES)))]


# -- what still works ----------------------------------------------------------------------------

def test_ordinary_queries_still_answer(index_root: Path, dbfile: Path) -> None:
    got = list(columnar_query(sql="SELECT count(*) AS n, any_value(crawl) AS crawl, "
                                  "count(DISTINCT url_host_name) AS hosts FROM ccindex", local=str(index_root)))
    assert got == [{"n": N_INDEX, "crawl": CRAWL, "hosts": 5}]
    got = list(columnar_query(sql="SELECT fetch_status, count(*) AS n FROM ccindex GROUP BY 1 ORDER BY 1",
                              local=str(index_root)))
    assert got == [{"fetch_status": 200, "n": N_INDEX // 2}, {"fetch_status": 304, "n": N_INDEX // 2}]
    got = list(db_sql(sql="SELECT count(*) AS n, max(name) AS top FROM pages WHERE n < 10", db=str(dbfile)))
    assert got == [{"n": 10, "top": "p9"}]
    # a scratch table in memory is the client's own business (columnar.query's database is in memory)
    got = list(columnar_query(sql="CREATE TEMP TABLE t AS SELECT url FROM ccindex LIMIT 3; SELECT count(*) AS n FROM t",
                              local=str(index_root)))
    assert got == [{"n": 3}]


def test_the_sandbox_budgets_are_set_and_locked(run: Runner) -> None:
    got = run("SELECT current_setting('threads') AS threads, current_setting('enable_external_access') AS ext, "
              "current_setting('lock_configuration') AS locked, current_setting('temp_directory') AS tmp, "
              "current_setting('memory_limit') AS mem, current_setting('autoload_known_extensions') AS autoload")
    (row,) = got
    assert (row["ext"], row["locked"], row["tmp"], row["autoload"]) == (False, True, "", False)
    assert 1 <= row["threads"] <= duck.THREADS
    assert row["mem"] == "953.6 MiB"  # DuckDB's spelling of the default 1GB


def test_trusted_keeps_full_duckdb(index_root: Path, dbfile: Path, tmp_path: Path) -> None:
    out = tmp_path / "hosts.csv"
    assert list(columnar_query(sql=f"COPY (SELECT DISTINCT url_host_name FROM ccindex ORDER BY 1) TO '{out}'",
                               local=str(index_root), trusted=True)) == [{"Count": 5}]
    assert out.read_text().splitlines()[0] == "url_host_name"
    list(db_sql(sql="CREATE TABLE mine AS SELECT 1 AS a", db=str(dbfile), trusted=True))
    assert ("mine",) in _pages(dbfile)


def test_an_empty_index_still_has_a_ccindex_view(tmp_path: Path) -> None:
    from ccrawl.commoncrawl.columnar import duck as cduck
    from ccrawl.commoncrawl.columnar.source import LocalSource

    con = cduck.connect_index(LocalSource(tmp_path), [])
    duck.sandbox(con)
    try:
        assert list(duck.stream(con, "SELECT count(*) AS n FROM ccindex")) == [{"n": 0}]
    finally:
        con.close()


# -- streaming, budgets, interruption -----------------------------------------------------------

def test_results_stream_instead_of_being_fetched_whole(run: Runner, index_root: Path, dbfile: Path) -> None:
    """Ten rows of ten billion: only possible if rows are fetched as they come."""
    huge = "SELECT range AS i FROM range(10000000000)"
    for records in (columnar_query(sql=huge, local=str(index_root), jobs=1), db_sql(sql=huge, db=str(dbfile))):
        t0 = time.monotonic()
        assert [r["i"] for r in itertools.islice(records, 10)] == list(range(10))
        records.close()  # type: ignore[attr-defined]
        assert time.monotonic() - t0 < 10


def test_stream_batches_with_fetchmany() -> None:
    con = duck.sandbox(duck.connect())
    try:
        rows = list(duck.stream(con, "SELECT range AS i, range::VARCHAR AS s FROM range(2500)", batch=1000))
        assert rows[0] == {"i": 0, "s": "0"} and len(rows) == 2500 and rows[-1]["i"] == 2499
        assert list(duck.stream(con, "CREATE TEMP TABLE x (a INT)")) in ([], [{"Count": 0}])
    finally:
        con.close()


def test_memory_limit_gives_a_clean_error(monkeypatch: pytest.MonkeyPatch, dbfile: Path, tmp_path: Path) -> None:
    monkeypatch.setattr(duck, "MEMORY_LIMIT", "64MB")
    for sql in ("SELECT string_agg(range::VARCHAR, ',') AS s FROM range(50000000)",
                "SELECT range, md5(range::VARCHAR) AS h FROM range(5000000) ORDER BY h"):
        with pytest.raises(UsageError) as info:
            list(db_sql(sql=sql, db=str(dbfile)))
        msg = str(info.value)
        assert "\n" not in msg and "Out of Memory" in msg, msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ccrawl.duckdb"]  # it did not spill to disk


def test_interrupt_all_stops_a_running_query(dbfile: Path) -> None:
    errors: list[BaseException] = []
    rows: list[Any] = []

    def query() -> None:
        try:
            rows.extend(db_sql(sql="SELECT count(*) AS n FROM range(10000000000) a", db=str(dbfile)))
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    worker = threading.Thread(target=query, daemon=True)
    worker.start()
    deadline = time.monotonic() + 10
    while not duck.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert duck.running() == 1
    time.sleep(0.3)
    t0 = time.monotonic()
    assert duck.interrupt_all() == 1
    worker.join(timeout=1.0)
    assert not worker.is_alive(), "the query was not interrupted within a second"
    assert time.monotonic() - t0 < 1.0
    assert not rows and len(errors) == 1 and isinstance(errors[0], UsageError)
    assert str(errors[0]).startswith("SQL: ") and "nterrupt" in str(errors[0]) and "\n" not in str(errors[0])
    assert duck.running() == 0


def test_interrupt_all_from_threads_while_queries_come_and_go(dbfile: Path) -> None:
    """The registry survives concurrent add/remove/interrupt (no 'set changed size during iteration')."""
    stop = threading.Event()
    failures: list[BaseException] = []

    def hammer() -> None:
        while not stop.is_set():
            try:
                duck.interrupt_all()
            except BaseException as exc:
                failures.append(exc)

    def quick() -> None:
        for _ in range(20):
            try:
                list(db_sql(sql="SELECT sum(range) AS s FROM range(1000)", db=str(dbfile)))
            except UsageError:
                pass  # interrupted: fine
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=hammer)] + [threading.Thread(target=quick) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join(timeout=60)
    stop.set()
    threads[0].join(timeout=10)
    assert not failures and duck.running() == 0



def test_the_cli_is_trusted(index_root: Path, dbfile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """``ccrawl db sql`` / ``ccrawl columnar query`` are the user at their shell: full DuckDB."""
    from ccrawl.cli.main import main

    monkeypatch.setenv("CCRAWL_DB_PATH", str(dbfile))
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CCRAWL_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "urls.csv"
    assert main(["columnar", "query", "--local", str(index_root), "-o", "jsonl",
                 f"COPY (SELECT url FROM ccindex) TO '{out}'"]) == 0
    assert len(out.read_text().splitlines()) == N_INDEX + 1
    assert main(["db", "sql", "-o", "jsonl", "CREATE TABLE mine AS SELECT 1 AS a"]) == 0
    capsys.readouterr()
    assert ("mine",) in _pages(dbfile)
