"""The SQL of every columnar query, in the dialect Athena, Spark SQL and DuckDB all accept.

The source is always the table ``ccindex`` (Common Crawl's Athena table, or a view), so the same
text runs on a cluster over ``s3://commoncrawl/cc-index/table/cc-main/warc/`` (``--engine print``),
in DuckDB over the ranged-read parts (``--engine duckdb``), and in the tests over local Parquet.
Only portable constructs are used: ``IN`` lists, ``||``, ``substr``, ``LIKE`` on fixed codes,
``CASE``, ``COUNT(DISTINCT)``, ``NULLS LAST``. The ``url_surtkey`` ranges are redundant with the
host/domain/TLD conditions; they are there so every engine can skip row groups by statistics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ccrawl.commoncrawl.columnar.filters import Filters
from ccrawl.errors import UsageError

TABLE_LOCATION = "s3://commoncrawl/cc-index/table/cc-main/warc/"
KINDS = ("urls", "locations", "count", "langs", "mimes", "rows", "hostcdx", "diff")
LOCATION_COLUMNS = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
HOSTCDX_COLUMNS = ("host", "captures", "urls", "status_2xx", "status_3xx", "status_4xx", "status_5xx")
DIFF_COLUMNS = ("host", "urls", "changed", "change_rate")
#: Beyond this many prefixes the redundant url_surtkey ranges are left out of the SQL text.
MAX_SQL_RANGES = 64
_LANG = re.compile(r"^[a-z]{2,3}$")


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: Iterable[str | int]) -> str:
    items = [str(v) if isinstance(v, int) else quote(v) for v in values]
    return f"{column} = {items[0]}" if len(items) == 1 else f"{column} IN ({', '.join(items)})"


def prefix_upper(prefix: str) -> str:
    """The smallest string above every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _langs_match(langs: Sequence[str]) -> str:
    for lang in langs:
        if not _LANG.match(lang):
            raise UsageError(f"--lang/--not-lang {lang!r}: give an ISO 639-3 code such as vie")
    return " OR ".join(f"(',' || content_languages || ',') LIKE '%,{lang},%'" for lang in langs)


def where(f: Filters) -> list[str]:
    """The conditions (ANDed) that express ``f``; the partition columns first."""
    out: list[str] = []
    if f.crawls:
        out.append(_in("crawl", f.crawls))
    if f.subsets:
        out.append(_in("subset", f.subsets))
    prefixes = f.surt_prefixes()
    if prefixes and len(prefixes) <= MAX_SQL_RANGES:
        ranges = [f"(url_surtkey >= {quote(p)} AND url_surtkey < {quote(prefix_upper(p))})" for p in prefixes]
        out.append(ranges[0] if len(ranges) == 1 else "(" + " OR ".join(ranges) + ")")
    if f.domains:
        out.append(_in("url_host_registered_domain", f.domains))
    if f.hosts:
        out.append(_in("url_host_name", f.hosts))
    if f.tlds:
        out.append(_in("url_host_tld", f.tlds))
    if f.statuses:
        out.append(_in("fetch_status", f.statuses))
    if f.mimes:
        out.append(_in("content_mime_type", f.mimes))
    if f.langs:
        out.append(f"({_langs_match(f.langs)})")
    if f.path_prefix is not None:
        out.append(f"substr(url_path, 1, {len(f.path_prefix)}) = {quote(f.path_prefix)}")
    for column, values in (
        ("url_host_tld", f.not_tlds),
        ("content_mime_type", f.not_mimes),
        ("fetch_status", f.not_statuses),
    ):
        if values:
            out.append(f"({column} IS NULL OR NOT ({_in(column, values)}))")
    if f.not_langs:
        out.append(f"(content_languages IS NULL OR NOT ({_langs_match(f.not_langs)}))")
    return out


def _where_clause(f: Filters) -> str:
    conds = where(f)
    return ("\nWHERE " + "\n  AND ".join(conds)) if conds else ""


def build(kind: str, f: Filters, *, limit: int | None = None, crawl_a: str = "", crawl_b: str = "") -> str:
    """The SQL of one query kind over ``ccindex``."""
    lim = f"\nLIMIT {int(limit)}" if limit else ""
    w = _where_clause(f)
    if kind == "urls":
        return f"SELECT url\nFROM ccindex{w}{lim}"
    if kind == "locations":
        return f"SELECT {', '.join(LOCATION_COLUMNS)}\nFROM ccindex{w}{lim}"
    if kind == "rows":
        return f"SELECT *\nFROM ccindex{w}{lim}"
    if kind == "count":
        return f"SELECT COUNT(*) AS count\nFROM ccindex{w}"
    if kind in ("langs", "mimes"):
        column, name = ("content_languages", "lang") if kind == "langs" else ("content_mime_type", "mime")
        return (
            f"SELECT {column} AS {name}, COUNT(*) AS count\nFROM ccindex{w}\nGROUP BY {column}\n"
            f"ORDER BY count DESC, {name} NULLS LAST{lim}"
        )
    if kind == "hostcdx":
        buckets = ",\n       ".join(
            f"SUM(CASE WHEN fetch_status BETWEEN {c}00 AND {c}99 THEN 1 ELSE 0 END) AS status_{c}xx"
            for c in (2, 3, 4, 5)
        )
        return (
            f"SELECT url_host_name AS host, COUNT(*) AS captures, COUNT(DISTINCT url) AS urls,\n       {buckets}\n"
            f"FROM ccindex{w}\nGROUP BY url_host_name\nORDER BY captures DESC, host{lim}"
        )
    if kind == "diff":
        if not crawl_a or not crawl_b:
            raise UsageError("sched diff needs --crawl-a and --crawl-b")
        side = []
        for crawl in (crawl_a, crawl_b):
            conds = [*where(f.with_crawls([crawl])), "fetch_status = 200"]
            side.append(
                "SELECT url, url_host_name AS host, MIN(content_digest) AS digest\n  FROM ccindex\n  WHERE "
                + "\n    AND ".join(conds)
                + "\n  GROUP BY url, url_host_name"
            )
        return (
            f"WITH a AS (\n  {side[0]}\n),\nb AS (\n  {side[1]}\n)\n"
            "SELECT a.host AS host, COUNT(*) AS urls,\n"
            "       SUM(CASE WHEN a.digest = b.digest THEN 0 ELSE 1 END) AS changed,\n"
            "       CAST(SUM(CASE WHEN a.digest = b.digest THEN 0 ELSE 1 END) AS DOUBLE) / COUNT(*) AS change_rate\n"
            "FROM a JOIN b ON a.url = b.url\nGROUP BY a.host\nORDER BY change_rate DESC, urls DESC, host"
            f"{lim}"
        )
    raise UsageError(f"unknown query kind {kind!r}; known: {', '.join(KINDS)}")


def cluster_preamble() -> str:
    """The comment that says where the printed SQL runs as-is."""
    return (
        "-- Athena: the Common Crawl table ccindex (database ccindex) over\n"
        f"--   {TABLE_LOCATION}\n"
        "-- Spark SQL: first\n"
        f"--   CREATE TEMPORARY VIEW ccindex USING parquet OPTIONS (path '{TABLE_LOCATION}');\n"
    )
