"""warc.parse yields record batches: every output format is the per-record renderer's bytes, on real pages
and hostile records (built here), through the operation and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccrawl import ops
from ccrawl.cli.main import main
from ccrawl.errors import InputError
from ccrawl.ops.parse import COLUMNS, CONTENT_COLUMNS, parse_rows, warc_parse, warc_parse_batches
from tests.batchparity import assert_same_ndjson, assert_same_output


def warc_record(wtype: str, url: bytes, block: bytes, extra: bytes = b"", n: int = 0) -> bytes:
    head = (b"WARC/1.0\r\nWARC-Type: " + wtype.encode() + b"\r\nWARC-Target-URI: " + url
            + b"\r\nWARC-Date: 2024-03-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:%032x>\r\n" % n + extra
            + b"Content-Length: %d\r\n\r\n" % len(block))
    return head + block + b"\r\n\r\n"


def warc_response(url: bytes, body: bytes, n: int, *, status: bytes = b"200", mime: bytes = b"text/html; charset=utf-8"
              ) -> bytes:
    http = b"HTTP/1.1 " + status + b" OK\r\nContent-Type: " + mime + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
    return warc_record("response", url, http + body, b"Content-Type: application/http; msgtype=response\r\n", n)


HOSTILE_PAGE = ('<html lang="fr"><head><title>Tab\there, "quoted", a,comma — é 中文 😀</title>'
                '<meta name="description" content="line one\nline two\ttabbed"></head><body>'
                '<p>First, "paragraph"\twith a tab.</p><p>Second\r\nparagraph: \u2028 sep \u2029 para \x85 nel</p>'
                '<a href="/a,b">a</a> <a href="https://other.test/q?x=1&amp;y=&quot;2&quot;">q</a></body></html>')


@pytest.fixture
def hostile_warc(tmp_path: Path) -> Path:
    info = b"software: test\r\nformat: WARC File Format 1.0\r\nisPartOf: t,est\r\n"
    path = tmp_path / "hostile.warc"
    path.write_bytes(
        warc_record("warcinfo", b"", info,
                    b"WARC-Filename: hostile.warc\r\nContent-Type: application/warc-fields\r\n", 1)
        + warc_response("https://example.com/é?q=a,b\"c\td".encode(), HOSTILE_PAGE.encode(), 2)
        + warc_response(b"https://example.com/huge", b"<p>huge status</p>", 3, status=b"99999999999999999999999")
        + warc_response(b"https://example.com/plain", b"a\tb\nc", 4, mime=b"text/plain")
        + warc_response(b"https://example.com/empty", b"", 5)
        + warc_response(b"https://example.com/bad\xff\xfeurl", b"<title>x</title><p>y</p>", 6)
        + warc_record("request", b"https://example.com/", b"GET / HTTP/1.1\r\n\r\n", b"", 7)
    )
    return path


@pytest.fixture
def pages_warc(tmp_path: Path, corpus_dir: Path) -> Path:
    """A WARC of 40 of the shared corpus's real pages."""
    pages = sorted((corpus_dir / "html-eval" / "pages").glob("*.html"))[:40]
    path = tmp_path / "pages.warc"
    with path.open("wb") as out:
        for n, page in enumerate(pages):
            out.write(warc_response(f"https://site{n % 7}.test/{page.stem}".encode(), page.read_bytes(), n))
    return path


def _columns(content: tuple[str, ...]) -> tuple[str, ...]:
    from ccrawl.cli.parse import parse_columns

    return parse_columns(COLUMNS, content=content, lang=None, wet=False)


def _as_operation(kw: dict[str, object]) -> dict[str, object]:
    """The engine's keywords as the operation takes them: its notice inside the injected context."""
    from ccrawl.ops.context import OpContext

    given = dict(kw)
    notice = given.pop("notice")
    assert callable(notice)
    return {**given, "ctx": OpContext.of(notice=notice)}


CONTENTS = [(), ("text",), ("links",), ("meta",), ("markdown", "meta"), ("text", "markdown", "links", "meta")]


@pytest.mark.parametrize("content", CONTENTS, ids=lambda c: "+".join(c) or "none")
def test_every_format_of_hostile_records_is_the_per_record_renderers(hostile_warc: Path, content: tuple[str, ...]
                                                                     ) -> None:
    kw = {"format": None, "types": (), "status": None, "mime": None, "lang": None, "url": None, "content": content,
          "skip_bad_records": False, "verify_digests": False, "notice": lambda _m: None}
    records = lambda: parse_rows([str(hostile_warc)], **kw)  # noqa: E731
    batches = lambda: warc_parse_batches([str(hostile_warc)], **_as_operation(kw))  # noqa: E731
    columns = _columns(content)
    n = assert_same_output(records, batches, columns, fields=((), ("url", "status", "info"), ("status", "url")))
    assert n == 7
    rows = list(records())
    assert any(type(r["status"]) is int and r["status"] > 2**63 for r in rows)  # carried exactly: no int64 holds it
    assert_same_ndjson(records(), batches())


@pytest.mark.parametrize("content", [(), ("text",), ("links", "meta")], ids=lambda c: "+".join(c) or "none")
def test_every_format_of_real_pages_is_the_per_record_renderers(pages_warc: Path, content: tuple[str, ...]) -> None:
    kw = {"format": None, "types": (), "status": None, "mime": None, "lang": None, "url": None, "content": content,
          "skip_bad_records": False, "verify_digests": False, "notice": lambda _m: None}
    records = lambda: parse_rows([str(pages_warc)], **kw)  # noqa: E731
    batches = lambda: warc_parse_batches([str(pages_warc)], **_as_operation(kw))  # noqa: E731
    assert assert_same_output(records, batches, _columns(content)) == 40
    assert_same_ndjson(records(), batches())
    kinds = {str(f.type) for b in batches() for f in b.schema}
    assert "string" in kinds and "int64" in kinds  # real columns, not JSON text


def test_records_cut_by_a_broken_file_are_written_before_the_error(corpus_dir: Path) -> None:
    path = str(corpus_dir / "warc" / "example-trunc.warc")
    got = []
    with pytest.raises(InputError, match="offset 1197"):
        for batch in warc_parse_batches([path]):
            got.append(batch.num_rows)
    assert got == [2]


def test_a_plain_call_gives_the_records(hostile_warc: Path) -> None:
    kw = {"format": None, "types": (), "status": None, "mime": None, "lang": None, "url": None, "content": ("meta",),
          "skip_bad_records": False, "verify_digests": False, "notice": None}
    want = list(parse_rows([str(hostile_warc)], **kw))
    for got in (list(warc_parse([str(hostile_warc)], content=("meta",))),
                list(ops.get("warc.parse")(files=[str(hostile_warc)], content=("meta",)))):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):  # the same values; a field a record did not have is None
            assert {k: v for k, v in g.items() if v is not None} == {k: v for k, v in w.items() if v is not None}
            assert all(k in g for k in w)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "table", "json"])
def test_the_cli_writes_the_per_record_renderers_bytes(hostile_warc: Path, pages_warc: Path, fmt: str,
                                                      capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    from ccrawl.output import OutputOptions, emit

    for path in (pages_warc, hostile_warc):
        assert main(["-o", fmt, "parse", str(path), "--text", "--links"]) == 0
        got = capsysbinary.readouterr().out
        kw = {"format": None, "types": (), "status": None, "mime": None, "lang": None, "url": None,
              "content": ("text", "links"), "skip_bad_records": False, "verify_digests": False, "notice": None}
        import io

        want = io.StringIO()
        emit(parse_rows([str(path)], **kw), OutputOptions(fmt=fmt), columns=_columns(("text", "links")), stream=want)
        assert got == want.getvalue().encode("utf-8", "surrogateescape")
        if fmt == "jsonl" and path == pages_warc:
            assert len(got.splitlines()) == 40 and "links" in json.loads(got.splitlines()[0])


def test_content_columns_are_declared_fields() -> None:
    from ccrawl.ops.parse import FIELDS

    declared = {name for name, _ in FIELDS}
    assert set(COLUMNS) <= declared and {c for cols in CONTENT_COLUMNS.values() for c in cols} <= declared
