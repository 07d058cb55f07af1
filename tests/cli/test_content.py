"""``ccrawl content extract|outlinks|quality|lang``: real fetches on loopback, output shapes, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread
from tests.content.server import FixtureServer


@pytest.fixture(scope="module")
def synth() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=6, pages=3, page_bytes=6_000) as web:
        yield web


@pytest.fixture(scope="module")
def fixtures() -> Iterator[FixtureServer]:
    with FixtureServer() as srv:
        yield srv


LOOPBACK = ["--resolve", "*.test=127.0.0.1", "--resolve", "*.example=127.0.0.1", "--delay", "0", "--timeout", "5s"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["content", *args, *LOOPBACK])
    out, err = capsys.readouterr()
    return code, out, err


def cli_stdin(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccrawl", "content", *args, *LOOPBACK],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_lang_prints_one_object_with_the_seeds_fields(capsys: pytest.CaptureFixture[str], synth: SynthWeb) -> None:
    url = synth.url("site1.test", "/p/1")
    code, out, _ = cli(capsys, "lang", url, "-o", "json")
    assert code == 0
    record = json.loads(out)
    assert list(record) == ["url", "language", "confidence", "cc_language", "chars", "sample"]
    assert record["url"] == url
    assert len(record["language"]) == 3 and record["language"].isalpha()
    assert isinstance(record["confidence"], float) and 0.0 < record["confidence"] <= 1.0
    assert len(record["cc_language"]) == 2  # what <html lang> declares, as written
    assert isinstance(record["chars"], int) and record["chars"] > 1000
    assert record["sample"].endswith(" ...") and len(record["sample"]) <= 204


def test_lang_agrees_with_the_declared_language_of_a_page(
    capsys: pytest.CaptureFixture[str], fixtures: FixtureServer
) -> None:
    code, out, _ = cli(capsys, "lang", fixtures.url("town.example", "/page/ARTICLE"), "-o", "json")
    record = json.loads(out)
    assert code == 0 and record["language"] == "eng" and record["cc_language"] == "en"
    assert record["sample"].startswith("A River Town")


def test_quality_of_one_url_is_one_object(capsys: pytest.CaptureFixture[str], fixtures: FixtureServer) -> None:
    code, out, _ = cli(capsys, "quality", fixtures.url("parked.example", "/page/PARKED_FOR_SALE"), "-o", "json")
    record = json.loads(out)
    assert code == 0
    assert record["parked"] is True and record["parked_cues"] == ["for_sale"]
    assert record["title_length"] == len("river-town.example")
    assert {"word_count", "main_content", "spam_score", "spam_cues", "link_density"} <= set(record)


def test_quality_scores_a_spam_page_live(capsys: pytest.CaptureFixture[str], fixtures: FixtureServer) -> None:
    code, out, _ = cli(capsys, "quality", fixtures.url("spam.example", "/gzip/STUFFED"), "-o", "json")
    record = json.loads(out)
    assert code == 0 and record["spam_cues"]["stuffing"] == 1.0 and record["spam_score"] > 0.5


def test_extract_prints_the_clean_text_fields(capsys: pytest.CaptureFixture[str], fixtures: FixtureServer) -> None:
    url = fixtures.url("town.example", "/page/ARTICLE")
    code, out, _ = cli(capsys, "extract", url, "-o", "json")
    record = json.loads(out)
    assert code == 0
    assert list(record) == ["url", "title", "description", "canonical", "language", "word_count", "text"]
    assert record["title"] == "A River Town" and record["canonical"] == "https://town.example/history"
    assert record["language"] == "eng" and record["word_count"] > 250
    assert "market square" in record["text"] and "Town council" not in record["text"]


def test_outlinks_are_source_url_host_rows(capsys: pytest.CaptureFixture[str], fixtures: FixtureServer) -> None:
    url = fixtures.url("farm.example", "/page/LINK_FARM")
    code, out, _ = cli(capsys, "outlinks", url, "-o", "jsonl", "-n", "3")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 3
    assert rows[0] == {"source": url, "url": "http://partner0.example/", "host": "partner0.example"}
    assert all(list(r) == ["source", "url", "host"] for r in rows)


def test_several_arguments_print_one_record_each(capsys: pytest.CaptureFixture[str], synth: SynthWeb) -> None:
    urls = [synth.url(f"site{i}.test", "/") for i in range(3)]
    code, out, _ = cli(capsys, "lang", *urls, "-o", "json")
    assert code == 0 and [r["url"] for r in json.loads(out)] == urls


def test_a_stdin_list_carries_on_past_failures_and_names_them(synth: SynthWeb, fixtures: FixtureServer) -> None:
    good = [synth.url("site1.test", "/"), fixtures.url("town.example", "/page/ARTICLE")]
    bad = synth.url("site2.test", "/fault/status/404")
    stdin = f"{good[0]}\n{bad}\nhttp://nowhere.invalid/\n{json.dumps({'url': good[1]})}\n{{oops\n"
    proc = cli_stdin(stdin, "quality", "-", "-o", "jsonl")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["url"] for line in proc.stdout.splitlines()] == good
    assert f"{bad}: HTTP 404 Not Found" in proc.stderr
    assert "http://nowhere.invalid/: dns:" in proc.stderr
    assert "stdin line 5: not valid JSON" in proc.stderr


def test_every_url_failing_exits_1(synth: SynthWeb) -> None:
    bad = [synth.url("site1.test", "/fault/status/500"), synth.url("site1.test", "/fault/pdf")]
    proc = cli_stdin("\n".join(bad) + "\n", "lang", "-o", "jsonl")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert all(url in proc.stderr for url in bad)
    assert "every URL failed (2)" in proc.stderr


def test_empty_stdin_exits_3() -> None:
    proc = cli_stdin("", "extract", "-")
    assert proc.returncode == 3 and proc.stdout == ""
    assert "stdin was empty" in proc.stderr


def test_a_bad_resolve_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["content", "lang", "http://a.example/", "--resolve", "nonsense"])
    assert code == 2 and "PATTERN=IP" in capsys.readouterr().err


def test_an_unknown_extractor_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["content", "extract", "http://a.example/", "--extractor", "nope"])
    assert code == 2 and "unknown extractor" in capsys.readouterr().err


def test_resolve_and_the_private_address_allowance_are_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    main(["content", "quality", "--help"])
    out = capsys.readouterr().out
    assert "--extractor" in out and "--delay" in out and "--resolve" in out and "--allow-private-addresses" in out
