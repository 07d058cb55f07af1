"""``markdown export``: units of Common Crawl in, Markdown Parquet shards out, committed to a dataset repo.

A run, in order:

1. **Plan.** Shards: the crawl's ``warc.paths.gz`` (``wet.paths.gz`` for ``--source-kind wet``) and
   ``--shards``; locations: the JSONL stream cut into parts of ``--part-size`` (see :mod:`.units`).
   Units the ledger (``<out>/.committed``) names are skipped: a rerun resumes.
2. **Build**, ``parallel`` units at a time (threads; the conversion itself runs in one shared pool
   of ``workers`` processes, :class:`~ccrawl.markdown.convert.Converter`): a shard file is
   downloaded to ``<out>/.download`` (resumably) and read record by record; a part's records are
   read with coalesced ranged GETs. Digest dedup (``--dedup-digest``) runs before extraction,
   the language filter (``--lang``) after it. The rows go to ``<out>/data/crawl=<id>/NNNNNN.parquet``
   (zstd, provenance in the footer), written to ``.tmp`` and renamed.
3. **Commit**, ``commit_batch`` units per commit: one existence call first, so a unit whose files
   are already on the hub (a run killed between its commit and its ledger line) is recorded, not
   uploaded again; then one commit with the new files (and the card, the first time). Only after
   the commit lands are the units written to the ledger, and the local files deleted unless
   ``keep_parquet``. With ``push=False`` a unit goes to the ledger as soon as its file is sealed.

Before a new unit starts, free disk under ``<out>`` is checked against ``min_free_gb``: the waiting
commit is flushed (which frees its files), then the run waits for space, and past ``pause_limit``
seconds it stops with exit 75. A unit that fails (the file cannot be fetched, a corrupt record, a
page the engine chokes on) ends the run after the finished units are committed, or with
``skip_errors`` is reported and left out of the ledger so the next run tries it again.

Journal events (``journal``, default ``run.jsonl`` beside the ledger), one JSON object a line with
``ts`` and ``event``: ``start``, ``unit_written``, ``unit_failed``, ``commit``, ``disk_low``, ``end``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shlex
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol, TextIO, cast

from ccrawl import __version__
from ccrawl.commoncrawl.records import Location
from ccrawl.commoncrawl.stream import RemoteFile
from ccrawl.errors import CcrawlError, CredentialMissing, InputError, TemporaryFailure, UsageError
from ccrawl.hub.repo import DatasetRepo
from ccrawl.jsontypes import Record
from ccrawl.markdown.committed import CommittedLedger, Entry
from ccrawl.markdown.convert import ConvertedDoc, Converter
from ccrawl.markdown.sources import ReadStats, docs_from_records, file_docs, location_records
from ccrawl.markdown.units import Unit, crawl_of, location_parts, parse_shards, shard_units

#: The engines ``markdown export`` takes, and the manifest each reads.
ENGINE_SOURCES = {"h2m": "warc", "readability": "warc", "raw": "warc", "wet": "wet"}
# The same engines keeping link targets and images (+links), or naming the default (+textlinks;
# docs/extract.md, "Links in Markdown").
ENGINE_SOURCES.update({f"{n}{m}": "warc" for n in ("h2m", "readability", "raw") for m in ("+links", "+textlinks")})
CANON_VERSION = "canon/1"
#: Columns of the per-unit records the command prints.
COLUMNS = ("unit", "crawl", "file", "rows", "bytes", "action", "commit")


@dataclass(slots=True)
class ExportOptions:
    """Every knob of ``markdown export``; the CLI passes its flags straight through."""

    out: Path
    crawl: str = ""
    shards: str = ""
    source_kind: str = ""
    extractor: str = "h2m"
    lang: str = ""
    min_lang_confidence: float = 0.8
    dedup_digest: bool = False
    locations: Iterable[Location] | None = None
    part_size: int = 50_000
    gap: int = 1 << 20
    max_span: int = 16 << 20
    parallel: int = 1
    workers: int = 1
    limit: int = 0
    push: bool = True
    repo: str = ""
    commit_batch: int = 10
    keep_parquet: bool = False
    min_free_gb: float = 0.0
    ledger: Path | None = None
    skip_errors: bool = False
    journal: Path | None = None
    command_line: str = ""
    pause_limit: float = 600.0
    client_options: dict[str, object] = field(default_factory=dict)  # ClientOptions.as_dict(): crosses to workers
    executor: str = "local"
    """``local`` (threads and a process pool here) or ``ray`` (a Ray task per unit, see ccrawl.scale.rayexec)."""
    ray_address: str = ""

    def validate(self) -> None:
        """Refuse impossible combinations with the seed's wording (usage errors, exit 2)."""
        self.out = Path(self.out)
        self.extractor = self.extractor.strip().lower()
        if self.extractor not in ENGINE_SOURCES:
            raise UsageError(f"--extractor {self.extractor!r}: use one of {', '.join(ENGINE_SOURCES)}")
        needs = ENGINE_SOURCES[self.extractor]
        if self.locations is not None:
            if self.extractor == "wet":
                raise UsageError("--locations cannot be combined with the wet extractor: WET files have no "
                                 "record offsets to point at")
            self.source_kind = "warc"
        elif not self.source_kind:
            self.source_kind = needs
        if self.source_kind not in ("warc", "wet"):
            raise UsageError(f"--source-kind {self.source_kind!r}: use warc or wet")
        if self.source_kind != needs:
            raise UsageError(f"Extractor {self.extractor} reads {needs} shards, so it cannot be used with "
                             f"--source-kind {self.source_kind}.")
        if self.locations is None and not self.shards:
            raise UsageError("give --shards (N, N-M, N,M or all) or --locations FILE|-")
        if self.lang and (len(self.lang) != 3 or not self.lang.isalpha()):
            raise UsageError(f"--lang {self.lang!r}: give an ISO 639-3 code such as vie, eng or deu")
        self.lang = self.lang.lower()
        if not 0.0 <= self.min_lang_confidence <= 1.0:
            raise UsageError(f"--min-lang-confidence {self.min_lang_confidence}: give a number from 0 to 1")
        for flag, value, low in (("--parallel", self.parallel, 1), ("--commit-batch", self.commit_batch, 1),
                                 ("--workers", self.workers, 0), ("--limit", self.limit, 0),
                                 ("--part-size", self.part_size, 1)):
            if value < low:
                raise UsageError(f"{flag} must be at least {low}, got {value}")
        if self.min_free_gb < 0:
            raise UsageError(f"--min-free-gb must be 0 or more, got {self.min_free_gb}")
        from ccrawl.net.ranges import check_limits

        check_limits(self.gap, self.max_span)
        if self.push and not self.repo:
            raise UsageError("pushing needs --repo owner/name (or pass --push=false to build locally)")
        if self.workers == 0:
            self.workers = os.cpu_count() or 1
        from ccrawl.scale.rayexec import check_executor

        self.executor = check_executor(self.executor)
        if self.ledger is None:
            self.ledger = self.out / ".committed"
        if self.journal is None:
            self.journal = self.ledger.parent / "run.jsonl"


@dataclass(slots=True)
class BuiltFile:
    """One Parquet file a unit produced: where it goes in the repo, where it is, what it holds."""

    repo_path: str
    local: Path
    crawl: str
    rows: int
    bytes: int


@dataclass(slots=True)
class Built:
    """A unit built: its files and what reading and converting it counted."""

    unit: Unit
    files: list[BuiltFile]
    read: ReadStats
    detected: Counter[str]
    kept: int
    dropped: int
    errors: int
    seconds: float


@dataclass(slots=True)
class ExportStats:
    """Totals of a run, for the summary lines and the ``end`` event."""

    units: int = 0
    already: int = 0
    written: int = 0
    committed: int = 0
    existing: int = 0
    failed: int = 0
    commits: int = 0
    rows: int = 0
    bytes: int = 0
    documents: int = 0
    duplicates: int = 0
    not_html: int = 0
    unfetchable: int = 0
    bad_records: int = 0
    errors: int = 0
    kept: int = 0
    dropped: int = 0
    deleted: int = 0
    detected: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def as_dict(self) -> Record:
        out: Record = {k: getattr(self, k) for k in self.__slots__ if k != "detected"}
        out["detected"] = dict(self.detected.most_common())
        return out


class Detected(Protocol):
    """What the language filter reads of a document: the detected language and its confidence."""

    @property
    def language(self) -> str | None: ...

    @property
    def language_confidence(self) -> float: ...


def passes_lang(doc: Detected, lang: str, min_confidence: float) -> bool:
    """``--lang``: detected as ``lang`` with at least ``min_confidence``; unknown never passes."""
    return bool(doc.language) and doc.language == lang and doc.language_confidence >= min_confidence


class _Pool(Protocol):
    """What :meth:`Exporter._drive` needs of an executor besides its ``submit``: a way to stop it."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None: ...


class Journal:
    """The run's JSON Lines event log (appended, flushed per event)."""

    def __init__(self, path: Path | None) -> None:
        self._fh: TextIO | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)

    def event(self, name: str, **fields: object) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps({"ts": round(time.time(), 3), "event": name, **fields}) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def card(repo_id: str) -> str:
    """The dataset card: front matter declaring only the Parquet files as data, and the schema."""
    from ccrawl.markdown.schema import EXPORT_COLUMNS

    rows = "\n".join(f"| `{name}` | {kind} |" for name, kind in EXPORT_COLUMNS)
    return (
        "---\n"
        f"pretty_name: {repo_id.split('/')[-1]}\n"
        "license: other\n"
        "tags:\n- common-crawl\n- markdown\n- web\n"
        "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/*/*.parquet\n"
        "---\n\n"
        f"# {repo_id}\n\nCommon Crawl captures converted to Markdown by `ccrawl markdown export`, one Parquet "
        "file per source shard at `data/crawl=<id>/NNNNNN.parquet`. Every file's metadata names the tool "
        "version, the extractor and the command that made it.\n\n| column | type |\n|---|---|\n" + rows + "\n"
    )


class Exporter:
    """One ``markdown export`` run (see the module docstring)."""

    #: the command's name in its stderr lines
    command = "markdown export"

    def __init__(self, opts: ExportOptions, repo: DatasetRepo | None = None, *,
                 log: Callable[[str], None] | None = None, info: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        """``log`` hears warnings, ``info`` the progress lines (``log`` when not given)."""
        opts.validate()
        if opts.push and repo is None:
            raise UsageError("pushing needs a dataset repo; pass --push=false to build locally")
        self.opts = opts
        self.repo = repo
        self.log = log or (lambda _msg: None)
        self.info = info or self.log
        self.sleep = sleep
        self.stats = ExportStats()
        assert opts.ledger is not None
        self.ledger = CommittedLedger(opts.ledger)
        self.journal = Journal(opts.journal)
        self.label = ""
        self._card_on_hub = False
        self._stale: set[str] = set()
        #: bytes per part when a pool converts a downloaded shard (None: :func:`.parts.plan_parts` decides)
        self.part_bytes: int | None = None

    # -- planning --------------------------------------------------------------------------------

    def _plan(self) -> Iterator[Unit]:
        opts = self.opts
        if opts.locations is not None:
            yield from location_parts(opts.locations, opts.part_size)
            return
        from ccrawl.commoncrawl.crawls import resolve
        from ccrawl.commoncrawl.manifests import fetch_paths
        from ccrawl.net.client import CCClient, ClientOptions

        async def manifest() -> tuple[str, list[str]]:
            async with CCClient.of(ClientOptions.parse(opts.client_options)) as cc:
                crawls = await resolve(cc, opts.crawl or "latest", warn=self.log)
                if len(crawls) != 1:
                    raise UsageError(f"-c {opts.crawl}: name one crawl (it resolves to {len(crawls)})")
                return crawls[0], await fetch_paths(cc, crawls[0], opts.source_kind)

        crawl, paths = asyncio.run(manifest())
        if not paths:
            raise InputError(f"{crawl} lists no {opts.source_kind} files")
        yield from shard_units(paths, parse_shards(opts.shards, len(paths)), crawl)

    def _todo(self, units: Iterable[Unit]) -> Iterator[Unit]:
        for unit in units:
            self.stats.units += 1
            if self.ledger.done(unit.key, extractor=self.label, limit=self.opts.limit):
                self.stats.already += 1
                continue
            if unit.key in self.ledger.entries:
                self._stale.add(unit.key)  # built before under another --limit: replace what is on the hub
            yield unit

    # -- building one unit -----------------------------------------------------------------------

    def _provenance(self, unit: Unit, crawl: str) -> dict[str, str]:
        opts = self.opts
        return {
            "ccrawl.version": __version__,
            "ccrawl.software": f"ccrawl/{__version__}",
            "ccrawl.extractor": self.label,
            "ccrawl.canon": CANON_VERSION,
            "ccrawl.command": opts.command_line or shlex.join(sys.argv),
            "ccrawl.crawl": crawl,
            "ccrawl.unit": unit.key,
            "ccrawl.source": unit.path or f"{len(unit.locations)} locations",
            "ccrawl.source_kind": opts.source_kind,
            "ccrawl.lang": opts.lang,
            "ccrawl.min_lang_confidence": f"{opts.min_lang_confidence:g}" if opts.lang else "",
            "ccrawl.dedup_digest": "true" if opts.dedup_digest else "false",
            "ccrawl.limit": str(opts.limit),
        }

    def _download(self, unit: Unit) -> Path:
        from ccrawl.commoncrawl.download import download_one
        from ccrawl.net.client import CCClient, ClientOptions

        dest = self.opts.out / ".download" / unit.path.rsplit("/", 1)[-1]

        async def fetch() -> None:
            async with CCClient.of(ClientOptions.parse(self.opts.client_options)) as cc:
                # no SHA-256: nothing records it, and every member's gzip CRC is checked as it is read
                await download_one(cc, unit.path, dest, digest=False)

        asyncio.run(fetch())
        return dest

    def _build(self, unit: Unit, converter: Converter) -> Built:
        with contextlib.ExitStack() as stack:
            return self._build_in(stack, unit, converter)

    def _build_in(self, stack: contextlib.ExitStack, unit: Unit, converter: Converter) -> Built:
        opts = self.opts
        started = time.perf_counter()
        read = ReadStats()
        detected: Counter[str] = Counter()
        kept = dropped = errors = 0
        files: list[BuiltFile] = []
        groups: list[tuple[str, Iterable[ConvertedDoc]]] = []
        download: Path | None = None
        remote: RemoteFile | None = None
        if unit.is_part:
            by_crawl: dict[str, list[Location]] = {}
            for loc in unit.locations:
                by_crawl.setdefault(crawl_of(loc.filename), []).append(loc)
            for crawl, locs in by_crawl.items():
                records = location_records(opts.client_options, locs, gap=opts.gap, max_span=opts.max_span,
                                           warn=self.log, stats=read)
                groups.append((crawl, converter.convert(docs_from_records(
                    records, kind="warc", dedup_digest=opts.dedup_digest, stats=read, limit=opts.limit))))
        else:
            def one_pass(source: Path | BinaryIO) -> Iterator[ConvertedDoc]:
                return converter.convert(file_docs(
                    source, kind=opts.source_kind, dedup_digest=opts.dedup_digest, stats=read,
                    skip_errors=opts.skip_errors, warn=self.log, limit=opts.limit, name=unit.path))

            if converter.workers > 1 and not opts.limit:
                # the pool's workers read their own parts of the file (parts.py): it goes to disk first
                t0 = time.perf_counter()
                download = self._download(unit)
                read.download_seconds = time.perf_counter() - t0
                groups.append((unit.crawl, self._convert_in_parts(unit, download, converter, read)
                               or one_pass(download)))
            else:
                # read once, front to back: converted as it arrives, never written to disk
                remote = stack.enter_context(contextlib.closing(RemoteFile(unit.path, opts.client_options)))
                groups.append((unit.crawl, one_pass(cast(BinaryIO, remote))))  # a read-only binary stream
        from ccrawl.markdown.schema import COLUMN_NAMES, columns_to_table, write_parquet

        for crawl, docs in groups:
            rows: list[ConvertedDoc] = []
            for doc in docs:
                if doc.error:
                    if not opts.skip_errors:
                        raise InputError(f"{unit.key}: {doc.url}: the {opts.extractor} engine failed ({doc.error}); "
                                         "pass --skip-errors to leave such pages out")
                    errors += 1
                    continue
                detected[doc.language or "unknown"] += 1
                if opts.lang and not passes_lang(doc, opts.lang, opts.min_lang_confidence):
                    dropped += 1
                    continue
                kept += 1
                rows.append(doc)
            repo_path = unit.repo_path(crawl)
            local = opts.out / repo_path
            # ConvertedDoc's fields are the export columns: one list per column, no row dicts
            table = columns_to_table({name: [getattr(d, name) for d in rows] for name in COLUMN_NAMES})
            size = write_parquet(table, local, self._provenance(unit, crawl))
            files.append(BuiltFile(repo_path, local, crawl, len(rows), size))
        if download is not None:
            download.unlink(missing_ok=True)
        if remote is not None:
            remote.close()
            read.download_seconds = remote.seconds
        return Built(unit, files, read, detected, kept, dropped, errors, time.perf_counter() - started)

    def _convert_in_parts(self, unit: Unit, path: Path, converter: Converter,
                          read: ReadStats) -> Iterator[ConvertedDoc] | None:
        """The shard converted by the pool in parts its workers read themselves (:mod:`.parts`); None
        when the parts do not cover the file exactly (said in the journal), so it is read in one pass."""
        from ccrawl.markdown.parts import convert_parts, join_parts

        results, problem = convert_parts(converter, path, kind=self.opts.source_kind,
                                         dedup_digest=self.opts.dedup_digest, part_bytes=self.part_bytes)
        if problem:
            read.parts_fallback = problem
            self.log(f"markdown export: {unit.key}: read again in one pass, the parts did not cover it ({problem})")
            return None
        read.parts = len(results)
        return join_parts(results, read, self.opts.dedup_digest)

    # -- disk, commits, ledger -------------------------------------------------------------------

    def _free_gb(self) -> float:
        self.opts.out.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.opts.out).free / 1e9

    def _wait_for_disk(self, waiting: list[Built]) -> Iterator[Record]:
        need = self.opts.min_free_gb
        if need <= 0 or self._free_gb() >= need:
            return
        if waiting:
            yield from self._flush(waiting)
        free = self._free_gb()
        if free >= need:
            return
        self.log(f"markdown export: {free:.1f} GB free under {self.opts.out}, under --min-free-gb {need:g}; "
                 "pausing new shards")
        self.journal.event("disk_low", free_gb=round(free, 3), min_free_gb=need)
        deadline = time.monotonic() + self.opts.pause_limit
        while free < need:
            if time.monotonic() >= deadline:
                raise TemporaryFailure(
                    f"free disk under {self.opts.out} stayed at {free:.1f} GB, under --min-free-gb {need:g}, for "
                    f"{self.opts.pause_limit:g}s; free some space and run the same command again to resume"
                )
            self.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
            free = self._free_gb()

    def _record(self, built: Built, f: BuiltFile, action: str, commit: str | None) -> Record:
        return {"unit": built.unit.key, "crawl": f.crawl, "file": f.repo_path, "rows": f.rows, "bytes": f.bytes,
                "action": action, "commit": commit}

    def _entry(self, built: Built, pushed: bool) -> Entry:
        return Entry(key=built.unit.key, files=[f.repo_path for f in built.files],
                     rows=sum(f.rows for f in built.files), bytes=sum(f.bytes for f in built.files),
                     extractor=self.label, limit=self.opts.limit, pushed=pushed)

    def _flush(self, batch: list[Built]) -> Iterator[Record]:
        """Commit ``batch`` (empties it), then ledger it; files already on the hub are not uploaded again."""
        if not batch:
            return
        todo = list(batch)
        batch.clear()
        if not self.opts.push:
            for built in todo:
                self.ledger.add(self._entry(built, pushed=False))
                for f in built.files:
                    yield self._record(built, f, "written", None)
            return
        from ccrawl.hub.repo import Add
        from ccrawl.hub.staged import commit_once
        from ccrawl.hub.stall import StallClock

        repo = self.repo
        assert repo is not None  # only a pushing run commits
        clock = StallClock(600.0, sleep=self.sleep, log=self.log)
        paths = [f.repo_path for b in todo for f in b.files]
        there = clock.retrying("existence check", lambda: repo.exists([*paths, "README.md"]))
        self._card_on_hub = self._card_on_hub or bool(there.get("README.md"))
        adds = [Add(f.repo_path, f.local) for b in todo for f in b.files
                if not there.get(f.repo_path) or b.unit.key in self._stale]
        commit: str | None = None
        if adds:
            if not self._card_on_hub:
                adds.append(Add("README.md", card(self.opts.repo).encode()))
            rows = sum(b.kept for b in todo)
            message = f"markdown export: {len(todo)} unit(s) ({todo[0].unit.key}..{todo[-1].unit.key}), {rows:,} rows"
            commit = commit_once(clock, repo, lambda _head: (adds, message), parent=False)
            self._card_on_hub = True
            self.stats.commits += 1
            self.journal.event("commit", commit=commit, units=[b.unit.key for b in todo],
                               files=[a.path_in_repo for a in adds])
        uploaded = {a.path_in_repo for a in adds}
        for built in todo:
            self.ledger.add(self._entry(built, pushed=True))
            self._stale.discard(built.unit.key)
            new = any(f.repo_path in uploaded for f in built.files)
            if new:
                self.stats.committed += 1
            else:
                self.stats.existing += 1
            for f in built.files:
                yield self._record(built, f, "committed" if f.repo_path in uploaded else "exists",
                                   commit if f.repo_path in uploaded else None)
                if not self.opts.keep_parquet and f.local.exists():
                    f.local.unlink(missing_ok=True)
                    self.stats.deleted += 1

    # -- the run ---------------------------------------------------------------------------------

    def _account(self, built: Built) -> None:
        s = self.stats
        s.written += 1
        s.rows += sum(f.rows for f in built.files)
        s.bytes += sum(f.bytes for f in built.files)
        s.documents += built.read.documents
        s.duplicates += built.read.duplicates
        s.not_html += built.read.not_html
        s.unfetchable += built.read.unfetchable
        s.bad_records += built.read.bad_records
        s.errors += built.errors
        s.kept += built.kept
        s.dropped += built.dropped
        s.detected.update(built.detected)
        self.journal.event("unit_written", unit=built.unit.key, files=[f.repo_path for f in built.files],
                           rows=built.kept, documents=built.read.documents, duplicates=built.read.duplicates,
                           dropped=built.dropped, errors=built.errors, unfetchable=built.read.unfetchable,
                           bytes=sum(f.bytes for f in built.files), seconds=round(built.seconds, 3),
                           download_seconds=round(built.read.download_seconds, 3), parts=built.read.parts,
                           **({"parts_fallback": built.read.parts_fallback} if built.read.parts_fallback else {}))

    def run(self) -> Iterator[Record]:
        """Build and commit every unit not in the ledger; one record per file handled."""
        from ccrawl.extract.engines import get_extractor

        started = time.perf_counter()
        self.label = get_extractor(self.opts.extractor).label
        self.opts.out.mkdir(parents=True, exist_ok=True)
        with self._lock():
            try:
                if self.opts.push:
                    self._open_repo()
                self.journal.event("start", extractor=self.label, source_kind=self.opts.source_kind,
                                   shards=self.opts.shards or None, locations=self.opts.locations is not None,
                                   lang=self.opts.lang or None, push=self.opts.push, repo=self.opts.repo or None)
                # under Ray each task converts in its own worker: no process pool on the driver
                workers = self.opts.workers if self.opts.executor == "local" else 1
                with Converter(self.opts.extractor, workers) as converter:
                    yield from self._run_units(converter)
            finally:
                self.stats.seconds = time.perf_counter() - started
                self.journal.event("end", **self.stats.as_dict())
                self.journal.close()

    def _open_repo(self) -> None:
        from ccrawl.hub.stall import StallClock

        clock = StallClock(600.0, sleep=self.sleep, log=self.log)
        repo = self.repo
        assert repo is not None  # only a pushing run opens the repo
        if not clock.retrying("repo info", repo.exists_repo):
            clock.retrying("create repo", lambda: repo.create())
            self.log(f"markdown export: created {self.opts.repo}")

    def _run_units(self, converter: Converter) -> Iterator[Record]:
        if self.opts.executor == "ray":
            yield from self._run_units_on_ray()
            return
        with ThreadPoolExecutor(max_workers=self.opts.parallel, thread_name_prefix="md-unit") as pool:
            yield from self._drive(lambda unit: pool.submit(self._build, unit, converter), self.opts.parallel, pool)

    def _run_units_on_ray(self) -> Iterator[Record]:
        """A Ray task per unit (same build code, converting in the task); commits and ledger stay here."""
        import dataclasses

        from ccrawl.scale.rayexec import RayPool, cluster, cluster_cpus

        task_opts = dataclasses.replace(
            self.opts, locations=None,
            client_options={k: v for k, v in self.opts.client_options.items() if not callable(v)})
        with cluster(self.opts.ray_address, log=self.log) as ray:
            pool = RayPool(ray, num_cpus=1, what="units", log=self.log)
            # one unit queued past the cluster's CPUs, so a CPU that frees up never waits on the driver
            slots = max(self.opts.parallel, cluster_cpus(ray) + 1)
            yield from self._drive(lambda unit: pool.submit(build_in_task, task_opts, self.label, unit), slots, pool)
            self.info(pool.tally.line("units"))

    def _drive(self, submit: Callable[[Unit], Future[Built]], slots: int, pool: _Pool) -> Iterator[Record]:
        """Keep ``slots`` units building, account and commit each as it finishes (any executor)."""
        from ccrawl.progress import UnitProgress

        todo = list(self._todo(self._plan()))  # the shards are a list already: their count is the total
        units = iter(todo)
        progress = UnitProgress("markdown export", "shards", len(todo), self.info)
        waiting: list[Built] = []
        failure: BaseException | None = None
        running: dict[Future[Built], Unit] = {}
        exhausted = False
        try:
            while True:
                while not exhausted and failure is None and len(running) < slots:
                    yield from self._wait_for_disk(waiting)
                    unit = next(units, None)
                    if unit is None:
                        exhausted = True
                        break
                    running[submit(unit)] = unit
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    unit = running.pop(fut)
                    try:
                        built = fut.result()
                        self._check_visible(built)
                    except (CcrawlError, OSError) as exc:
                        self._failed(unit, exc)
                        progress.advance(failed=True)
                        if not self.opts.skip_errors and failure is None:
                            failure = exc
                        continue
                    self._account(built)
                    progress.advance()
                    waiting.append(built)
                    if len(waiting) >= self.opts.commit_batch:
                        yield from self._flush(waiting)
            yield from self._flush(waiting)
        except BaseException:
            for fut in running:
                fut.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        if failure is not None:
            raise failure

    def _check_visible(self, built: Built) -> None:
        """A file a task wrote must be where the driver commits from (a multi-node cluster needs a shared --out)."""
        for f in built.files:
            if not f.local.is_file():
                raise CcrawlError(f"{built.unit.key}: the task wrote {f.local} on another machine; with a Ray cluster "
                                  "of several nodes put --out on a file system every node shares")

    def _failed(self, unit: Unit, exc: BaseException) -> None:
        self.stats.failed += 1
        self.journal.event("unit_failed", unit=unit.key, error=str(exc))
        self.log(f"markdown export: {unit.key} failed: {exc}"
                 + ("; it stays out of the ledger, so the next run tries it again" if self.opts.skip_errors else ""))

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        import contextlib

        @contextlib.contextmanager
        def held() -> Iterator[None]:
            path = self.opts.out / ".export.lock"
            with path.open("a+") as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError as exc:
                    raise TemporaryFailure(f"another markdown export is writing into {self.opts.out}: one run "
                                           "per --out") from exc
                try:
                    yield
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

        return held()

    # -- what the run prints ---------------------------------------------------------------------

    def closing_lines(self) -> list[str]:
        """What a run prints when it ends, in order: the language lines, the summary, what it deleted."""
        deleted = self.deleted_line()
        return [*self.language_lines(), self.summary_line(), *([deleted] if deleted else [])]

    def language_lines(self) -> list[str]:
        """The drop rate (with ``--lang``) and the detected mix, as the seed prints them."""
        s = self.stats
        lines = []
        total = sum(s.detected.values())
        if self.opts.lang:
            share = 100.0 * s.dropped / total if total else 0.0
            lines.append(f"language: --lang {self.opts.lang} kept {s.kept} of {total} documents, "
                         f"dropped {s.dropped} ({share:.1f}%)")
        if total:
            top = s.detected.most_common(8)
            mix = " ".join(f"{lang}={n}" for lang, n in top)
            lines.append(f"language: detected {mix}{' ...' if len(s.detected) > len(top) else ''}")
        return lines

    def deleted_line(self) -> str:
        """What the run deleted after uploading it (the default), and how to keep it; "" when nothing."""
        if not self.stats.deleted:
            return ""
        return (f"{self.command}: deleted {self.stats.deleted} local file(s) after upload; "
                "--keep keeps them")

    def summary_line(self) -> str:
        """The final line of a run."""
        from ccrawl.output import format_size

        s = self.stats
        noun = "parts" if self.opts.locations is not None else "shards"
        head = (f"markdown export: {s.written} of {s.units} {noun} written, {s.already} already done, "
                f"{s.failed} failed; {s.rows:,} rows, {format_size(s.bytes)} Parquet")
        if self.opts.push:
            head += f"; {s.committed} committed in {s.commits} commit(s), {s.existing} already on the hub"
        else:
            head += f" under {self.opts.out}"
        extra = [f"{s.duplicates} duplicate digests skipped"] if self.opts.dedup_digest else []
        if s.unfetchable:
            extra.append(f"{s.unfetchable} locations unfetchable")
        if s.errors or s.bad_records:
            extra.append(f"{s.errors} pages and {s.bad_records} records skipped on errors")
        return head + (f" ({', '.join(extra)})" if extra else "") + f" in {s.seconds:.1f}s"


class UnitBuilder(Exporter):
    """Only the per-unit build of an :class:`Exporter` (``_build``), without its ledger, journal or repo.

    An ``--executor ray`` task builds its unit with it (:func:`build_in_task`): the same code a local run
    runs per unit, while the driver keeps the ledger, the commits and the journal.
    """

    def __init__(self, opts: ExportOptions, label: str, log: Callable[[str], None]) -> None:
        self.opts = opts
        self.label = label
        self.log = log
        self.info = log


def build_in_task(opts: ExportOptions, label: str, unit: Unit) -> Built:
    """The body of one ``--executor ray`` task: build ``unit`` in this worker, converting in-process."""
    from ccrawl.scale.rayexec import task_log

    with Converter(opts.extractor, 1) as converter:
        return UnitBuilder(opts, label, task_log)._build(unit, converter)


def open_export_repo(repo_id: str, *, endpoint: str = "", token: str | None = None) -> DatasetRepo:
    """The dataset repo a pushing run writes to (``$CCRAWL_HUB`` for a local hub, else the Hub).

    A push to the Hub without ``HF_TOKEN``/``HUGGINGFACE_TOKEN`` is exit 4 before anything is read.
    """
    from ccrawl.hub.factory import open_publish_repo

    try:
        return open_publish_repo(repo_id, endpoint=endpoint, token=token)
    except CredentialMissing:
        raise CredentialMissing("pushing to the Hub needs a token: export HF_TOKEN=hf_... (or HUGGINGFACE_TOKEN), "
                                "or pass --push=false to build locally") from None
