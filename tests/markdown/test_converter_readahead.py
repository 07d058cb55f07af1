"""The in-process Converter reads a bounded batch ahead: same rows in the same order, a bad record after
some documents still lets those documents out first, and it never reads more than one batch ahead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ccrawl.markdown import convert
from ccrawl.markdown.convert import Converter, SourceDoc, convert_doc


def _doc(i: int) -> SourceDoc:
    body = f"<html><head><title>Page {i}</title></head><body><h1>Heading {i}</h1><p>Text number {i} here.</p>"
    body += "" if i % 3 else "<p>caf\u00e9 \u2014 non-ASCII Markdown</p>"
    return SourceDoc(f"https://example.com/{i}", "2024-01-02T03:04:05Z", f"<urn:uuid:{i:08d}-0000>",
                     (body + "</body></html>").encode(), "text/html; charset=utf-8")


def test_rows_and_order_match_one_by_one_conversion() -> None:
    docs = [_doc(i) for i in range(2 * convert.INLINE_BATCH + 6)]  # two whole batches and a short one
    with Converter("h2m") as conv:
        got = list(conv.convert(iter(docs)))
    want = [convert_doc("h2m", d) for d in docs]
    assert [g.row() for g in got] == [w.row() for w in want]
    # markdown_length is the UTF-8 length, ASCII fast path or not
    assert all(g.markdown_length == len(g.markdown.encode("utf-8")) for g in got)
    assert any(not g.markdown.isascii() for g in got)


def test_documents_read_before_a_bad_record_come_out_before_its_error() -> None:
    def source() -> Iterator[SourceDoc]:
        for i in range(3):
            yield _doc(i)
        raise ValueError("bad WARC record at offset 42")

    out: list[str] = []
    with Converter("h2m") as conv, pytest.raises(ValueError, match="offset 42"):
        for doc in conv.convert(source()):
            out.append(doc.url)
    assert out == [f"https://example.com/{i}" for i in range(3)]


def test_reads_at_most_one_batch_ahead() -> None:
    read = 0

    def source() -> Iterator[SourceDoc]:
        nonlocal read
        for i in range(3 * convert.INLINE_BATCH):
            read += 1
            yield _doc(i)

    with Converter("h2m") as conv:
        for n, _doc_out in enumerate(conv.convert(source()), 1):
            assert read - n < convert.INLINE_BATCH
