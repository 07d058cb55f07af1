"""paths and download: kinds, full URLs, stdin paths, resumable downloads, sha256 as bytes stream."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from ccrawl.commoncrawl.download import destination
from ccrawl.commoncrawl.manifests import MANIFESTS
from ccrawl.errors import UsageError
from ccrawl.ops.commoncrawl import cc_download, cc_paths
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer


@pytest.mark.parametrize("kind", list(MANIFESTS))
def test_paths_lists_every_kind_with_full_urls(fakecc: FakeCCServer, tmp_path: Path, kind: str) -> None:
    rows = list(cc_paths(kind, ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path))))
    manifest = fakecc.site.root / "crawl-data/CC-MAIN-2025-26" / MANIFESTS[kind]
    assert [r["path"] for r in rows] == gzip.decompress(manifest.read_bytes()).decode().split()
    assert all(r["url"] == f"{fakecc.url}/{r['path']}" for r in rows)


def test_unknown_kind_is_a_usage_error(fakecc: FakeCCServer) -> None:
    with pytest.raises(UsageError, match="kinds: warc"):
        list(cc_paths("warcs", ctx=OpContext.of(fakecc.client_options())))
    with pytest.raises(UsageError):
        list(cc_download("segment", ctx=OpContext.of(fakecc.client_options())))


def test_download_keeps_the_tree_and_records_sha256(fakecc: FakeCCServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    rows = list(cc_download("warc", out=str(out), ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path))))
    assert len(rows) == 2 and {r["status"] for r in rows} == {"downloaded"}
    for row in rows:
        local = out / row["path"]
        assert Path(row["file"]) == local
        source = (fakecc.site.root / row["path"]).read_bytes()
        assert local.read_bytes() == source
        assert row["sha256"] == hashlib.sha256(source).hexdigest() and row["bytes"] == len(source)


def test_download_from_stdin_paths_flat(fakecc: FakeCCServer, tmp_path: Path) -> None:
    paths = [c["filename"] for c in fakecc.site.captures[:1]] + ["", "crawl-data/CC-MAIN-2025-26/wet.paths.gz"]
    rows = list(cc_download(paths=paths, out=str(tmp_path), flat=True, workers=2,
                            ctx=OpContext.of(fakecc.client_options())))
    assert sorted(Path(r["file"]).parent for r in rows) == [tmp_path, tmp_path]


def test_a_second_run_skips_complete_files(fakecc: FakeCCServer, tmp_path: Path) -> None:
    opts = fakecc.client_options(data_dir=tmp_path)
    list(cc_download("wet", out=str(tmp_path / "o"), ctx=OpContext.of(opts)))
    fakecc.faults.clear()
    rows = list(cc_download("wet", out=str(tmp_path / "o"), ctx=OpContext.of(opts)))
    assert {r["status"] for r in rows} == {"exists"}
    assert fakecc.faults.requests(r"\.wet\.gz$") == []


def test_a_partial_file_is_resumed_with_range(fakecc: FakeCCServer, tmp_path: Path) -> None:
    path = fakecc.site.captures[0]["filename"]
    source = (fakecc.site.root / path).read_bytes()
    dest = destination(tmp_path, path, flat=False)
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(source[:1000])
    (row,) = list(cc_download(paths=[path], out=str(tmp_path), ctx=OpContext.of(fakecc.client_options())))
    assert row["status"] == "resumed" and dest.read_bytes() == source
    assert row["sha256"] == hashlib.sha256(source).hexdigest()
    (req,) = fakecc.faults.requests(r"\.warc\.gz$")
    assert req.range == "bytes=1000-"


def test_a_connection_dropped_mid_body_resumes_where_it_stopped(fakecc: FakeCCServer, tmp_path: Path) -> None:
    path = fakecc.site.captures[0]["filename"]
    source = (fakecc.site.root / path).read_bytes()
    fakecc.faults.add("truncate", path=r"\.warc\.gz$", times=1)
    (row,) = list(cc_download(paths=[path], out=str(tmp_path), ctx=OpContext.of(fakecc.client_options())))
    assert Path(row["file"]).read_bytes() == source
    assert row["sha256"] == hashlib.sha256(source).hexdigest()
    ranges = [r.range for r in fakecc.faults.requests(r"\.warc\.gz$")]
    assert ranges[0] is None and ranges[1] is not None and ranges[1].startswith("bytes=")
    assert int(ranges[1][6:-1]) > 0  # the second request started past the bytes already on disk


def test_flat_refuses_two_paths_with_one_name(tmp_path: Path, fakecc: FakeCCServer) -> None:
    with pytest.raises(UsageError, match="drop --flat"):
        list(cc_download(paths=["a/x.gz", "b/x.gz"], out=str(tmp_path), flat=True,
                         ctx=OpContext.of(fakecc.client_options())))


def test_a_missing_file_is_named_and_the_rest_download(fakecc: FakeCCServer, tmp_path: Path) -> None:
    lines: list[str] = []
    good = fakecc.site.captures[0]["filename"]
    rows = list(cc_download(paths=["crawl-data/nope.warc.gz", good], out=str(tmp_path),
                            ctx=OpContext.of(fakecc.client_options(), notice=lines.append)))
    assert sorted(r["status"][:6] for r in rows) == ["downlo", "failed"]
    assert len(lines) == 1 and "nope.warc.gz" in lines[0] and "404" in lines[0]


def test_digest_false_downloads_and_resumes_the_same_bytes_without_a_sha256(fakecc: FakeCCServer,
                                                                            tmp_path: Path) -> None:
    import asyncio

    from ccrawl.commoncrawl.download import download_one
    from ccrawl.net.client import CCClient

    path = fakecc.site.captures[0]["filename"]
    source = (fakecc.site.root / path).read_bytes()
    dest = tmp_path / "x.warc.gz"
    dest.with_name(dest.name + ".part").write_bytes(source[:1000])
    fakecc.faults.add("truncate", path=r"\.warc\.gz$", times=1)

    async def fetch() -> dict[str, object]:
        async with CCClient(**fakecc.client_options()) as cc:
            return await download_one(cc, path, dest, digest=False)

    row = asyncio.run(fetch())
    assert row["status"] == "resumed" and row["sha256"] is None and row["bytes"] == len(source)
    assert dest.read_bytes() == source
    assert fakecc.faults.requests(r"\.warc\.gz$")[0].range == "bytes=1000-"
