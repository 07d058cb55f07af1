"""Pathological pages are cut off and noted: never a hang, never a crash, never unbounded memory."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.extract import render
from ccrawl.extract.engines import get_extractor
from ccrawl.extract.guards import flatten_deep_nesting
from ccrawl.extract.model import Budget
from tests.conftest import native_or_skip


@pytest.mark.parametrize("engine", ["h2m", "readability", "raw"])
def test_100k_nested_divs_are_flattened_before_parsing(engine: str) -> None:
    html = "<html><body>" + "<div>" * 100_000 + "deep text" + "</div>" * 100_000 + "<p>after</p></body></html>"
    started = time.perf_counter()
    x = get_extractor(engine).extract(html)
    assert time.perf_counter() - started < 5  # unguarded, lexbor alone takes ~20 s here
    assert "deep text" in x.text and "after" in x.text
    assert x.truncated and any(n.startswith("nesting:") for n in x.notes)


def test_flattening_keeps_shallow_pages_byte_identical() -> None:
    html = "<div><section><p>x</p></section></div>" * 5000
    assert flatten_deep_nesting(html, 1000) == (html, 0)


def test_deep_inline_nesting_is_kept_as_flat_text() -> None:
    html = "<p>" + "<span>w " * 5000 + "end</p>"
    x = get_extractor("raw").extract(html, budget=Budget(max_depth=50))
    assert x.text.endswith("end") and x.text.count("w") == 5000
    assert any(n.startswith("depth:") for n in x.notes)


def test_megabytes_on_one_line_are_cut_at_max_chars() -> None:
    html = "<p>" + "word" * 1_000_000 + "</p>"
    x = get_extractor("h2m").extract(html, budget=Budget(max_chars=100_000))
    assert len(x.markdown) == 100_000 and len(x.text) == 100_000
    assert x.truncated and any(n.startswith("chars:") for n in x.notes)


def test_huge_table_is_cut_at_max_table_cells() -> None:
    html = "<table>" + ("<tr>" + "<td>c</td>" * 100 + "</tr>") * 2000 + "</table>"
    x = get_extractor("raw").extract(html, budget=Budget(max_table_cells=1000))
    assert x.markdown.count("\n") <= 12  # header, separator and 10 rows of 100 cells
    assert any(n.startswith("table:") for n in x.notes)


def test_input_over_max_bytes_is_cut_before_parsing() -> None:
    html = b"<p>" + b"a b " * 100_000 + b"</p>"
    x = get_extractor("h2m").extract(html, budget=Budget(max_bytes=10_000))
    assert x.truncated and x.notes[0] == f"size: input cut from {len(html)} to 10000 bytes"
    assert len(x.text) < 10_000


def test_time_budget_stops_rendering() -> None:
    html = "".join(f"<p>paragraph {i} <a href='/p{i}'>link</a></p>" for i in range(60_000))
    started = time.perf_counter()
    x = get_extractor("raw").extract(html, budget=Budget(max_seconds=0.05))
    assert time.perf_counter() - started < 3
    assert any(n.startswith("time:") for n in x.notes)
    assert "paragraph 0" in x.text and "paragraph 59999" not in x.text


def test_garbage_input_never_raises() -> None:
    for junk in (b"", b"\x00\xff" * 1000, b"<<<>>></p></div><table><td>", "<html>" * 3, b"%PDF-1.4 binary"):
        x = get_extractor("h2m").extract(junk)
        assert isinstance(x.markdown, str)


def test_peak_memory_stays_bounded_on_a_50_mb_page() -> None:
    # A fresh interpreter, so the peak RSS is this page's and not the test session's.
    code = (
        "import resource, json\n"
        "from ccrawl.extract.engines import get_extractor\n"
        "html = b'<html><body>' + b'<p>Some paragraph text with words.</p>' * 1_400_000 + b'</body></html>'\n"
        "x = get_extractor('h2m').extract(html)\n"
        "print(json.dumps({'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,"
        " 'notes': x.notes, 'bytes': len(html)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(out.stdout)
    assert result["bytes"] > 50_000_000
    assert result["notes"][0].startswith("size: input cut")
    # Input (50 MB) + a 10 MB DOM and its output: well under a gigabyte, whatever the input size.
    assert result["rss_mb"] < 1000, result


@pytest.mark.parametrize("engine", ["h2m", "raw"])
def test_deep_nesting_in_utf8_bytes_is_found_by_the_byte_count(engine: str) -> None:
    # bytes that decode cleanly as UTF-8 take the counted-bytes path into the guard
    html = ("<html><body>" + "<div>" * 30_000 + "tief \u00fcber" + "</div>" * 30_000 + "</body></html>").encode()
    x = get_extractor(engine).extract(html, content_type="text/html; charset=utf-8")
    assert "tief \u00fcber" in x.text
    assert x.truncated and any(n.startswith("nesting:") for n in x.notes)


def test_a_given_tag_count_decides_like_the_counted_one() -> None:
    deep = "<div>" * 50 + "x" + "</div>" * 50
    assert flatten_deep_nesting(deep, 10, tags=deep.count("<")) == flatten_deep_nesting(deep, 10)
    assert flatten_deep_nesting(deep, 10)[1] > 0
    assert flatten_deep_nesting(deep, 10, tags=0) == (deep, 0)  # the count is what gates the scan


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_native_lt_count_is_bytes_count(data: bytes) -> None:
    native = native_or_skip("h2mwalk")
    assert native.count_lt(data) == data.count(b"<") == render.count_lt_py(data)
    assert render.count_lt(data) == data.count(b"<")
