"""Undo a body's content coding (gzip, deflate, br, zstd) for rendering, within a size bound.

The stored body keeps its content coding (it is the body *as served*); only the copy handed
to the extractor is decoded, and never past ``limit`` bytes, so a compression bomb costs at
most the bound. A body that does not decode is reported, not raised: the row is kept with
``extractor`` empty and the reason in ``meta_json``.
"""

from __future__ import annotations

import zlib


class ContentDecodeError(ValueError):
    """The body does not decode with the coding its Content-Encoding names."""


def _zlib(body: bytes, wbits: int, limit: int) -> bytes:
    d = zlib.decompressobj(wbits)
    out = d.decompress(body, limit)
    return out


def decode_content(body: bytes, coding: str, limit: int) -> bytes:
    """``body`` with the codings of a Content-Encoding value removed (last applied, first undone)."""
    codings = [c.strip().lower() for c in coding.split(",") if c.strip()]
    data = body
    for c in reversed(codings):
        try:
            if c in ("gzip", "x-gzip"):
                data = _zlib(data, 16 + zlib.MAX_WBITS, limit)
            elif c == "deflate":
                try:
                    data = _zlib(data, zlib.MAX_WBITS, limit)
                except zlib.error:  # servers send raw deflate as often as zlib-wrapped
                    data = _zlib(data, -zlib.MAX_WBITS, limit)
            elif c == "br":
                import brotli

                data = brotli.decompress(data)[:limit]
            elif c == "zstd":
                try:
                    from compression import zstd
                except ImportError:
                    from backports import zstd

                data = zstd.ZstdDecompressor().decompress(data, max_length=limit)
            elif c in ("identity", ""):
                continue
            else:
                raise ContentDecodeError(f"unknown content coding {c!r}")
        except ContentDecodeError:
            raise
        except Exception as exc:  # each codec raises its own error type for corrupt input
            raise ContentDecodeError(f"{c} body does not decode: {exc}") from exc
    return data


def looks_like_html(content_type: str, body: bytes) -> bool:
    """HTML by its Content-Type, or by its first bytes when the server sent no type."""
    ct = content_type.split(";", 1)[0].strip().lower()
    if ct:
        return ct in ("text/html", "application/xhtml+xml")
    head = body[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head
