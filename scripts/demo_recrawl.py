"""The demo: recrawl a synthetic web on loopback, then query the captures with DuckDB.

    python scripts/demo_recrawl.py [--hosts 40] [--pages 10] [--out DIR]

Starts the synthetic web (many host names on 127.0.0.1, real pages plus the failures a real
recrawl meets: unknown hosts, refused ports, TLS errors, redirects, 404s, non-HTML), writes a
Parquet work list of its URLs, runs ``ccrawl recrawl run`` over it (its summary goes to
stderr), and prints a DuckDB query over the capture shards: rows by status and error class,
then one page as Markdown.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

# faults that only cost the demo time (slow bodies, 50 MB downloads, robots timeouts)
SLOW_KINDS = {"slow-ttfb", "slow-body", "big-body", "robots-timeout", "reset-mid-body", "broken-chunked"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=40)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.store.duck import connect
    from ccrawl.testing.synthweb import SynthWebThread

    out = args.out or Path(tempfile.mkdtemp(prefix="ccrawl-demo-"))
    worklist = out / "worklist"
    worklist.mkdir(parents=True, exist_ok=True)
    with SynthWebThread(hosts=args.hosts, pages=args.pages) as web:
        urls = [u for kind, listed in web.catalog().items() if kind not in SLOW_KINDS for u in listed]
        pq.write_table(pa.table({"url": urls}), worklist / "part-00000.parquet")
        print(f"demo: synthetic web on 127.0.0.1:{web.port}, {len(urls)} URLs in {worklist}", file=sys.stderr)
        cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(worklist), "--column", "url",
               "--out", str(out / "captures"), "--state", str(out / "recrawl.json"), "--delay", "0",
               "--timeout", "5s", "--resolve", "*.test=127.0.0.1", "--progress", "text"]
        print("demo: $ ccrawl " + " ".join(cmd[3:]), file=sys.stderr)
        code = subprocess.call(cmd)
        if code != 0:
            print(f"demo: recrawl run exited {code}", file=sys.stderr)
            return code

    shards = sorted((out / "captures").glob("*.parquet"))
    con = connect()
    files = [str(p) for p in shards]
    print(f"\n-- {len(shards)} sealed shard(s) in {out / 'captures'}; rows by status and error class:")
    query = ("SELECT status, error, count(*) AS rows FROM read_parquet($files) "
             "GROUP BY status, error ORDER BY rows DESC, status")
    for status, error, rows in con.execute(query, {"files": files}).fetchall():
        print(f"status {status:>3}  {error or '-':<8} {rows:>5} rows")
    page = con.execute(
        "SELECT url, title, language, word_count, extractor, markdown FROM read_parquet($files) "
        "WHERE status = 200 AND markdown <> '' ORDER BY url LIMIT 1", {"files": files}).fetchone()
    if page is None:
        print("demo: no page rendered to Markdown", file=sys.stderr)
        return 1
    url, title, language, words, extractor, markdown = page
    print(f"\n-- one page as Markdown: {url} ({title!r}, {language}, {words} words, {extractor})\n")
    print(markdown[:1500] + ("\n..." if len(markdown) > 1500 else ""))
    print(f"\ndemo: the work list, the capture shards and the checkpoint are in {out} "
          f"(remove it with: rm -r {out})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
