"""Rank tables that are not what they claim: empty gzip members, a cut-off download, junk rows."""

from __future__ import annotations

import gzip
import json

import pytest

from ccrawl.cli.main import main
from ccrawl.commoncrawl.webgraph import parse_rank_line
from ccrawl.errors import InputError
from ccrawl.testing.fakecc import FakeCCServer

HEADER = "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\n"


def _table(cc: FakeCCServer, name: str, data: bytes) -> str:
    path = cc.site.root / "hostile" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return f"{cc.url}/hostile/{name}"


def test_empty_members_between_real_ones_are_skipped(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"{i}\t{100 - i}.0\t{i}\t0.1\tcom.example.h{i}\n" for i in range(1, 6))
    data = gzip.compress(b"") + gzip.compress(HEADER.encode()) + gzip.compress(b"") + gzip.compress(rows.encode())
    url = _table(cc_env, "members.txt.gz", data + gzip.compress(b""))
    assert main(["rank", "all", "--table", url, "-o", "jsonl"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["host"] for r in out] == [f"h{i}.example.com" for i in range(1, 6)]


def test_truncated_table_is_an_error_not_a_short_answer(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = "".join(f"{i}\t{1e6 - i}\t{i}\t0.1\tcom.example.h{i}\n" for i in range(1, 5000))
    data = gzip.compress((HEADER + rows).encode())
    url = _table(cc_env, "cut.txt.gz", data[: len(data) // 2])
    code = main(["rank", "all", "--table", url, "-o", "jsonl"])
    err = capsys.readouterr().err
    assert code == 1 and "truncated" in err


def test_not_gzip_is_one_line_error(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = _table(cc_env, "plain.txt.gz", b"<html>not a table</html>")
    assert main(["rank", "top", "--table", url]) == 1
    assert "not gzip" in capsys.readouterr().err


def test_junk_rows_raise_input_error() -> None:
    assert parse_rank_line("#harmonicc_pos\t...") is None and parse_rank_line("") is None
    with pytest.raises(InputError):
        parse_rank_line("1\t2.0\tcom.example")
    with pytest.raises(InputError):
        parse_rank_line("x\t2.0\t1\t0.1\tcom.example")
