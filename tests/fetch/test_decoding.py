"""Content-coding removal for the copy an extractor reads: bounded, every coding, clear failures."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from ccrawl.fetch.decoding import ContentDecodeError, decode_content, looks_like_html


def test_decoding_is_bounded_by_the_limit_for_every_coding() -> None:
    plain = b"\0" * 5_000_000
    assert len(decode_content(gzip.compress(plain), "gzip", 100_000)) == 100_000
    assert len(decode_content(brotli.compress(plain), "br", 100_000)) == 100_000
    assert len(decode_content(zlib.compress(plain), "deflate", 100_000)) == 100_000


def test_each_coding_and_stacked_codings_decode() -> None:
    assert decode_content(zlib.compress(b"abc"), "deflate", 1000) == b"abc"
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode_content(raw.compress(b"xyz") + raw.flush(), "deflate", 1000) == b"xyz"
    assert decode_content(b"plain", "identity", 1000) == b"plain"
    assert decode_content(gzip.compress(gzip.compress(b"two")), "gzip, gzip", 1000) == b"two"
    assert decode_content(brotli.compress(b"br"), "br", 1000) == b"br"
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from backports import zstd
    assert decode_content(zstd.compress(b"zs"), "zstd", 1000) == b"zs"


def test_an_unknown_or_corrupt_coding_is_a_decode_error() -> None:
    with pytest.raises(ContentDecodeError, match="unknown content coding 'compress'"):
        decode_content(b"x", "compress", 1000)
    with pytest.raises(ContentDecodeError, match="gzip body does not decode"):
        decode_content(b"not gzip at all", "gzip", 1000)


def test_html_by_type_or_sniffed_without_one() -> None:
    assert looks_like_html("text/html; charset=utf-8", b"")
    assert looks_like_html("application/xhtml+xml", b"")
    assert not looks_like_html("application/json", b"<html>")
    assert looks_like_html("", b"  <!DOCTYPE html><html>")
    assert not looks_like_html("", b"%PDF-1.7")
