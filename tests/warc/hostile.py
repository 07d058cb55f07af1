"""Builders of hostile WARC inputs for the reader tests: records made by hand, members spliced."""

from __future__ import annotations

import gzip


def http_response(i: int, body: bytes | None = None, extra_headers: bytes = b"") -> bytes:
    """The HTTP message of page ``i`` (status line, headers, body)."""
    if body is None:
        body = b"<html><head><title>page %d</title></head><body><p>hello %d</p></body></html>" % (i, i)
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
        + extra_headers
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


def warc_record(i: int, block: bytes | None = None, *, declared: int | None = None) -> bytes:
    """One WARC response record for ``http://example.com/i``; ``declared`` lies about the length."""
    if block is None:
        block = http_response(i)
    length = len(block) if declared is None else declared
    head = (
        b"WARC/1.1\r\nWARC-Type: response\r\n"
        b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-%012d>\r\n" % i
        + b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/%d\r\n" % i
        + b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n" % length
    )
    return head + block + b"\r\n\r\n"


def members(records: list[bytes]) -> list[bytes]:
    """Each record as its own gzip member, the way Common Crawl writes them."""
    return [gzip.compress(r, mtime=0) for r in records]


def gzip_bomb(mib: int) -> bytes:
    """A valid gzip stream of ``mib`` MiB of zeros, built in well under a second (about 1 KiB per MiB).

    One MiB is deflated once after a full flush (which resets the window, so the same input gives
    the same bytes); those bytes are repeated, and the trailer gets the real CRC and size.
    """
    import struct
    import zlib

    zeros = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.flush(zlib.Z_FINISH)[:-8]
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    size = (mib << 20) & 0xFFFFFFFF
    return first + again * (mib - 1) + tail + struct.pack("<II", crc, size)


def bomb_record(mib: int) -> bytes:
    """A WARC response whose HTML body is ``Content-Encoding: gzip`` of ``mib`` MiB."""
    body = gzip_bomb(mib)
    http = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )
    return warc_record(0, http)


# Runs a command as its only child and prints the child's peak RSS (kB on Linux) on stderr.
_MEASURE = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdin=sys.stdin, capture_output=True); "
    "sys.stdout.buffer.write(done.stdout); sys.stderr.buffer.write(done.stderr); "
    "print(f'PEAK_RSS_KB={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr); "
    "sys.exit(done.returncode)"
)


def measured(args: list[str], env: dict[str, str], stdin: str = "") -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and peak RSS in MB of ``python -m ccrawl *args`` (``env`` added)."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "ccrawl", *args], input=stdin,
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    lines = done.stderr.splitlines()
    peak = next(int(x.split("=", 1)[1]) for x in lines if x.startswith("PEAK_RSS_KB="))
    err = "\n".join(x for x in lines if not x.startswith("PEAK_RSS_KB="))
    return done.returncode, done.stdout, err, peak / 1024
