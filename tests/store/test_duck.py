"""--db: every record a command prints also lands in a DuckDB table named after the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.errors import UsageError
from ccrawl.store.duck import connect, table_name_for, tee


def test_tee_yields_records_unchanged_and_stores_them(tmp_path: Path) -> None:
    db = str(tmp_path / "out.db")
    records = [{"url": f"http://x/{i}", "n": i, "extra": None} for i in range(12_000)]
    assert list(tee(iter(records), db, "t", columns=("url", "n", "extra"))) == records
    con = connect(db, read_only=True)
    assert con.execute("select count(*), sum(n), count(extra) from t").fetchone() == (12_000, sum(range(12_000)), 0)
    con.close()


def test_tee_appends_by_name_across_runs(tmp_path: Path) -> None:
    db = str(tmp_path / "out.db")
    list(tee([{"a": 1, "b": "x"}], db, "t"))
    list(tee([{"b": "y", "a": 2}], db, "t", columns=("b", "a")))
    con = connect(db, read_only=True)
    assert con.execute("select a, b from t order by a").fetchall() == [(1, "x"), (2, "y")]
    con.close()


def test_non_duckdb_store_is_a_usage_error(tmp_path: Path) -> None:
    # postgres:// and postgresql:// go to PostgreSQL (tests/store/test_pg_tee.py); any other scheme is refused
    with pytest.raises(UsageError, match="mysql:// stores are not supported"):
        list(tee([{"a": 1}], "mysql://localhost/x", "t"))


def test_cli_db_flag_tees_the_command_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "out.db"
    assert main(["config", "show", "--db", str(db), "-o", "jsonl", "--data-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    con = connect(str(db), read_only=True)
    rows = con.execute("select key, value from config_show").fetchall()
    con.close()
    assert len(rows) == len(printed)
    assert ("data_dir", str(tmp_path)) in rows


def test_table_name_for_command_path() -> None:
    assert table_name_for("ccrawl url surt") == "url_surt"
    assert table_name_for("ccrawl") == "records"
