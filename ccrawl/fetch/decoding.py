"""Undo a body's content coding (gzip, deflate, br, zstd) for rendering, within a size bound.

The fetcher keeps the body as served, content coding included, because that is what a capture
row and a WARC record store; only the copy handed to an extractor is decoded, and never past
``limit`` bytes, so a compression bomb costs at most the bound (brotli included: its decoder is
told the output limit rather than cut after the fact). A body that does not decode raises
:class:`ContentDecodeError`, which callers turn into a note on the row, never a crash.
"""

from __future__ import annotations

import zlib

HTML_TYPES = ("text/html", "application/xhtml+xml")


class ContentDecodeError(ValueError):
    """The body does not decode with the coding its Content-Encoding names."""


def decode_content(body: bytes, coding: str, limit: int) -> bytes:
    """``body`` with the codings of a Content-Encoding value undone (last applied, first undone)."""
    data = body
    for c in reversed([c.strip().lower() for c in coding.split(",") if c.strip()]):
        try:
            if c in ("gzip", "x-gzip"):
                data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, limit)
            elif c == "deflate":
                try:
                    data = zlib.decompressobj(zlib.MAX_WBITS).decompress(data, limit)
                except zlib.error:  # servers send raw deflate about as often as zlib-wrapped
                    data = zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, limit)
            elif c == "br":
                import brotli

                data = brotli.Decompressor().process(data, output_buffer_limit=limit)[:limit]
            elif c == "zstd":
                try:
                    from compression import zstd  # type: ignore[import-not-found,unused-ignore]
                except ImportError:
                    from backports import zstd

                data = zstd.ZstdDecompressor().decompress(data, max_length=limit)
            elif c != "identity":
                raise ContentDecodeError(f"unknown content coding {c!r}")
        except ContentDecodeError:
            raise
        except Exception as exc:  # each codec has its own error type for a corrupt stream
            raise ContentDecodeError(f"{c} body does not decode: {exc}") from exc
    return data


def looks_like_html(content_type: str, body: bytes) -> bool:
    """HTML by its Content-Type, or by its first bytes when the server sent none."""
    ct = content_type.split(";", 1)[0].strip().lower()
    if ct:
        return ct in HTML_TYPES
    head = body[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head
