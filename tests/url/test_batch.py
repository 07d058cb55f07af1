"""Batch URL kernels: pyarrow arrays in, pyarrow arrays out, row for row equal to the per-call API.

Run with and without ``CCRAWL_NO_EXTENSIONS=1``: the module-level ``*_array`` functions are the
compiled kernels in the first pass and the pure-Python twins in the second; the parity tests compare
the compiled batch kernel with the twin directly when it is built.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.errors import CcrawlError
from ccrawl.url import batch, canon, domain, surt
from tests.conftest import native_or_skip
from tests.url.urlgen import EXAMPLE_URLS, any_text, urls

ROWS = [*EXAMPLE_URLS, None, "", "   ", "http://a.com:99999/", "ftp://x.org/", "http://[::1]/", "http://\u00e9.fr/"]


def per_call(func: Any, rows: list[str | None]) -> tuple[list[Any], list[bool]]:
    values, bad = [], []
    for row in rows:
        if row is None:
            values.append(None)
            bad.append(False)
            continue
        try:
            values.append(func(row))
            bad.append(False)
        except CcrawlError:
            values.append(None)
            bad.append(True)
    return values, bad


@pytest.mark.parametrize("as_arrow", [False, True])
def test_surt_array_equals_the_per_call_api_row_for_row(as_arrow: bool) -> None:
    given_rows: Any = pa.array(ROWS, pa.string()) if as_arrow else ROWS
    values, errors = surt.surt_array(given_rows, with_errors=True)
    expected, bad = per_call(surt.surt, ROWS)
    assert values.to_pylist() == expected
    assert [e is not None for e in errors.to_pylist()] == bad
    assert "empty URL" in errors[ROWS.index("")].as_py()
    assert "bad port" in errors[ROWS.index("http://a.com:99999/")].as_py()
    assert surt.surt_array(given_rows).to_pylist() == expected


def test_surt_array_reads_a_sliced_large_string_array_with_nulls() -> None:
    big = pa.array([None, "x", *ROWS, "http://b.org/"], pa.large_string()).slice(2, len(ROWS) + 1)
    assert surt.surt_array(big).to_pylist() == per_call(surt.surt, [*ROWS, "http://b.org/"])[0]
    chunked = pa.chunked_array([pa.array(ROWS[:5]), pa.array(ROWS[5:])])
    assert surt.surt_array(chunked).to_pylist() == per_call(surt.surt, ROWS)[0]


def test_surt_array_of_a_lone_surrogate_names_the_row() -> None:
    values, errors = surt.surt_array(["http://a.com/", "http://a.com/\udc80"], with_errors=True)
    assert values.to_pylist() == ["com,a)/", None]
    assert "Unicode" in errors[1].as_py()


@settings(max_examples=150, deadline=None, database=None)
@given(rows=st.lists(st.one_of(urls(), any_text, st.none()), max_size=25))
def test_native_surt_array_equals_the_twin(rows: list[str | None]) -> None:
    native = native_or_skip("surt")
    got, got_errors = native.surt_array(rows, True)
    want, want_errors = surt.surt_array_py(rows, True)
    assert got.to_pylist() == want.to_pylist()
    assert got_errors.to_pylist() == want_errors.to_pylist()


def test_domain_columns_equal_the_per_call_api() -> None:
    rows = [*ROWS, "a.b.example.co.uk", "www.foo.github.io:8080", "1.2.3.4", "co.uk", "\u98df\u72ee.com.cn"]
    host, registered, key = domain.domain_columns(rows)
    present = [r for r in rows if r is not None]
    assert host.to_pylist() == [None if r is None else domain.host_of(r) for r in rows]
    assert registered.to_pylist() == [None if r is None else domain.registered_domain(r) for r in rows]
    assert key.to_pylist() == [None if r is None else domain.shard_key(r) for r in rows]
    icann = domain.domain_columns(present, False)[1].to_pylist()
    assert icann == [domain.registered_domain(r, include_private=False) for r in present]
    shards = domain.shard_array(rows, 7).to_pylist()
    assert shards == [None if r is None else domain.shard_of(r, 7) for r in rows]


@settings(max_examples=150, deadline=None, database=None)
@given(rows=st.lists(st.one_of(urls(), any_text), max_size=25), include_private=st.booleans())
def test_native_domain_columns_equal_the_twin(rows: list[str], include_private: bool) -> None:
    native_or_skip("domain")
    got = [a.to_pylist() for a in domain.domain_columns(rows, include_private)]
    want = [a.to_pylist() for a in domain.domain_columns_py(rows, include_private)]
    assert got == want
    assert domain.shard_array(rows, 5).to_pylist() == domain.shard_array_py(rows, 5).to_pylist()


def test_canonical_array_and_url_keys_equal_the_per_call_api() -> None:
    values, errors = canon.canonical_array(ROWS, with_errors=True)
    expected, bad = per_call(canon.canonicalize, ROWS)
    assert values.to_pylist() == expected
    assert [e is not None for e in errors.to_pylist()] == bad
    keys = canon.url_key_array(values).to_pylist()
    assert keys == [None if c is None else canon.url_key(c) for c in expected]


@settings(max_examples=150, deadline=None, database=None)
@given(rows=st.lists(st.one_of(urls(), any_text, st.none()), max_size=25))
def test_native_canonical_array_equals_the_twin(rows: list[str | None]) -> None:
    native_or_skip("canon")
    got, got_errors = canon.canonical_array(rows, with_errors=True)
    want, want_errors = canon.canonical_array_py(rows, with_errors=True)
    assert got.to_pylist() == want.to_pylist()
    assert got_errors.to_pylist() == want_errors.to_pylist()


BLOCKS = [
    b"",
    b"\n",
    b"http://a.com/\nhttp://b.com/",
    b"http://a.com/\r\n\r\nx\n",
    b"ok\n\xff\xfe\nbad\x00nul\n\xed\xa0\x80\n\xc0\x80\n\xf0\x9f\x98\x80\n\xe4\xb8\n\xe4\xb8\xad\n",
    b"\xf4\x90\x80\x80\n\xf0\x8f\xbf\xbf\nlast",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_lines_array_keeps_every_line_in_place_and_names_bad_ones(block: bytes) -> None:
    urls_py, errors_py = batch.lines_array_py(block, 10)
    lines = block[:-1].split(b"\n") if block.endswith(b"\n") else (block.split(b"\n") if block else [])
    assert len(urls_py) == len(lines)
    for line, value, error in zip(lines, urls_py.to_pylist(), errors_py.to_pylist(), strict=True):
        line = line.removesuffix(b"\r")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            assert value is None and "not UTF-8" in error
            continue
        if not line or b"\x00" in line:
            assert value is None and error is not None
        else:
            assert value == text and error is None
    native = native_or_skip("surt")
    urls_c, errors_c = native.lines_array(block, 10)
    assert urls_c.to_pylist() == urls_py.to_pylist()
    assert errors_c.to_pylist() == errors_py.to_pylist()


@settings(max_examples=200, deadline=None, database=None)
@given(block=st.binary(max_size=80))
def test_native_lines_array_equals_the_twin_on_any_bytes(block: bytes) -> None:
    native = native_or_skip("surt")
    got = [a.to_pylist() for a in native.lines_array(block, 1)]
    want = [a.to_pylist() for a in batch.lines_array_py(block, 1)]
    assert got == want
