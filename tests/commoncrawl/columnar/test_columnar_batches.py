"""``columnar urls`` / ``locations`` render from Arrow record batches the bytes the per-record path rendered.

A local copy of a cc-index-table whose URLs and WARC file names hold hostile text (NUL, newlines, U+2028,
quotes, tabs, commas, an empty string, nulls, non-ASCII) is queried twice: through the operation as a
front end with no batch renderer calls it (records, rendered by :func:`ccrawl.output.emit`), and through
the CLI, whose operation yields record batches rendered by :mod:`ccrawl.batchout`; every format must come
out byte for byte the same. (Arrow text is UTF-8, so a lone surrogate cannot be in these columns; the
writers' own tests in ``tests/test_batchout.py`` cover the rest.) Run with and without
``CCRAWL_NO_EXTENSIONS=1``.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.output import OutputOptions, emit

HOSTILE = [
    "https://a.test/plain", "https://a.test/nul\x00byte", "https://a.test/new\nline", "https://a.test/cr\rx",
    "https://a.test/line\u2028sep\u2029", 'https://a.test/"quoted"', "https://a.test/tab\there", "https://a.test/a,b",
    "", None, "https://a.test/é ü 中文 😀", "https://a.test/back\\slash\x01\x1f\x7f", " padded ", "#hash", "{brace",
]
CRAWL = "CC-MAIN-2025-26"
FORMATS = ("jsonl", "csv", "tsv", "table", "json", "parquet")


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local bucket: one crawl, two parts (one a row group per 4 rows), the hostile values in ``url`` and
    ``warc_filename`` (the published schema made nullable, so a null reaches them too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.columnar.schema import arrow_schema
    from ccrawl.testing.fakecc.columnar import TABLE_ROOT

    root = tmp_path_factory.mktemp("hostile-index")
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    rows: list[dict[str, Any]] = []
    for i in range(60):
        value = HOSTILE[i % len(HOSTILE)]
        row: dict[str, Any] = dict.fromkeys(schema.names)
        row.update(
            url_surtkey=f"test,a)/{i:04d}", url=value, url_host_name="a.test", url_protocol="https", url_path="/",
            fetch_time=dt.datetime(2025, 6, 1, tzinfo=dt.UTC), fetch_status=200, warc_record_id=bytes(16),
            warc_filename=HOSTILE[(i * 7) % len(HOSTILE)], warc_record_offset=None if i % 9 == 4 else i * 1000,
            warc_record_length=i, warc_segment="1", url_host_tld="test", url_host_registered_domain="a.test",
        )
        rows.append(row)
    for p, chunk in enumerate((rows[:25], rows[25:])):
        path = root / TABLE_ROOT / f"crawl={CRAWL}" / "subset=warc" / f"part-{p:05d}.c000.gz.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(chunk, schema=schema), path, row_group_size=4, write_page_index=True)
    return root


def _per_record(kind: str, root: Path, fmt: str, **output: Any) -> bytes:
    """What the per-record renderer writes for the operation's records (no ``arrow``: a dict a row)."""
    op = ops.get(f"columnar.{kind}")
    records = op(local=str(root), crawl="latest", engine="native", limit=output.get("limit") or None)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    emit(records, OutputOptions(fmt=fmt, **output), columns=op.columns, stream=stream)
    stream.flush()
    return raw.getvalue()


def _cli(root: Path, *args: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.run([sys.executable, "-m", "ccrawl", *args, "--local", str(root)], env=env,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc.stdout


def test_the_operation_yields_record_batches_when_asked_and_records_otherwise(hostile_root: Path) -> None:
    import pyarrow as pa

    op = ops.get("columnar.locations")
    batches = list(op(local=str(hostile_root), engine="native", arrow=True))
    records = list(op(local=str(hostile_root), engine="native"))
    assert batches and all(isinstance(b, pa.RecordBatch) for b in batches)
    assert all(isinstance(r, dict) for r in records)
    assert [r for b in batches for r in b.to_pylist()] == records
    assert sum(r["url"] is None for r in records) == 4 and sum(r["url"] == "" for r in records) == 4
    # DuckDB answers in records still; the aggregates are records whatever the flag
    assert all(isinstance(r, dict) for r in op(local=str(hostile_root), engine="duckdb", arrow=True))
    assert list(ops.get("columnar.count")(local=str(hostile_root), arrow=True)) == [{"count": 60}]


@pytest.mark.parametrize("kind", ["urls", "locations"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_cli_writes_the_per_record_bytes_for_every_format(kind: str, fmt: str, hostile_root: Path) -> None:
    got = _cli(hostile_root, "-o", fmt, "columnar", kind)
    want = _per_record(kind, hostile_root, fmt)
    assert got == want
    assert got.startswith(b"PAR1") if fmt == "parquet" else b"a.test/nul" in got and b"line\xe2\x80\xa8sep" in got


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "parquet"])
def test_fields_limit_and_no_header_are_the_per_record_ones(fmt: str, hostile_root: Path) -> None:
    cases: list[tuple[list[str], dict[str, Any]]] = [
        (["-n", "17"], {"limit": 17}),
        (["--fields", "warc_record_offset,url"], {"fields": ["warc_record_offset", "url"]}),
        (["--no-header", "--fields", "warc_filename"], {"no_header": True, "fields": ["warc_filename"]}),
        (["--template", "{{.url}}|{{.warc_record_offset}}"], {"template": "{{.url}}|{{.warc_record_offset}}"}),
    ]
    for flags, output in cases:
        got = _cli(hostile_root, "-o", fmt, *flags, "columnar", "locations")
        assert got == _per_record("locations", hostile_root, fmt, **output), flags


_WRAPPER = """
import atexit, os, sys
def report():
    names = [n for n in ("numpy", "pyarrow", "pyarrow.compute", "pandas") if n in sys.modules]
    os.write(2, ("\\nimported: " + ",".join(names) + "\\n").encode())
atexit.register(report)
sys.argv = ["ccrawl", *sys.argv[1:]]
from ccrawl._entry import run
run()
"""


def _imported(root: Path, *args: str) -> tuple[bytes, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args, "--local", str(root)], capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    last = proc.stderr.decode().rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("imported: "), (args, proc.stderr.decode()[-2000:])
    return proc.stdout, set(filter(None, last.removeprefix("imported: ").split(",")))


def test_the_native_count_imports_neither_numpy_nor_pyarrow_compute(hostile_root: Path) -> None:
    """pyarrow's import of numpy and pyarrow.compute's wrappers were most of the command's start-up."""
    for filters in ([], ["--domain", "a.test", "--status", "200"], ["--tld", "test", "--path-prefix", "/",
                                                                   "--not-status", "404", "--lang", "eng"]):
        out, names = _imported(hostile_root, "-o", "jsonl", "columnar", "count", *filters)
        assert out == (b'{"count": 0}\n' if "--lang" in filters else b'{"count": 60}\n'), filters
        assert not names & {"numpy", "pyarrow.compute", "pandas"}, (filters, names)
        assert "pyarrow" in names or "--domain" not in filters  # the rows' masks are Arrow's kernels
    out, names = _imported(hostile_root, "-o", "jsonl", "columnar", "urls", "--domain", "a.test")
    assert out.count(b"\n") == 60 and "numpy" not in names
    # DuckDB's engine is left as it was (it imports what it imports)
    out, names = _imported(hostile_root, "-o", "jsonl", "columnar", "count", "--engine", "duckdb")
    assert out == b'{"count": 60}\n'
