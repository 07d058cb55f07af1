"""serve streams a batch operation's record batches as the NDJSON its records would make, over real HTTP on
loopback: warc.parse over a WARC of hostile records, cc.search against a loopback CDX index of hostile rows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ccrawl import ops
from ccrawl.commoncrawl.cdx import CdxQuery, search
from ccrawl.ops.context import OpContext
from ccrawl.ops.parse import parse_rows
from ccrawl.output import to_json
from ccrawl.serve import ops_http
from ccrawl.serve.worker import Runner, wire_line
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer
from ccrawl.testing.nginx import free_port
from tests.warc.test_parse_batches import HOSTILE_PAGE, warc_record, warc_response

CRAWL = "CC-MAIN-2025-26"


async def _posts(app: web.Application, requests: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, bytes]]:
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    out = []
    try:
        async with aiohttp.ClientSession() as s:
            for name, body in requests:
                r = await s.post(f"http://127.0.0.1:{port}/ops/{name}", json=body)
                out.append((r.status, await r.read()))
    finally:
        await runner.cleanup()
    return out


def _cdx_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(40):
        rows.append({"urlkey": f"com,example)/p{i:03d}", "timestamp": f"2025070{i % 9 + 1}120000",
                     "url": f"https://example.com/p{i:03d}", "mime": "text/html", "mime-detected": "text/html",
                     "status": "200", "digest": f"D{i}", "length": str(100 + i), "offset": str(1000 * i),
                     "filename": f"crawl-data/{CRAWL}/x.warc.gz", "languages": "eng", "encoding": "UTF-8"})
    rows[3].update(status="-", mime="warc/revisit")
    rows[5].update(offset="99999999999999999999999", url='https://example.com/p005?a="b,c"\td\né中😀\u2028\x85')
    rows[7].update(languages=["eng", "fra"], encoding=None, truncated="length")
    rows[9].update(length=12, status=200.5)
    return rows


def test_batch_operations_stream_the_ndjson_of_their_records(tmp_path: Path) -> None:
    warc = tmp_path / "hostile.warc"
    warc.write_bytes(warc_record("warcinfo", b"", b"software: t\r\n", b"WARC-Filename: hostile.warc\r\n", 1)
                     + warc_response("https://example.com/é?q=a,b\"c\td".encode(), HOSTILE_PAGE.encode(), 2)
                     + warc_response(b"https://example.com/huge", b"<p>x</p>", 3, status=b"99999999999999999999999")
                     + warc_record("request", b"https://example.com/", b"GET / HTTP/1.1\r\n\r\n", b"", 4))
    with CdxServer(CdxIndex({CRAWL: _cdx_rows()}, lines_per_block=5)) as cdx:
        options = {"cdx_endpoint": cdx.url, "global_rate": 0, "backoff": 0.001, "backoff_max": 0.01, "retries": 2}
        app = ops_http.make_app(ops.load_all(), root=tmp_path, runner=Runner(start_method="fork"),
                                injected={"ctx": OpContext.of(options, notice=lambda _m: None)})
        assert ops.get("warc.parse").batch_func is not None and ops.get("cc.search").batch_func is not None

        (status, body), (status2, body2), (status3, body3) = asyncio.run(_posts(app, [
            ("warc.parse", {"files": [str(warc)], "content": ["text", "links"]}),
            ("cc.search", {"url": "*.example.com", "crawl": CRAWL}),
            ("cc.search", {"url": "nothing.example.invalid/", "crawl": CRAWL}),
        ]))
        want = parse_rows([str(warc)], format=None, types=(), status=None, mime=None, lang=None, url=None,
                     content=("text", "links"), skip_bad_records=False, verify_digests=False, notice=None)
        assert status == 200 and body == b"".join(wire_line(to_json(r)) for r in want)
        assert body.count(b"\n") == 4 and b"99999999999999999999999" in body

        want = list(search(CdxQuery("*.example.com"), [CRAWL], client_options=options, notice=lambda _m: None))
        assert status2 == 200 and body2 == b"".join(wire_line(to_json(r)) for r in want)
        assert body2.count(b"\n") == 40 and b'"status": "-"' in body2 and b'"truncated": "length"' in body2
        assert status3 == 404 and b"no capture" in body3  # nothing matched: the error, as before
