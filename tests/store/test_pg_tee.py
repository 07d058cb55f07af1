"""--db postgresql://: records teed into a real PostgreSQL the test starts on loopback (issue #36, item 12).

The server is Debian's PostgreSQL (``scripts/install-system-deps`` installs it): a throw-away cluster made
with ``initdb`` in a temp directory, started with ``pg_ctl`` on a free loopback port with its unix socket
in that directory, and stopped at the end. PostgreSQL refuses to run as root, so as root the cluster is
run by the ``postgres`` system user (``runuser``).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is in the dev extra (pip install -e '.[dev]')")

REPO = Path(__file__).resolve().parents[2]


def _pg_bin() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "pg_ctl").exists() and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A throw-away PostgreSQL cluster on a loopback port."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="ccrawl-pg-", dir="/tmp"))  # reachable by the postgres user
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.data = self.dir / "data"

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {proc.stdout}{proc.stderr}")

    def start(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "ccrawl", "-E", "UTF8",
                  "--no-sync")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.dir} -F -c fsync=off"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, password: str = "") -> str:
        auth = f"ccrawl:{password}" if password else "ccrawl"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/postgres"


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are absent; scripts/install-system-deps installs them")
    server = PostgresServer(bindir)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(server.dir, ignore_errors=True)
        raise
    yield server
    server.stop()


def _cli(*args: str, stdin: str | None = None, python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, *(python or ["-m", "ccrawl"]), *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def _rows(pg: PostgresServer, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(pg.url()) as con:
        return list(con.execute(sql).fetchall())


def test_url_surt_db_postgresql_writes_the_printed_records(pg: PostgresServer) -> None:
    urls = [f"http://www.Example{i % 7}.com/p/{i}?q={i}" for i in range(12_345)]  # more than two batches
    proc = _cli("url", "surt", "-o", "jsonl", "--db", pg.url(), stdin="\n".join(urls) + "\n")
    assert proc.returncode == 0, proc.stderr
    import json

    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(printed) == len(urls)
    stored = _rows(pg, "SELECT url, surt FROM url_surt")
    assert sorted(stored) == sorted((r["url"], r["surt"]) for r in printed)
    columns = _rows(pg, "SELECT column_name, data_type FROM information_schema.columns "
                        "WHERE table_name = 'url_surt' ORDER BY ordinal_position")
    assert columns == [("url", "text"), ("surt", "text")]
    # a second run appends by column name
    again = _cli("url", "surt", "http://b.example/", "--db", pg.url().replace("postgresql://", "postgres://"))
    assert again.returncode == 0, again.stderr
    assert _rows(pg, "SELECT count(*) FROM url_surt") == [(len(urls) + 1,)]


def test_the_table_shape_matches_the_duckdb_tee(pg: PostgresServer) -> None:
    from ccrawl.store.duck import tee

    records = [
        {"host": "a.example", "n": 1, "score": 0.5, "ok": True, "meta": {"k": [1, 2]}, "tags": ["x"], "none": None},
        {"host": "b.example", "n": 2, "score": 1.0, "ok": False, "meta": None, "tags": [], "none": None},
        {"n": 3, "host": "c.example"},  # missing values are NULL
    ]
    assert list(tee(iter(records), pg.url(), "shape")) == records
    types = dict(_rows(pg, "SELECT column_name, data_type FROM information_schema.columns "
                           "WHERE table_name = 'shape'"))
    assert types == {"host": "text", "n": "bigint", "score": "double precision", "ok": "boolean", "meta": "text",
                     "tags": "text", "none": "text"}
    got = _rows(pg, "SELECT host, n, score, ok, meta, tags, none FROM shape ORDER BY n")
    assert got == [("a.example", 1, 0.5, True, '{"k": [1, 2]}', '["x"]', None),
                   ("b.example", 2, 1.0, False, None, "[]", None),
                   ("c.example", 3, None, None, None, None, None)]


def test_a_row_the_table_refuses_is_one_line_exit_1(pg: PostgresServer) -> None:
    with psycopg.connect(pg.url()) as con:
        con.execute("CREATE TABLE url_canon (url BIGINT)")
    proc = _cli("url", "canon", "http://a.example/", "--db", pg.url(password="SECRET"))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccrawl: --db postgresql://***@127.0.0.1"), proc.stderr
    assert "SECRET" not in proc.stderr


def test_a_server_that_is_not_there_is_exit_8_without_the_password() -> None:
    url = f"postgresql://ccrawl:SECRET@127.0.0.1:{_free_port()}/postgres"
    proc = _cli("url", "surt", "http://a.example/", "--db", url)
    assert proc.returncode == 8, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect" in lines[0] and "SECRET" not in proc.stderr, proc.stderr


def test_without_the_driver_it_is_exit_2_naming_the_extra() -> None:
    no_driver = ["-c", "import sys; sys.modules['psycopg'] = None; from ccrawl.cli.main import main; "
                       "sys.exit(main(sys.argv[1:]))"]
    proc = _cli("url", "surt", "http://a.example/", "--db", "postgresql://ccrawl@127.0.0.1:1/x", python=no_driver)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "psycopg" in lines[0] and "ccrawl[postgres]" in lines[0], proc.stderr
