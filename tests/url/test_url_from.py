"""``ccrawl url ... --from FILE``: every input row out, in order, with the new columns or its error."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.url import batchio
from ccrawl.url.canon import canonicalize, url_key
from ccrawl.url.domain import registered_domain, shard_key, shard_of
from ccrawl.url.surt import surt
from tests.url.urlgen import EXAMPLE_URLS

GOOD = [u for u in EXAMPLE_URLS if u.strip() and "\t" not in u]


def surt_or_none(url: str) -> str | None:
    try:
        return surt(url)
    except Exception:
        return None


def write_text(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def read_rows(path: Path) -> list[dict[str, object]]:
    return pq.read_table(path).to_pylist()


def test_surt_from_text_writes_every_line_in_order_with_errors_in_place(tmp_path: Path) -> None:
    lines = [u.encode() for u in GOOD] + [b"", b"\xff\xfehttp://x/", b"http://a.com:99999/", b"http://last.org/x"]
    src = write_text(tmp_path / "in.txt", lines)
    out = tmp_path / "out.parquet"
    assert main(["url", "surt", "--from", str(src), "-o", "parquet", "--out", str(out), "-q"]) == 0
    rows = read_rows(out)
    assert len(rows) == len(lines)
    assert [r["url"] for r in rows[: len(GOOD)]] == GOOD
    assert [r["surt"] for r in rows[: len(GOOD)]] == [surt_or_none(u) for u in GOOD]
    assert all(r["error"] is None for r in rows[: len(GOOD)])
    empty, not_utf8, bad_port, last = rows[len(GOOD) :]
    assert empty["error"] == f"line {len(GOOD) + 1}: empty line" and empty["surt"] is None
    assert "not UTF-8" in str(not_utf8["error"]) and not_utf8["surt"] is None
    assert "bad port" in str(bad_port["error"]) and bad_port["url"] == "http://a.com:99999/"
    assert last == {"url": "http://last.org/x", "surt": "org,last)/x", "error": None}
    assert not (tmp_path / "out.parquet.tmp").exists()


def test_skip_bad_drops_bad_rows_and_counts_them_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_text(tmp_path / "in.txt", [b"http://a.com/", b"", b"\xff", b"http://b.com/x", b"   "])
    out = tmp_path / "out.parquet"
    assert main(["url", "surt", "--from", str(src), "-o", "parquet", "--out", str(out), "--skip-bad"]) == 0
    expected = [{"url": "http://a.com/", "surt": "com,a)/"}, {"url": "http://b.com/x", "surt": "com,b)/x"}]
    assert read_rows(out) == expected
    assert "skipped 3 bad rows of 5 (--skip-bad)" in capsys.readouterr().err


def test_many_chunks_through_the_pool_come_back_in_input_order(tmp_path: Path) -> None:
    urls = [f"https://h{i}.example{i % 7}.co.uk/p/{i}?b={i}&a=1" for i in range(5000)]
    src = write_text(tmp_path / "in.txt", [u.encode() for u in urls])
    batches: list[pa.RecordBatch] = []
    report = batchio.run_batch("surt", str(src), batches.append, workers=2, block=4096)
    assert report.chunks > 20 and report.rows_in == report.rows_out == 5000 and report.bad == 0
    table = pa.Table.from_batches(batches)
    assert table.column("url").to_pylist() == urls
    assert table.column("surt").to_pylist() == [surt(u) for u in urls]


@pytest.mark.parametrize("kind", ["gz", "gz-members", "zst"])
def test_compressed_text_is_read_by_its_magic_bytes(tmp_path: Path, kind: str) -> None:
    urls = [f"http://www.site{i}.org/a/../b/{i}" for i in range(300)]
    data = b"".join(u.encode() + b"\n" for u in urls)
    src = tmp_path / "in.bin"  # no telling suffix: the first bytes decide
    if kind == "gz":
        src.write_bytes(gzip.compress(data))
    elif kind == "gz-members":  # several members, one of them empty, as concatenated gzip files are
        src.write_bytes(gzip.compress(data[:1000]) + gzip.compress(b"") + gzip.compress(data[1000:]))
    else:
        with pa.CompressedOutputStream(str(src), "zstd") as stream:
            stream.write(data)
    out = tmp_path / "out.parquet"
    assert main(["url", "surt", "--from", str(src), "-o", "parquet", "--out", str(out), "-q"]) == 0
    rows = read_rows(out)
    assert [r["url"] for r in rows] == urls
    assert [r["surt"] for r in rows] == [surt(u) for u in urls]


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_compressed_file_cut_in_half_writes_the_rows_before_the_cut_and_says_where_it_broke(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, fmt: str) -> None:
    lines = [b"http://a%d.com/%d" % (i * 7919 % 10007, i) for i in range(20000)]
    data = b"\n".join(lines) + b"\n"
    packed = gzip.compress(data) if kind == "gzip" else pa.compress(data, "zstd", asbytes=True)
    src = tmp_path / "in.cut"
    src.write_bytes(packed[: len(packed) // 2])
    out = tmp_path / "out"
    code = main(["url", "surt", "--from", str(src), "-o", fmt, "--out", str(out), "--workers", "2"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "cannot decompress past line" in line and "the input breaks there" in line
    if fmt == "parquet":
        rows = read_rows(out)
        assert not (tmp_path / "out.tmp").exists()
    else:
        import json

        rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) > 1000  # what was read before the cut is written, in order, whole lines only
    assert [r["url"] for r in rows] == [u.decode() for u in lines[: len(rows)]]
    assert all(r["surt"] == surt(str(r["url"])) for r in rows)
    assert f"past line {len(rows):,} (" in line and f"the rows of the {len(rows):,} line(s)" in line


def test_parquet_input_keeps_its_columns_and_reads_the_named_column(tmp_path: Path) -> None:
    links = ["https://www.Example.co.uk/a?utm_source=1&id=2", None, "", "ftp://files.example.com/x", "http://foo.github.io/"]
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"n": list(range(len(links))), "link": links}), src, row_group_size=2)
    out = tmp_path / "out.parquet"
    args = ["url", "key", "--from", str(src), "--column", "link", "-o", "parquet", "--out", str(out), "-q"]
    assert main(args) == 0
    rows = read_rows(out)
    assert [r["n"] for r in rows] == list(range(len(links)))
    assert list(rows[0]) == ["n", "link", "url_key", "canonical", "error"]
    assert rows[0]["canonical"] == canonicalize(links[0]) and rows[0]["url_key"] == url_key(canonicalize(links[0]))
    assert rows[1]["error"] == "null URL" and rows[1]["url_key"] is None
    assert "empty URL" in str(rows[2]["error"]) and "scheme 'ftp'" in str(rows[3]["error"])
    assert rows[4]["canonical"] == "http://foo.github.io/" and rows[4]["error"] is None


def test_missing_parquet_column_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"link": ["http://a.com/"]}), src)
    code = main(["url", "surt", "--from", str(src), "-o", "parquet", "--out", str(tmp_path / "o.parquet")])
    assert code == 2 and "--column 'url' is not in" in capsys.readouterr().err


def test_domain_and_shard_from_text_as_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    urls = ["https://a.b.example.co.uk/x", "http://foo.github.io/", "1.2.3.4", "http:///x"]
    src = write_text(tmp_path / "in.txt", [u.encode() for u in urls])
    assert main(["url", "domain", "--from", str(src), "-o", "jsonl", "-q"]) == 0
    import json

    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["url"] for r in rows] == urls
    assert [r.get("registered_domain") for r in rows] == [registered_domain(u) for u in urls]
    assert rows[3]["error"].startswith("no host")
    assert main(["url", "shard", "--shards", "3", "--from", str(src), "-o", "jsonl", "-q"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["shard"] for r in rows] == [shard_of(u, 3) for u in urls]
    assert [r["shard_key"] for r in rows] == [shard_key(u) for u in urls]
    mine = shard_of(urls[0], 3)
    assert main(["url", "shard", "--shards", "3", "--shard", str(mine), "--from", str(src), "-o", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["shard"] == mine for r in rows)


def test_empty_input_still_writes_a_parquet_file_with_the_columns(tmp_path: Path) -> None:
    src = tmp_path / "empty.txt"
    src.write_bytes(b"")
    out = tmp_path / "out.parquet"
    assert main(["url", "canon", "--from", str(src), "-o", "parquet", "--out", str(out), "-q"]) == 0
    table = pq.read_table(out)
    assert table.num_rows == 0 and table.schema.names == ["url", "canonical", "error"]


def test_every_row_bad_exits_with_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_text(tmp_path / "in.txt", [b"", b"\xff"])
    out = tmp_path / "out.parquet"
    assert main(["url", "surt", "--from", str(src), "-o", "parquet", "--out", str(out), "-q"]) == 1
    assert "every one of the 2 input rows was bad" in capsys.readouterr().err
    assert pq.read_table(out).num_rows == 2  # the rows and their reasons are still written


def test_stdin_text_and_stdin_parquet(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = tmp_path / "a.parquet"
    text = b"http://www.a.com/x\nb.org\n"
    cmd = [sys.executable, "-m", "ccrawl", "url", "surt", "--from", "-", "-o", "parquet", "--out", str(out), "-q"]
    proc = subprocess.run(cmd, input=text, capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [r["surt"] for r in read_rows(out)] == ["com,a)/x", "org,b)/"]
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"url": ["http://www.a.com/x", "b.org"]}), src)
    out2 = tmp_path / "b.parquet"
    cmd[-2] = str(out2)
    proc = subprocess.run(cmd, input=src.read_bytes(), capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert read_rows(out2) == [dict(r, error=None) for r in read_rows(out)]


def test_help_shows_the_batch_flags() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for leaf in ("surt", "canon", "key", "domain", "shard"):
        proc = subprocess.run([sys.executable, "-m", "ccrawl", "url", leaf, "--help"], capture_output=True,
                              text=True, env=env, timeout=60)
        own, shared = proc.stdout.split("Global options")
        for flag in ("--from FILE", "--column", "--out FILE", "--skip-bad", "--workers"):
            assert flag in own, (leaf, flag)
        assert "--source" in shared and "--workers" not in shared  # --from must not hide the global --source


def test_batch_flags_without_from_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["url", "surt", "http://a.com/", "--skip-bad"]) == 2
    assert "go with --from" in capsys.readouterr().err
    assert main(["url", "surt", "http://a.com/", "--from", "x.txt"]) == 2
