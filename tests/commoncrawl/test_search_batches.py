"""cc.search yields record batches: every output format is the per-record renderer's bytes, against a CDX
index on loopback whose rows carry hostile values (status ``-``, numbers past int64, lists, nulls, tabs,
newlines, line separators, a lone surrogate, keys no column declares)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops, rowbatch
from ccrawl.commoncrawl.cdx import COLUMNS, LOCATION_COLUMNS, CdxQuery, search
from ccrawl.errors import NothingMatched
from ccrawl.ops.context import OpContext
from ccrawl.ops.search import SEARCH_FIELDS, cc_search, cc_search_batches
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer, index_warc_tree
from ccrawl.testing.fakecc.site import SiteSpec, build_site
from tests.batchparity import assert_same_ndjson, assert_same_output

CHUNK = 7  # records per batch here: a query spans many batches, a hostile value lands in some of them


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("cdxsite")
    build_site(root, SiteSpec(records=60, files=2, older_records=5, older_files=1))
    crawls = index_warc_tree(root)
    crawl = max(crawls, key=lambda c: len(crawls[c]))
    base = [r for r in crawls[crawl] if r["urlkey"].startswith("com,example)")]
    more = [{**r, "urlkey": f"{r['urlkey']}/copy{k}", "url": f"{r['url']}/copy{k}"} for k in range(6) for r in base]
    return crawl, sorted(base + more, key=lambda r: (r["urlkey"], r["timestamp"]))


def _hostile(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(rows)
    odd: list[dict[str, Any]] = [
        {"status": "-", "mime": "warc/revisit"},
        {"offset": "99999999999999999999999", "length": "18446744073709551616"},
        {"mime": "text/html\tcharset=x", "languages": "eng,fra", "redirect": "https://a.test/x\ny\u2028z\x85"},
        {"url": out[3]["url"] + '?q="a,b"\té中😀', "encoding": None},
        {"mime-detected": "\ud800lone", "truncated": "length"},
        {"languages": ["eng", "fra"], "length": 12, "status": 200.0},
        {"digest": "", "filename": "", "fuzzy": {"k": [1, None, "v"]}},
    ]
    for i, change in enumerate(odd):
        out[3 + 5 * i].update(change)
    out[-1]["status"] = "-"  # in the last batch only: a batch's column may differ from the one before
    return out


@pytest.fixture
def server(rows: tuple[str, list[dict[str, Any]]]) -> Iterator[tuple[CdxServer, str]]:
    crawl, listed = rows
    with CdxServer(CdxIndex({crawl: _hostile(listed)}, lines_per_block=5)) as srv:
        yield srv, crawl


def _options(srv: CdxServer) -> dict[str, Any]:
    return {"cdx_endpoint": srv.url, "global_rate": 0, "backoff": 0.001, "backoff_max": 0.01, "retries": 2}


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowbatch, "CHUNK", CHUNK)


@pytest.mark.parametrize("locations", [False, True])
def test_every_format_of_hostile_rows_is_the_per_record_renderers(server: tuple[CdxServer, str],
                                                                   locations: bool) -> None:
    srv, crawl = server
    query = CdxQuery("*.example.com")
    records = lambda: search(query, [crawl], client_options=_options(srv), locations=locations,  # noqa: E731
                             notice=lambda _m: None)
    batches = lambda: cc_search_batches(url="*.example.com", crawl=crawl, locations=locations,  # noqa: E731
                                        ctx=OpContext.of(_options(srv), notice=lambda _m: None))
    columns = LOCATION_COLUMNS if locations else COLUMNS
    fields = ((), ("offset", "url")) if locations else ((), ("url", "status", "truncated"), ("length", "fuzzy"))
    n = assert_same_output(records, batches, columns, fields=fields)
    assert n > 4 * CHUNK
    got = list(batches())
    assert len(got) > 4 and sum(b.num_rows for b in got) == n
    if not locations:
        carried = {f.name for b in got for i in rowbatch.json_columns(b) for f in [b.schema.field(i)]}
        assert {"status", "offset", "mime-detected"} <= carried  # exactly, as JSON text, where int64/UTF-8 cannot
        assert any(b.schema.field("status").type == "int64" for b in got)  # and typed everywhere else
    if locations:
        nd = assert_same_ndjson(records(), batches())
    else:
        assert assert_same_ndjson(records(), batches()) == "UnicodeEncodeError"  # the lone surrogate, both ways
        clean = lambda rows: (r for r in rows if "\ud800" not in str(r.get("mime-detected")))  # noqa: E731
        nd = assert_same_ndjson(clean(records()), rowbatch.chunked(clean(records()), SEARCH_FIELDS))
    assert isinstance(nd, bytes) and b'"offset": 99999999999999999999999' in nd


def test_a_plain_call_gives_the_engines_records(server: tuple[CdxServer, str]) -> None:
    srv, crawl = server
    want = list(search(CdxQuery("*.example.com"), [crawl], client_options=_options(srv), notice=lambda _m: None))
    ctx = OpContext.of(_options(srv), notice=lambda _m: None)
    for got in (list(cc_search(url="*.example.com", crawl=crawl, ctx=ctx)),
                list(ops.get("cc.search")(url="*.example.com", crawl=crawl, ctx=ctx))):
        assert [{k: v for k, v in g.items() if v is not None} for g in got] == [
            {k: v for k, v in w.items() if v is not None} for w in want]
        assert any(type(g["offset"]) is int and g["offset"] > 2**64 for g in got)


def test_nothing_matched_after_an_empty_stream(server: tuple[CdxServer, str]) -> None:
    srv, crawl = server
    ctx = OpContext.of(_options(srv), notice=lambda _m: None)
    with pytest.raises(NothingMatched):
        list(cc_search_batches(url="nothing-here.example.invalid/", crawl=crawl, ctx=ctx))


@pytest.fixture
def clean_server(rows: tuple[str, list[dict[str, Any]]]) -> Iterator[tuple[CdxServer, str]]:
    """The hostile rows but the lone surrogate (stdout cannot encode it: exit 1 either way)."""
    crawl, listed = rows
    clean = [r for r in _hostile(listed) if "\ud800" not in str(r.get("mime-detected"))]
    with CdxServer(CdxIndex({crawl: clean}, lines_per_block=5)) as srv:
        yield srv, crawl


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "table", "json"])
def test_the_cli_writes_the_per_record_renderers_bytes(clean_server: tuple[CdxServer, str], fmt: str,
                                                      tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from ccrawl.cli.main import main
    from ccrawl.output import OutputOptions, emit

    srv, crawl = clean_server
    monkeypatch.setenv("CCRAWL_CDX_ENDPOINT", srv.url)
    monkeypatch.setenv("CCRAWL_GLOBAL_RATE", "0")
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CCRAWL_DATA_DIR", str(tmp_path / "data"))
    code = main(["-o", fmt, "-c", crawl, "search", "*.example.com"])
    got, err = capsysbinary.readouterr()
    assert code == 0, err
    want = io.StringIO()
    emit(search(CdxQuery("*.example.com"), [crawl], client_options=_options(srv), notice=lambda _m: None),
         OutputOptions(fmt=fmt), columns=COLUMNS, stream=want)
    assert got == want.getvalue().encode("utf-8", "surrogateescape")
