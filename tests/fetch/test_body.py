"""Bodies are stored as served: content coding kept, digest over the stored bytes, cut at the cap."""

from __future__ import annotations

import gzip
import hashlib
import zlib

import brotli
import pytest
from backports import zstd

from ccrawl.fetch import sha1_base32
from ccrawl.testing.synthweb import SynthWeb

DECODE = {"gzip": gzip.decompress, "deflate": zlib.decompress, "br": brotli.decompress, "zstd": zstd.decompress}
MAGIC = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd", "deflate": b"\x78"}


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate", "zstd"])
def test_content_coding_is_kept_in_the_stored_body_and_digested_as_stored(
    synth: SynthWeb, config, fetch_one, coding: str
) -> None:
    r = fetch_one(config(), synth.url("site0.test", f"/fault/encoding/{coding}"))
    assert (r.status, r.error) == (200, "")
    assert dict(r.resp_headers)["Content-Encoding"] == coding
    assert r.body.startswith(MAGIC.get(coding, b""))
    assert DECODE[coding](r.body).startswith(b"<!DOCTYPE html>")
    assert r.digest == sha1_base32(r.body)
    assert len(r.digest) == 32 and r.digest.isupper()


def test_every_coding_is_offered_in_accept_encoding(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    host = fresh_host()
    fetch_one(config(), synth.url(host, "/p/0"))
    offered = next(h for _, name, _, h in reversed(synth.stats.log) if name == host)["Accept-Encoding"]
    assert {c.strip() for c in offered.split(",")} >= {"gzip", "deflate", "br", "zstd"}


def test_digest_is_base32_sha1_of_the_body(synth: SynthWeb, config, fetch_one) -> None:
    import base64

    r = fetch_one(config(), synth.url("site0.test", "/p/0"))
    assert base64.b32decode(r.digest) == hashlib.sha1(r.body).digest()


def test_body_over_the_cap_is_cut_at_the_cap_and_the_declared_length_kept(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_body=256 * 1024), synth.url("site0.test", "/fault/big?mb=2"))
    assert (r.status, r.error, r.body_truncated) == (200, "", True)
    assert len(r.body) == 256 * 1024
    assert r.declared_length == 2 * 1024 * 1024
    assert r.digest == sha1_base32(r.body)
    assert r.meta() == {"body_truncated": True, "declared_length": 2 * 1024 * 1024}


def test_chunked_body_over_the_cap_is_cut_with_an_unknown_declared_length(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_body=100_000), synth.url("site0.test", "/fault/big-chunked?mb=1"))
    assert (r.status, r.body_truncated, len(r.body), r.declared_length) == (200, True, 100_000, -1)


def test_body_exactly_at_the_cap_is_not_truncated(synth: SynthWeb, config, fetch_many) -> None:
    size = 64 * 1024
    urls = [synth.url("site0.test", f"/fault/{kind}?mb={size / 1024 / 1024}") for kind in ("big", "big-chunked")]
    for r in fetch_many(config(max_body=size), urls):
        assert (r.status, r.body_truncated, len(r.body)) == (200, False, size)


def test_fifty_megabyte_body_end_to_end(synth: SynthWeb, config, fetch_many) -> None:
    """One 50 MB body read whole (cap raised), and the same body cut at the default 10 MB cap."""
    url = synth.url("site0.test", "/fault/big?mb=50")
    whole, capped = fetch_many(config(max_body=60 * 1024 * 1024, timeout=30), [url]) + fetch_many(
        config(timeout=30), [url]
    )
    total = 50 * 1024 * 1024
    block = (b"0123456789abcdef" * 4096)[: 64 * 1024]
    assert (whole.status, whole.body_truncated, len(whole.body)) == (200, False, total)
    assert whole.digest == sha1_base32(block * (total // len(block)))
    assert (capped.body_truncated, len(capped.body), capped.declared_length) == (True, 10 * 1024 * 1024, total)
    assert capped.body == whole.body[: 10 * 1024 * 1024]


def test_non_html_bodies_are_stored_with_their_content_type(synth: SynthWeb, config, fetch_many) -> None:
    pdf, js = fetch_many(config(), [synth.url("site0.test", "/fault/pdf"), synth.url("site0.test", "/fault/json")])
    assert pdf.content_type == "application/pdf" and pdf.body.startswith(b"%PDF-")
    assert js.content_type.startswith("application/json") and js.body.startswith(b"{")
