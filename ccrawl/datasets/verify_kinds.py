"""``publish verify`` for the datasets that are not the URL mirror: domain ranks, CC-NEWS, recrawl captures.

Every shard gets the same footer checks and verdicts as a URL shard (:func:`ccrawl.datasets.verify.verify`);
what differs is the schema a shard must have, which shards should exist, and the ledger the totals are
reconciled with:

* **domains** (``--graph RELEASE``): shards ``data/<release>/part-NNN.parquet`` numbered 0..n-1 with no
  gap (a gap is ``missing``), n at least the ledger's count; ``stats.csv``'s row for the release
  (shards, rows, bytes);
* **news**: ``data/YYYY/MM/*.parquet`` per month; ``stats.csv`` (files = shards, records = rows) and
  ``languages.csv`` (its articles add up to the month's); a month the ledger calls complete must hold a
  shard for every archive of its manifest (when the manifest can be read);
* **recrawl**: ``data/*.parquet`` in the capture schema (or its older shape, before the text columns were
  appended); every ``ledger/<machine>.csv`` row names a shard on the hub (else ``missing``) with its
  rows, size and sha256 (against the hub's content hash when the hub gives one), and every shard on the
  hub is counted by exactly one ledger row.

:func:`detect_kind` tells the four apart from a repo's files when the caller did not say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from ccrawl.datasets.verify import ShardCheck, VerifyReport, verify
from ccrawl.errors import CredentialMissing, InputError, NothingMatched, UsageError
from ccrawl.hub.repo import DatasetRepo, HubFile
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.hub.ledger import LedgerRow
    from ccrawl.ops.context import OpContext


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
KINDS = ("urls", "domains", "news", "recrawl")


def detect_kind(repo: DatasetRepo) -> str:
    """Which of :data:`KINDS` a repo holds, from its ledger files; UsageError when it is none of them."""
    try:
        files = repo.list_files("")
    except (CredentialMissing, NothingMatched) as exc:
        raise UsageError(f"{repo.repo_id}: cannot list it to tell what it holds ({exc}); name the unit with -c "
                         "CRAWL or --graph RELEASE") from exc
    paths = {f.path for f in files}
    if any(p.startswith("ledger/") and p.endswith(".csv") for p in paths):
        return "recrawl"
    if "languages.csv" in paths:
        return "news"
    header = (repo.read_text("stats.csv") or "").split("\n", 1)[0].split(",") if "stats.csv" in paths else []
    if header[:1] == ["release"]:
        return "domains"
    if header[:1] == ["crawl"]:
        return "urls"
    raise UsageError(f"{repo.repo_id} is not a ccrawl mirror (no stats.csv, languages.csv or ledger/ that says which); "
                     "name the unit with -c CRAWL or --graph RELEASE")


def ledger_records(unit: str, problems: Sequence[str]) -> Iterator[Record]:
    for problem in problems:
        yield {"shard": unit, "verdict": "ledger", "rows": None, "row_groups": None, "size": None,
               "bytes_read": None, "detail": problem}


# -- domains -------------------------------------------------------------------------------------------


def verify_domains(repo: DatasetRepo, release: str, *, sample: int, workers: int) -> VerifyReport:
    from ccrawl.datasets.domain_table import domain_schema
    from ccrawl.datasets.publish_domains import read_ledger, shard_index, shard_path

    try:
        ledger = read_ledger(repo)
    except CredentialMissing:
        ledger = None
    row = ledger.rows.get(release) if ledger is not None else None
    try:
        listed = [i for f in repo.list_files(f"data/{release}") if (i := shard_index(f.path)) is not None]
    except (CredentialMissing, NothingMatched):
        listed = []
    count = max([*listed, -1]) + 1
    if row is not None:
        count = max(count, int(row["shards"]))
    rep = verify(repo, f"data/{release}", schema=domain_schema(),
                 expected=[shard_path(release, i) for i in range(count)], sample=sample, workers=workers,
                 ledger_row=None if row is None else {"crawl": release, **row})
    if ledger is not None and row is None and not _denied(rep):
        rep.ledger_problems.append(f"{release}: stats.csv has no row for this release")
    return rep


def _denied(rep: VerifyReport) -> bool:
    return bool(rep.checks) and all(c.verdict == "no-access" for c in rep.checks)


# -- news ----------------------------------------------------------------------------------------------


def verify_news(repo: DatasetRepo, *, sample: int, workers: int,
                manifest: Callable[[int, int], list[str]] | None = None) -> list[tuple[str, VerifyReport]]:
    """One report per month (the months of the ledger and those on the hub)."""
    from ccrawl.commoncrawl.news.months import Month
    from ccrawl.commoncrawl.news.schema import arrow_schema
    from ccrawl.datasets.news_ledger import LANGUAGES, STATS, Ledgers

    try:
        ledgers: Ledgers | None = Ledgers.parse(repo.read_text(STATS), repo.read_text(LANGUAGES), repo=repo.repo_id)
        months = {"/".join(f.path.split("/")[1:3]) for f in repo.list_files("data")
                  if f.path.endswith(".parquet") and f.path.count("/") == 3}
    except (CredentialMissing, NothingMatched) as exc:
        rep = VerifyReport(checks=[ShardCheck("data", "no-access", detail=str(exc))])
        return [("data", rep)]
    assert ledgers is not None
    out = []
    for month in sorted(months | set(ledgers.stats)):
        row = ledgers.stats.get(month)
        expected: list[str] = []
        if row is not None and str(row.get("complete")) == "true" and manifest is not None:
            y, m = (int(x) for x in month.split("/"))
            expected = [Month(y, m).shard_path(p) for p in manifest(y, m)]
        rep = verify(repo, f"data/{month}", schema=arrow_schema(), expected=expected, sample=sample, workers=workers)
        held = [c for c in rep.checks if c.verdict != "missing"]
        if row is None:
            rep.ledger_problems.append(f"{month}: {STATS} has no row for a month the hub holds shards of")
        else:
            for key, said, have in (("files", row["files"], len(held)),
                                    ("records", row["records"], sum(c.rows for c in held))):
                if int(said) != have:
                    rep.ledger_problems.append(f"{month}: {STATS} says {key}={int(said):,}, the hub holds {have:,}")
            langs = sum(n for (mm, _), n in ledgers.languages.items() if mm == month)
            if langs != int(row["articles"]):
                rep.ledger_problems.append(f"{month}: {LANGUAGES} adds up to {langs:,} articles, {STATS} says "
                                           f"{int(row['articles']):,}")
        out.append((month, rep))
    return out


# -- recrawl -------------------------------------------------------------------------------------------


def capture_schemas() -> list[pa.Schema]:
    """The capture schema, and its older shape (the ami columns, before the text columns were appended)."""
    import pyarrow as pa

    from ccrawl.recrawl.schema import CAPTURE_SCHEMA

    names = CAPTURE_SCHEMA.names
    older = pa.schema([CAPTURE_SCHEMA.field(n) for n in names[: names.index("body") + 1]])
    return [CAPTURE_SCHEMA, older]


def verify_recrawl(repo: DatasetRepo, *, sample: int, workers: int) -> tuple[VerifyReport, list[tuple[str, str]]]:
    """The report over ``data/``, and (ledger path, problem) pairs from reconciling every machine's ledger."""
    from ccrawl.hub.ledger import LEDGER_DIR, parse_ledger, parse_ledger_path

    try:
        ledgers: dict[str, list[LedgerRow]] = {}
        for f in repo.list_files(LEDGER_DIR):
            if parse_ledger_path(f.path) is not None:
                ledgers[f.path] = parse_ledger(repo.read_text(f.path) or "", source=f"{repo.repo_id}/{f.path}")
        files = {f.path: f for f in repo.list_files("data") if f.path.endswith(".parquet")}
    except (CredentialMissing, NothingMatched) as exc:
        return VerifyReport(checks=[ShardCheck("data", "no-access", detail=str(exc))]), []
    except InputError as exc:
        return verify(repo, "data", schema=capture_schemas(), sample=sample, workers=workers), [("ledger", str(exc))]
    claimed = [r.file for rows in ledgers.values() for r in rows]
    rep = verify(repo, "data", schema=capture_schemas(), expected=claimed, sample=sample, workers=workers)
    checks = {c.path: c for c in rep.checks}
    problems: list[tuple[str, str]] = []
    owners: dict[str, list[str]] = {}
    for path, rows in sorted(ledgers.items()):
        for r in rows:
            owners.setdefault(r.file, []).append(path)
            problems += [(path, p) for p in _row_problems(r, files.get(r.file), checks.get(r.file))]
    for shard in sorted(files):
        if shard not in owners:
            problems.append(("data", f"{shard}: on the hub but counted by no ledger"))
        elif len(owners[shard]) > 1:
            problems.append(("data", f"{shard}: counted by {len(owners[shard])} ledger rows "
                                     f"({', '.join(owners[shard])})"))
    rep.ledger_problems = [p for _, p in problems]
    return rep, problems


def _row_problems(r: LedgerRow, f: HubFile | None, chk: ShardCheck | None) -> list[str]:
    if f is None or chk is None or chk.verdict in ("missing", "no-access"):
        return []  # the shard's own verdict says it
    out = []
    if r.bytes != f.size:
        out.append(f"{r.file}: the ledger says bytes={r.bytes:,}, the hub holds {f.size:,}")
    if chk.verdict == "ok" and r.rows != chk.rows:
        out.append(f"{r.file}: the ledger says rows={r.rows:,}, the footer {chk.rows:,}")
    if _SHA256.match(f.etag or "") and r.sha256 and r.sha256 != f.etag:
        out.append(f"{r.file}: the ledger's sha256 {r.sha256[:12]}... is not the hub's {f.etag[:12]}... "
                   "(the shard changed after it was committed)")
    return out



# -- running one --------------------------------------------------------------------------------------


def verify_other(repo: DatasetRepo, *, graph: str, sample: int, workers: int, repair: bool, no_push: bool,
                 ctx: OpContext | None, say: Callable[[str], None],
                 report: list[VerifyReport] | None = None) -> Iterator[Record]:
    """``publish verify`` of a domain release (``graph``), or of the news or recrawl dataset ``repo`` holds.

    Yields a record per shard and per ledger disagreement, and raises InputError at the end when any
    failed (unless ``repair`` dealt with it). ``repair`` applies to a domain release only: the failing
    shards are deleted from the hub and the release's ledger row recounted (no longer complete), in one
    commit, so ``domains publish`` rebuilds exactly those shards.
    """
    kind = "domains" if graph else detect_kind(repo)
    if kind == "urls":
        raise UsageError(f"{repo.repo_id} is the URL mirror: name the crawl to verify with -c CRAWL")
    if kind == "domains" and not graph:
        raise UsageError(f"{repo.repo_id} is the domain mirror: name the release to verify with --graph RELEASE")
    if repair and kind != "domains":
        raise UsageError(f"--repair rebuilds URL and domain shards; a {kind} shard is rebuilt by running "
                         f"{kind} publish again (delete the failing shards first)")
    units: list[tuple[str, VerifyReport, list[tuple[str, str]]]] = []
    if kind == "domains":
        rep = verify_domains(repo, graph, sample=sample, workers=workers)
        units.append((graph, rep, [(f"{graph}/stats.csv", p) for p in rep.ledger_problems]))
    elif kind == "news":
        from ccrawl.commoncrawl.news.monthpaths import month_paths

        def manifest(y: int, m: int) -> list[str]:
            return month_paths(y, m, ctx) if ctx is not None else []

        for month, rep in verify_news(repo, sample=sample, workers=workers, manifest=manifest):
            units.append((month, rep, [(f"{month}/stats.csv", p) for p in rep.ledger_problems]))
    else:
        rep, problems = verify_recrawl(repo, sample=sample, workers=workers)
        units.append(("data", rep, problems))
    failed = False
    total_read = total_bytes = 0
    for unit, rep, problems in units:
        total_read += rep.bytes_read
        total_bytes += rep.dataset_bytes
        for chk in rep.checks:
            yield chk.record()
        for where, problem in problems:
            yield from ledger_records(where, [problem])
        if report is not None:
            report.append(rep)
        if repair and kind == "domains" and not _denied(rep):
            rep.repaired = drop_bad_shards(repo, unit, rep, no_push=no_push, say=say)
            if not rep.failed or {c.path for c in rep.failed if c.verdict != "missing"} <= set(rep.repaired):
                continue
        if rep.failed or rep.ledger_problems:
            failed = True
    pct = 100.0 * total_read / total_bytes if total_bytes else 0.0
    say(f"publish verify: {kind}: read {total_read:,} of {total_bytes:,} bytes ({pct:.3f}%)")
    if failed:
        hint = ("; --repair drops the failing shards so domains publish rebuilds them" if kind == "domains"
                and not repair else "")
        raise InputError(f"publish verify: {repo.repo_id}: shards failed or the ledger disagrees "
                         f"(see the report){hint}")


def drop_bad_shards(repo: DatasetRepo, release: str, rep: VerifyReport, *, no_push: bool,
                    say: Callable[[str], None]) -> list[str]:
    """Delete a release's failing shards and recount its ledger row in one commit; the paths deleted."""
    from ccrawl.datasets.publish_domains import STATS, recount, render_card
    from ccrawl.hub.repo import Add

    bad = sorted(c.path for c in rep.failed if c.verdict not in ("missing", "no-access"))
    if no_push:
        say(f"publish verify: --no-push: would delete {len(bad)} failing shard(s) of {release} for domains publish "
            "to rebuild")
        return []
    head = repo.head()
    if bad:
        repo.commit([], bad, message=f"publish verify --repair: drop {len(bad)} failing shard(s) of {release}",
                    parent=head)
        head = repo.head()
    _, ledger = recount(repo, releases=[release])
    ledger.row(release)["complete"] = False
    repo.commit([Add(STATS, ledger.render()), Add("README.md", render_card(repo.repo_id, ledger).encode())],
                message=f"publish verify --repair: {release} recounted; domains publish rebuilds what is missing",
                parent=head)
    say(f"publish verify: dropped {len(bad)} failing shard(s) of {release} and recounted its ledger row; run "
        f"domains publish --graph {release} to rebuild them")
    return bad

