"""One allowance for private addresses, honoured by every command that fetches.

Each command is pointed at a real server on a loopback IP literal: refused by default with one line
naming the setting, fetched with ``--allow-private-addresses``, and fetched with
``CCRAWL_ALLOW_PRIVATE_ADDRESSES=1``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread

MODES = ["default", "flag", "setting"]


@pytest.fixture(scope="module")
def web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=2, pages=2, page_bytes=3000) as synth:
        yield synth


@pytest.fixture
def allow(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The mode's extra arguments (the setting goes in the environment)."""
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CCRAWL_ALLOW_PRIVATE_ADDRESSES", raising=False)
    if request.param == "setting":
        monkeypatch.setenv("CCRAWL_ALLOW_PRIVATE_ADDRESSES", "1")
    return ["--allow-private-addresses"] if request.param == "flag" else []


def _literal(web: SynthWeb) -> str:
    return f"http://127.0.0.1:{web.port}/p/0"


def _refusal_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "refused" in line]


def _assert_refused(code: int, err: str, expected_code: int) -> None:
    assert code == expected_code, err
    lines = _refusal_lines(err)
    assert len(lines) == 1 and "127.0.0.1" in lines[0] and "loopback" in lines[0], err
    assert "allow_private_addresses" in lines[0] and "CCRAWL_ALLOW_PRIVATE_ADDRESSES" in lines[0]
    assert "--allow-private-addresses" in lines[0] and "Traceback" not in err


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("allow", MODES, indirect=True)
@pytest.mark.parametrize("leaf", ["extract", "outlinks", "quality", "lang"])
def test_content_commands_refuse_loopback_unless_allowed(
        web: SynthWeb, allow: list[str], leaf: str, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["content", leaf, _literal(web), "--delay", "0", "-o", "jsonl", *allow])
    if request.node.callspec.params["allow"] == "default":
        _assert_refused(code, err, 1)
        assert out.strip() == ""
    else:
        assert code == 0 and not _refusal_lines(err), err
        assert json.loads(out.splitlines()[0])["url" if leaf != "outlinks" else "source"] == _literal(web)


def test_content_resolve_pins_a_name_to_loopback(web: SynthWeb, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["content", "extract", web.url("site0.test", "/p/1"), "--delay", "0",
                                   "--resolve", "*.test=127.0.0.1", "-o", "json"])
    assert code == 0, err
    assert json.loads(out)["word_count"] > 0


@pytest.mark.parametrize("allow", MODES, indirect=True)
def test_crawl_fetch_refuses_loopback_unless_allowed(
        web: SynthWeb, allow: list[str], request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["crawl", "fetch", _literal(web), "-o", "json", *allow])
    if request.node.callspec.params["allow"] == "default":
        _assert_refused(code, err, 1)
    else:
        assert code == 0, err
        assert json.loads(out)["status"] == 200


@pytest.mark.parametrize("allow", MODES, indirect=True)
@pytest.mark.parametrize("robots", ["--robots", "--no-robots"])
def test_crawl_run_refuses_loopback_unless_allowed(
        web: SynthWeb, allow: list[str], robots: str, tmp_path: Path, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str]) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(_literal(web) + "\n")
    code, out, err = _run(capsys, ["crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "warc"),
                                   "--state", str(tmp_path / "state.db"), "--delay", "0s", "--fetchers", "1",
                                   "--max-depth", "0", robots, "-o", "json", *allow])
    assert code == 0, err
    summary = json.loads(out)
    if request.node.callspec.params["allow"] == "default":
        _assert_refused(code, err, 0)
        assert summary["archived"] == 0 and summary["failed"] == 1
    else:
        assert summary["archived"] == 1 and summary["failed"] == 0 and not _refusal_lines(err), err


@pytest.mark.parametrize("allow", MODES, indirect=True)
def test_index_build_urls_refuses_loopback_unless_allowed(
        web: SynthWeb, allow: list[str], tmp_path: Path, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["index", "build", "--dir", str(tmp_path / "index"), "--urls", _literal(web),
                                   "-o", "json", *allow])
    if request.node.callspec.params["allow"] == "default":
        _assert_refused(code, err, 2)  # and then: no document to index, nothing written
        assert out == ""
    else:
        assert code == 0 and json.loads(out)["documents"] == 1 and not _refusal_lines(err), err


def test_no_loopback_request_reaches_the_server_when_refused(
        web: SynthWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CCRAWL_ALLOW_PRIVATE_ADDRESSES", raising=False)
    seeds = tmp_path / "seeds.txt"
    url = f"http://127.0.0.1:{web.port}/p/1"
    seeds.write_text(url + "\n")
    commands: list[Callable[[], list[str]]] = [
        lambda: ["content", "extract", url, "--delay", "0"],
        lambda: ["crawl", "fetch", url, "--robots"],
        lambda: ["crawl", "run", "--seeds", str(seeds), "--state", str(tmp_path / "s.db"), "--fetchers", "1"],
        lambda: ["index", "build", "--dir", str(tmp_path / "i"), "--urls", url],
    ]
    before = sum(n for (host, _), n in web.stats.requests.items() if host.startswith("127.0.0.1"))
    for args in commands:
        _run(capsys, args())
    after = sum(n for (host, _), n in web.stats.requests.items() if host.startswith("127.0.0.1"))
    assert after == before  # robots.txt included
