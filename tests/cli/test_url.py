"""`ccrawl url ...`: arguments or stdin in, records out, bad lines named and skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ccrawl.url.canon import canonicalize, url_key
from ccrawl.url.domain import shard_of
from ccrawl.url.surt import surt


def run_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ccrawl", "url", *args], input=stdin, capture_output=True,
                          env=os.environ.copy(), timeout=60)


def test_surt_of_arguments_matches_the_library() -> None:
    proc = run_cli("surt", "https://www.example.com/a?b=1", "http://Example.org/", "-o", "jsonl")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0
    assert [r["surt"] for r in rows] == [surt("https://www.example.com/a?b=1"), surt("http://Example.org/")]


def test_one_url_with_json_output_is_one_object() -> None:
    proc = run_cli("key", "http://www.example.com/a/b/?id=7&utm_source=x", "-o", "json")
    row = json.loads(proc.stdout)
    assert row["canonical"] == "http://www.example.com/a/b/?id=7"
    assert row["url_key"] == url_key(canonicalize("http://www.example.com/a/b/?id=7")) == "dcc6cca7196e31280e9c"


def test_stdin_stream_names_bad_lines_and_carries_on() -> None:
    stdin = b"http://a.example.com/x\n\x00binary\n\xff\xfe\nnot a url\n{\"url\": \"http://b.example.org/\"}\n"
    proc = run_cli("canon", "-o", "jsonl", stdin=stdin)
    assert proc.returncode == 0
    assert [json.loads(x)["url"] for x in proc.stdout.splitlines()] == ["http://a.example.com/x", "http://b.example.org/"]
    err = proc.stderr.decode().splitlines()
    assert len(err) == 3
    assert err[0].startswith("ccrawl: warning: stdin line 2:") and "not a url" in err[2]
    assert b"Traceback" not in proc.stderr


def test_every_url_failing_exits_1_and_empty_stdin_exits_3() -> None:
    assert run_cli("canon", stdin=b"ftp://x/\nnope\n").returncode == 1
    proc = run_cli("surt", stdin=b"")
    assert proc.returncode == 3 and b"stdin was empty" in proc.stderr


def test_shard_assignment_matches_the_library_and_checks_its_range() -> None:
    urls = [f"http://h{i}.example{i % 7}.com/" for i in range(20)]
    proc = run_cli("shard", "--shards", "3", "-o", "jsonl", stdin="\n".join(urls).encode())
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["shard"] for r in rows] == [shard_of(u, 3) for u in urls]
    bad = run_cli("shard", "--shards", "3", "--shard", "3", "http://x.com/")
    assert bad.returncode == 2 and b"--shard 3" in bad.stderr
