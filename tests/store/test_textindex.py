"""index build/search: tantivy segments on disk, ORed BM25, atomic rebuilds, hostile state."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.errors import CcrawlError
from ccrawl.store import textindex
from ccrawl.store.textindex import Document, Searcher, build

REPO = Path(__file__).resolve().parents[2]


def _ccrawl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config"}
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], input=stdin, text=True, capture_output=True,
                          env=env, timeout=120)


DOCS = [
    {"url": "http://go.test/", "text": "golang web server: net/http serves the web", "title": "Go"},
    {"URL": "http://ml.test/", "Text": "machine learning with python and web data", "ContentLanguage": "eng"},
    {"url": "http://py.test/", "content": "python python python", "content_language": "eng"},
    {"target_uri": "http://x.test/", "text": "unrelated words only"},
]


def test_every_accepted_key_name_is_read_and_terms_are_ored_by_bm25(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    r = _ccrawl("index", "build", "--dir", str(tmp_path / "idx"), "--input", str(src), "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["documents"] == 4
    r = _ccrawl("index", "search", "python web", "--dir", str(tmp_path / "idx"), "-o", "jsonl")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    urls = [row["url"] for row in rows]
    # OR: every document with either term; the one with both, or the denser one, first
    assert set(urls) == {"http://go.test/", "http://ml.test/", "http://py.test/"}
    assert [row["rank"] for row in rows] == [1, 2, 3]
    assert rows[0]["score"] >= rows[1]["score"] >= rows[2]["score"]
    ml = next(row for row in rows if row["url"] == "http://ml.test/")
    assert ml["language"] == "eng"
    r = _ccrawl("index", "search", "python", "--dir", str(tmp_path / "idx"), "-n", "1", "-o", "jsonl")
    assert [json.loads(x)["url"] for x in r.stdout.splitlines()] == ["http://py.test/"]


def test_a_query_matching_nothing_exits_3_and_no_input_exits_2(tmp_path: Path) -> None:
    build(tmp_path, [Document("http://a.test/", "alpha beta")])
    r = _ccrawl("index", "search", "gamma", "--dir", str(tmp_path))
    assert r.returncode == 3 and "no document" in r.stderr
    r = _ccrawl("index", "build", "--dir", str(tmp_path / "new"))
    assert r.returncode == 2 and not (tmp_path / "new" / "CURRENT").exists()


def test_parse_jsonl_pipes_into_build_from_stdin(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(d) for d in DOCS[:2]) + "\nnot json\n"
    r = _ccrawl("index", "build", "--dir", str(tmp_path), "--input", "-", "-o", "json", stdin=lines)
    assert r.returncode == 0 and "line 3" in r.stderr and json.loads(r.stdout)["skipped"] == 1
    assert Searcher.open(tmp_path).documents == 2


def test_a_rebuild_replaces_the_index_and_leaves_one_generation(tmp_path: Path) -> None:
    build(tmp_path, [Document("http://old.test/", "old words")])
    build(tmp_path, [Document("http://new.test/", "new words")])
    s = Searcher.open(tmp_path)
    assert [r["url"] for r in s.search("words")] == ["http://new.test/"]
    assert sorted(p.name for p in tmp_path.glob("gen-*")) == [s.meta["generation"]]


def test_a_failed_build_leaves_the_live_index_untouched(tmp_path: Path) -> None:
    build(tmp_path, [Document("http://old.test/", "old words")])

    def broken():  # type: ignore[no-untyped-def]
        yield Document("http://half.test/", "half written")
        raise RuntimeError("input died")

    with pytest.raises(RuntimeError):
        build(tmp_path, broken())
    assert [r["url"] for r in Searcher.open(tmp_path).search("words old")] == ["http://old.test/"]
    assert len(list(tmp_path.glob("gen-*"))) == 1


def test_a_current_file_pointing_outside_the_directory_is_refused(tmp_path: Path) -> None:
    build(tmp_path / "idx", [Document("http://a.test/", "alpha")])
    current = tmp_path / "idx" / "CURRENT"
    meta = json.loads(current.read_text())
    for bad in ("../elsewhere", "/etc", "gen-1/../../x", ""):
        current.write_text(json.dumps({**meta, "generation": bad}))
        with pytest.raises(CcrawlError, match="names no generation"):
            Searcher.open(tmp_path / "idx")
    current.write_text("{broken")
    with pytest.raises(CcrawlError, match="unreadable"):
        Searcher.open(tmp_path / "idx")


def test_two_builds_on_one_directory_the_second_is_refused(tmp_path: Path) -> None:
    started = []

    def slow():  # type: ignore[no-untyped-def]
        yield Document("http://a.test/", "alpha")
        started.append(1)
        with pytest.raises(CcrawlError, match="another"):
            build(tmp_path, [Document("http://b.test/", "beta")])
        yield Document("http://c.test/", "gamma")

    build(tmp_path, slow())
    assert started and Searcher.open(tmp_path).documents == 2


def test_memory_stays_bounded_while_documents_stream(tmp_path: Path) -> None:
    # 60,000 documents through a 32 MB writer: several segments flushed, all searchable
    words = [f"w{n}" for n in range(5000)]

    def docs():  # type: ignore[no-untyped-def]
        for i in range(60_000):
            yield Document(f"http://h{i}.test/", " ".join(words[(i * 7 + k) % 5000] for k in range(60)))

    stats = build(tmp_path, docs(), heap_mb=32, commit_every=20_000)
    assert stats.documents == 60_000
    assert len(Searcher.open(tmp_path).search("w1 w2", limit=10)) == 10
    assert textindex.SNIPPET_CHARS > 0


def test_urls_are_fetched_extracted_and_indexed(tmp_path: Path) -> None:
    from ccrawl.testing.synthweb import SynthWebThread

    with SynthWebThread(hosts=3, pages=2, page_bytes=4_000) as web:
        urls = [web.url(f"site{i}.test") for i in range(3)]
        pin = ["--resolve", "*.test=127.0.0.1"]
        r = _ccrawl("index", "build", "--dir", str(tmp_path), "--urls", ",".join([*urls, "http://nowhere.invalid/"]),
                    "-j", "3", *pin, "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["documents"] == 3
    assert "nowhere.invalid" in r.stderr and "not indexed" in r.stderr  # a failed fetch is named, the rest indexed
    s = Searcher.open(tmp_path)
    from ccrawl.testing.synthweb.pages import _WORDS

    # every page holds words of the synthetic web's vocabularies: ORed, they find every indexed page
    indexed = {row["url"] for row in s.search(" ".join(w for text in _WORDS.values() for w in text.split()), 10)}
    assert indexed == set(urls)


def test_a_parsed_wet_file_pipes_into_build(tmp_path: Path) -> None:
    # the seed's pipeline: ccrawl parse X.warc.wet.gz -o jsonl | ccrawl index build --input -
    from warcio.warcwriter import WARCWriter

    wet = tmp_path / "x.warc.wet.gz"
    with wet.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i, text in enumerate(["rivers and mountains of the north", "a harbour town by the sea"]):
            record = writer.create_warc_record(f"http://h{i}.test/", "conversion", payload=io.BytesIO(text.encode()),
                                               warc_content_type="text/plain",
                                               warc_headers_dict={"WARC-Identified-Content-Language": "eng"})
            writer.write_record(record)
    parsed = _ccrawl("parse", str(wet), "-o", "jsonl")
    assert parsed.returncode == 0, parsed.stderr
    r = _ccrawl("index", "build", "--dir", str(tmp_path / "idx"), "--input", "-", "-o", "json", stdin=parsed.stdout)
    assert r.returncode == 0 and json.loads(r.stdout)["documents"] == 2, r.stderr
    rows = Searcher.open(tmp_path / "idx").search("harbour")
    assert [row["url"] for row in rows] == ["http://h1.test/"] and rows[0]["language"] == "eng"


def test_a_line_with_a_lone_surrogate_is_repaired_and_indexed_not_the_end_of_the_build(tmp_path: Path) -> None:
    # Valid JSON ("\ud800" is a legal escape) that tantivy cannot store: it aborted the whole build (#36).
    src = tmp_path / "docs.jsonl"
    lines = [json.dumps(DOCS[0]), '{"url": "http://bad.test/", "title": "broken \\ud800 title",'
             ' "text": "zebra stripes \\udc00 here"}', json.dumps(DOCS[2])]
    src.write_text("\n".join(lines) + "\n")
    r = _ccrawl("index", "build", "--dir", str(tmp_path / "idx"), "--input", str(src), "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["documents"] == 3
    assert "docs.jsonl line 2: lone surrogates in text, title replaced by U+FFFD" in r.stderr, r.stderr
    r = _ccrawl("index", "search", "zebra", "--dir", str(tmp_path / "idx"), "-o", "jsonl")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [row["url"] for row in rows] == ["http://bad.test/"]
    assert rows[0]["title"] == "broken \ufffd title"
    for word in ("golang", "python"):  # the good lines around it
        r = _ccrawl("index", "search", word, "--dir", str(tmp_path / "idx"), "-o", "jsonl")
        assert r.returncode == 0 and len(r.stdout.splitlines()) == 1
