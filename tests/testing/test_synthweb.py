"""The synthetic web itself: realistic pages, every fault kind listed, DNS answers, the standalone server."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from dnslib import QTYPE, RCODE, DNSRecord

from ccrawl.testing.synthweb import LANGUAGES, SynthWeb, SynthWebThread, page_html


@pytest.fixture(scope="module")
def web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=30, pages=4) as synth:
        yield synth


def _get(url: str, host: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers={"Host": host, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_pages_are_deterministic_realistic_html() -> None:
    html = page_html("site3.test", 2, hosts=10, pages=5, target_bytes=20_000)
    assert html == page_html("site3.test", 2, hosts=10, pages=5, target_bytes=20_000)
    assert 20_000 <= len(html) < 30_000
    assert re.search(r"<title>[^<]+</title>", html) and "<h1>" in html and html.count("<p>") >= 5
    assert re.search(r'href="/p/\d"', html) and re.search(r'href="http://site\d+\.test/"', html)
    assert html != page_html("site3.test", 3, hosts=10, pages=5)


def test_sites_come_in_several_languages() -> None:
    langs = {re.search(r'lang="(\w+)"', page_html(f"site{i}.test", 0, hosts=50, pages=2))[1] for i in range(50)}  # type: ignore[index]
    assert len(langs) >= 5 and langs <= set(LANGUAGES)


def test_any_host_name_is_served_and_pages_carry_validators(web: SynthWeb) -> None:
    status, headers, body = _get(f"http://127.0.0.1:{web.port}/p/1", "anything.test")
    assert status == 200 and b"anything.test" in body
    again = _get(f"http://127.0.0.1:{web.port}/p/1", "anything.test", {"If-None-Match": headers["ETag"]})
    assert again[0] == 304 and again[2] == b""


def test_robots_variants_are_chosen_by_the_first_label(web: SynthWeb) -> None:
    base = f"http://127.0.0.1:{web.port}/robots.txt"
    assert _get(base, "site1.test")[2] == b"User-agent: *\nDisallow: /private/\n"
    assert _get(base, "rdeny-1.test")[2] == b"User-agent: *\nDisallow: /\n"
    assert _get(base, "r404-1.test")[0] == 404
    assert _get(base, "r5xx-1.test")[0] == 503
    assert b"Crawl-delay: 0.3" in _get(base, "rdelay-1.test")[2]


def test_catalog_lists_every_fault_kind_of_the_issue(web: SynthWeb) -> None:
    catalog = web.catalog()
    wanted = {
        "slow-ttfb", "slow-body", "reset", "refused", "unknown-host", "tls-self-signed", "tls-plain-port",
        "redirect-chain", "redirect-loop", "not-modified", "robots-disallow", "robots-5xx", "robots-timeout",
        "robots-crawl-delay", "encoding", "big-body", "broken-chunked", "non-html", "huge-header", "many-headers",
    }  # fmt: skip
    assert wanted <= set(catalog)
    assert len(catalog["page"]) == 30 * 4 and len(set(catalog["page"])) == 120
    assert all(u.startswith(("http://", "https://")) for us in catalog.values() for u in us)


def test_dns_server_answers_test_names_and_nxdomain_for_the_rest(web: SynthWeb) -> None:
    port = web.dns_port
    answer = DNSRecord.parse(DNSRecord.question("site1.test").send("127.0.0.1", port, timeout=2))
    assert str(answer.rr[0].rdata) == "127.0.0.1"
    missing = DNSRecord.parse(DNSRecord.question("x.invalid").send("127.0.0.1", port, timeout=2))
    assert missing.header.rcode == RCODE.NXDOMAIN and not missing.rr
    aaaa = DNSRecord.parse(DNSRecord.question("site1.test", "AAAA").send("127.0.0.1", port, timeout=2))
    assert aaaa.header.rcode == RCODE.NOERROR and not [r for r in aaaa.rr if r.rtype == QTYPE.AAAA]


def test_closed_port_refuses(web: SynthWeb) -> None:
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{web.refused_port}/", timeout=2)


def test_standalone_server_prints_its_port_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    urls = tmp_path / "urls.jsonl"
    cmd = [sys.executable, "-m", "ccrawl.testing.synthweb", "--port", "0", "--hosts", "7", "--pages", "3"]
    with subprocess.Popen([*cmd, "--urls-out", str(urls)], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline())
            info = json.loads(proc.stdout.readline())
            assert info["port"] == port and info["resolve"] == {"*.test": "127.0.0.1"} and info["dns"]
            status, _, body = _get(f"http://127.0.0.1:{port}/p/2", "site6.test")
            assert status == 200 and body.startswith(b"<!DOCTYPE html>")
            rows = [json.loads(line) for line in urls.read_text().splitlines()]
            assert sum(r["kind"] == "page" for r in rows) == 21
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_standalone_server_refuses_a_non_loopback_bind() -> None:
    cmd = [sys.executable, "-m", "ccrawl.testing.synthweb", "--bind", "0.0.0.0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "loopback" in done.stderr
