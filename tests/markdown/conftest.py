"""Fixtures for the Markdown pipelines: the fake Common Crawl plus a crawl of our own with known pages.

The fake CC serves any file under its root, so a test crawl (``CC-MAIN-2099-01``) is written beside
the generated ones: two WARC shards and their WET twins, with pages in three languages, a page too
short to identify, a payload served twice (for ``--dedup-digest``), a PDF and a 404. Tests name the
crawl with ``-c`` so nothing is looked up in collinfo.json.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

CRAWL = "CC-MAIN-2099-01"
SEGMENT = f"crawl-data/{CRAWL}/segments/4102444800000.00"

VIE = (
    "Hà Nội là thủ đô của nước Cộng hòa Xã hội chủ nghĩa Việt Nam, là thành phố lớn thứ hai cả nước về dân số. "
    "Thành phố nằm ở trung tâm vùng đồng bằng sông Hồng, có lịch sử hơn một nghìn năm văn hiến. Người dân ở "
    "đây rất thân thiện và hiếu khách, những món ăn đường phố như phở, bún chả và bánh mì được nhiều du khách "
    "trong và ngoài nước yêu thích. Mùa thu là mùa đẹp nhất trong năm với tiết trời mát mẻ và hoa sữa thơm ngát."
)
ENG = (
    "The city library opened a new reading room this week, with long tables by the windows and a quiet corner "
    "for children. Volunteers spent the summer cataloguing donated books, and the council agreed to keep the "
    "building open late on Thursdays so that people who work during the day can still borrow and return what "
    "they need. Librarians say the number of visitors has doubled since the renovation started last spring."
)
DEU = (
    "Die Stadtbibliothek hat in dieser Woche einen neuen Lesesaal eröffnet, mit langen Tischen an den Fenstern "
    "und einer ruhigen Ecke für Kinder. Freiwillige haben den ganzen Sommer über gespendete Bücher katalogisiert, "
    "und der Stadtrat hat beschlossen, das Gebäude donnerstags länger zu öffnen, damit auch Berufstätige noch "
    "ausleihen können. Die Zahl der Besucher hat sich seit dem Beginn der Renovierung im Frühjahr verdoppelt."
)


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    body: bytes
    status: int = 200
    mime: str = "text/html; charset=utf-8"

    @property
    def html(self) -> bool:
        return self.status == 200 and self.mime.startswith("text/html")


def html(title: str, text: str) -> bytes:
    paras = "".join(f"<p>{s.strip()}.</p>" for s in text.split(".") if s.strip())
    return (f"<!DOCTYPE html><html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>{title}</h1>{paras}</article><footer>footer</footer></body></html>").encode()


SHARDS: list[list[Page]] = [
    [
        Page("https://vi.example.vn/ha-noi", html("Hà Nội", VIE)),
        Page("https://en.example.com/library", html("Library", ENG)),
        Page("https://en.example.com/library-copy", html("Library", ENG)),  # same payload, same digest
        Page("https://short.example.com/", b"<html><body><p>42</p></body></html>"),
        Page("https://files.example.com/a.pdf", b"%PDF-1.4 not html", mime="application/pdf"),
    ],
    [
        Page("https://de.example.de/bibliothek", html("Bibliothek", DEU)),
        Page("https://vi.example.vn/mua-thu", html("Mùa thu", VIE + " " + VIE)),
        Page("https://en.example.com/missing", b"<html><body>gone</body></html>", status=404),
        Page("https://en.example.com/more", html("More", ENG + " " + ENG)),
    ],
]


def _warc(pages: list[Page], kind: str) -> bytes:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for i, page in enumerate(pages):
        date = f"2099-01-0{1 + i % 9}T12:00:00Z"
        if kind == "warc":
            reason = "OK" if page.status == 200 else "Not Found"
            headers = StatusAndHeaders(f"{page.status} {reason}", [("Content-Type", page.mime),
                                                                   ("Content-Length", str(len(page.body)))],
                                       protocol="HTTP/1.1")
            rec = writer.create_warc_record(page.url, "response", payload=io.BytesIO(page.body),
                                            http_headers=headers, warc_headers_dict={"WARC-Date": date})
        else:
            if not page.html:
                continue
            text = wet_text(page).encode()
            rec = writer.create_warc_record(page.url, "conversion", payload=io.BytesIO(text),
                                            warc_content_type="text/plain", warc_headers_dict={"WARC-Date": date})
        writer.write_record(rec)
    return buf.getvalue()


def wet_text(page: Page) -> str:
    """What our WET twin holds for a page: its text nodes, one per line."""
    import re

    text = re.sub(r"<[^>]+>", "\n", page.body.decode("utf-8"))
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def warc_path(i: int, kind: str = "warc") -> str:
    name = f"CC-MAIN-20990101000000-20990102000000-{i:05d}.warc.gz"
    return f"{SEGMENT}/warc/{name}" if kind == "warc" else f"{SEGMENT}/wet/{name[:-8]}.warc.wet.gz"


def write_crawl(root: Path, shards: list[list[Page]] = SHARDS, crawl_paths: list[str] | None = None) -> None:
    """The test crawl's WARC and WET files and manifests under ``root``."""
    for kind in ("warc", "wet"):
        paths = []
        for i, pages in enumerate(shards):
            rel = warc_path(i, kind)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(_warc(pages, kind))
            paths.append(rel)
        manifest = root / f"crawl-data/{CRAWL}/{kind}.paths.gz"
        manifest.write_bytes(gzip.compress(("\n".join(crawl_paths or paths) + "\n").encode()))


@pytest.fixture(scope="session")
def fakecc_md(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    root = tmp_path_factory.mktemp("fakecc-md")
    with FakeCCServer(root, SiteSpec(records=12, files=2)) as server:
        write_crawl(root)
        yield server


@pytest.fixture
def fakecc(fakecc_md: FakeCCServer) -> Iterator[FakeCCServer]:
    fakecc_md.faults.clear()
    yield fakecc_md
    fakecc_md.faults.clear()


@pytest.fixture
def cc_env(fakecc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment pointing ccrawl (in process and in subprocesses) at the fake CC."""
    env = {
        "CCRAWL_COLLINFO_ENDPOINT": f"{fakecc.url}/collinfo.json",
        "CCRAWL_DATA_ENDPOINT": fakecc.url,
        "CCRAWL_CDX_ENDPOINT": fakecc.url,
        "CCRAWL_GLOBAL_RATE": "0",
        "CCRAWL_BACKOFF": "0.01",
        "CCRAWL_DATA_DIR": str(tmp_path / "data"),
        "CCRAWL_CONFIG_DIR": str(tmp_path / "config"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CCRAWL_HUB", raising=False)
    return {**os.environ, **env}
