"""A rerun of the same ``recrawl run`` command resumes without ``--state`` (issue #37, item 4): the
checkpoint is kept in ``--out`` (``<out>/.ccrawl-state.json``), and the end-of-run hint names it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.synthweb import SynthWeb


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code or 0, capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["parquet", "warc"])
def test_a_rerun_of_the_same_command_resumes_from_the_checkpoint_kept_in_out(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any, capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    urls = web.page_urls()[:20]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out = tmp_path / "out"
    argv = ["recrawl", "run", "--from", str(wl), "--column", "url", "--out", str(out), "--format", fmt,
            "--max-pages", "8", "--delay", "0", "--workers", "8", "--resolve", "*.test=127.0.0.1",
            "--progress", "none"]
    state = out / ".ccrawl-state.json"

    code, err = _run(argv, capsys)
    assert code == 0, err
    assert f"stopped by max_pages at part 0 row 8 of the work list; the same command resumes from there " \
           f"(checkpoint {state})" in err
    assert state.is_file() and "warning" not in err

    files_after_first = set(out.iterdir())
    code, err = _run(argv, capsys)  # the very same command line: it carries on at row 8
    assert code == 0, err
    assert "recrawl: 8 fetched" in err and "8 already written" not in err
    code, err = _run(argv, capsys)
    assert code == 0 and "recrawl: 4 fetched" in err and "the whole work list is done" in err
    code, err = _run(argv, capsys)
    assert code == 0 and f"nothing to do: the checkpoint {state} says the whole work list is already done" in err
    assert "0 fetched" in err

    if fmt == "parquet":
        got = read_captures(out).column("url").to_pylist()
    else:
        from warcio.archiveiterator import ArchiveIterator

        got = []
        for f in sorted(out.glob("*.warc.gz")):
            with open(f, "rb") as fh:
                got += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                        if r.rec_type == "response"]
    assert Counter(got) == Counter(urls)  # every URL once: no refetch, no gap
    assert files_after_first <= set(out.iterdir())


def test_without_out_or_state_the_hint_says_a_rerun_starts_over(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:6], parts=1)
    code, err = _run(["recrawl", "run", "--from", str(wl), "--column", "url", "--max-pages", "3", "--delay", "0",
                      "--workers", "4", "--resolve", "*.test=127.0.0.1", "--progress", "none"], capsys)
    assert code == 0, err
    assert "ccrawl: warning: recrawl run: no --out and no --state" in err
    assert "nothing was checkpointed (no --out or --state), so a rerun starts from the beginning" in err
    assert "--state resumes" not in err


def test_the_default_checkpoint_of_another_work_list_is_refused_in_one_line(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    common = ["--column", "url", "--out", str(out), "--delay", "0", "--workers", "4",
              "--resolve", "*.test=127.0.0.1", "--progress", "none"]
    a = write_worklist(tmp_path / "a", web.page_urls()[:3], parts=1)
    b = write_worklist(tmp_path / "b", web.page_urls()[3:6], parts=1)
    assert _run(["recrawl", "run", "--from", str(a), *common], capsys)[0] == 0
    code, err = _run(["recrawl", "run", "--from", str(b), *common], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "belongs to another work list" in lines[0]
    assert "no --state was given, so this is the checkpoint kept in --out" in lines[0]


def test_shards_sharing_an_out_keep_their_own_default_checkpoint() -> None:
    from ccrawl.recrawl.params import default_state_path

    assert default_state_path("caps") == "caps/.ccrawl-state.json"
    assert default_state_path("caps", 1, 3) == "caps/.ccrawl-state-s1of3.json"
