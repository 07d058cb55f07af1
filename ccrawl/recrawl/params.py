"""Every knob of ``recrawl run`` as one validated dataclass, with the defaults and their reasons.

The CLI passes its flags straight through as keywords of :func:`ccrawl.recrawl.run_recrawl`,
which builds a :class:`RunParams`; so every limit the CLI honours is a keyword of the library.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ccrawl.errors import UsageError
from ccrawl.procs import cores

FORMATS = ("parquet", "warc")
PROGRESS = ("text", "json", "none")
MB = 1024 * 1024


@dataclass(slots=True)
class RunParams:
    """One recrawl run. Times are seconds, sizes bytes unless the name says MB."""

    source: str
    """``--from``: a local directory of parts, ``domains``, ``urls`` or a dataset repo id."""
    release: str | None = None
    column: str | None = None
    hub: str | None = None
    """Where a repo-id ``source`` lives: None/``"hf"`` the HuggingFace Hub, or a local hub directory."""
    hub_endpoint: str | None = None
    """HuggingFace endpoint (a fake Hub in tests); None means ``HF_ENDPOINT`` or huggingface.co."""
    out: str | None = None
    """Directory for the output files; None or '' fetches without archiving."""
    format: str = "parquet"
    state: str | None = None
    """``--state``: the checkpoint file. None with ``--out`` means :func:`default_state_path` (a rerun of
    the same command resumes, as with wget -c); None without ``--out`` keeps no checkpoint."""
    delay: float = 1.0
    max_pages: int = 0
    robots: bool = False
    no_extract: bool = False
    extractor: str = "h2m"
    extractors: int | None = None
    """Extract processes; default from the core count and the stages' costs (see docs/recrawl.md)."""
    shard_size: int = 512 * MB
    prefix: str = "ccrawl"
    writers: int | None = None
    """Writer processes; default from the core count and the stages' costs (see docs/recrawl.md)."""
    fetch_writes: bool | None = None
    """Fetch processes write their own Parquet rows (no writer processes, no rings). None: yes for a
    fetch-only Parquet run with ``--out`` and no ``--writers`` (docs/recrawl.md, "Who writes what")."""
    batch: int = 2000
    queue_mb: float = 128.0
    shard: int = 0
    shards: int = 1
    workers: int = 256
    fetchers: int | None = None
    """Fetch processes; default from the core count and the stages' costs (see docs/recrawl.md)."""
    dns_lookups: int | None = None
    robots_timeout: float = 10.0
    timeout: float = 30.0
    max_body: int = 10 * MB
    max_redirects: int = 5
    """Redirect hops followed per fetch; a longer chain is a failed row (``error_detail`` says so)."""
    previous: str | None = None
    progress: str = "none"
    journal: str | None = None
    metrics_addr: str | None = None
    resolve: Mapping[str, str] | Sequence[str] | str = field(default_factory=dict)
    """Resolver override for the fetch processes (tests point ``*.test`` at loopback): a dict
    ``{"*.test": "127.0.0.1"}``, the CLI's list ``["*.test=127.0.0.1"]`` or one such string; a dict once built."""
    nameservers: tuple[str, ...] = ()
    user_agent: str | None = None
    verify_tls: bool = True
    allow_private_addresses: bool = False
    """Fetch loopback/private/link-local/unspecified addresses too (see :mod:`ccrawl.fetch.addresses`)."""
    profile_dir: str | None = None
    """Write a CPU profile (py-spy, pprof) and a heap profile (memray) per process here."""
    profile_name: str = "recrawl"
    """File name stem of the profiles, so two runs can be told apart and diffed."""
    tick_seconds: float = 2.0
    """Seconds between progress ticks (the live line, ``--progress json``, the journal, the gauges)."""
    waiting_after: float = 10.0
    """``--waiting-after``: when no counter (done, fetched, rendered, written) has moved this long, the
    ticks name which stage waits on what (``waiting``); a run is not failed for it (see ``stall_timeout``)."""
    start_timeout: float = 30.0
    """``--start-timeout``: a pipeline process that has not reported ready this long after its start
    is named and the run fails (exit 75)."""
    stall_timeout: float = 60.0
    """``--stall-timeout``: a pipeline process that has sent nothing (it reports every second) this
    long before its work is done is named and the run fails (exit 75) after its checkpoint."""
    command_line: str = ""
    handle_signals: bool = True

    def __post_init__(self) -> None:
        # complete once built: a RunParams never carries None for a count the run needs
        self.validate()

    def validate(self) -> RunParams:
        """Raise :class:`UsageError` naming the flag when a value cannot work; fill the defaults.

        Called on construction (so a built RunParams is complete) and idempotent."""
        if self.format not in FORMATS:
            raise UsageError(f"--format must be one of {', '.join(FORMATS)} (got {self.format!r})")
        if self.progress not in PROGRESS:
            raise UsageError(f"--progress must be one of {', '.join(PROGRESS)} (got {self.progress!r})")
        if self.shards < 1:
            raise UsageError(f"--shards must be at least 1 (got {self.shards})")
        if not 0 <= self.shard < self.shards:
            raise UsageError(f"--shard must be in 0..{self.shards - 1} for --shards {self.shards} (got {self.shard})")
        checks = [
            (self.workers >= 1, "--workers must be at least 1"),
            (self.writers is None or self.writers >= 1, "--writers must be at least 1"),
            (self.batch >= 1, "--batch must be at least 1"),
            (self.max_pages >= 0, "--max-pages must be >= 0 (0 = no limit)"),
            (self.delay >= 0, "--delay must be >= 0 (0 = no spacing)"),
            (self.queue_mb > 0, "--queue-mb must be > 0"),
            (self.shard_size > 0, "--shard-size must be > 0"),
            (self.timeout > 0, "--timeout must be > 0"),
            (self.robots_timeout > 0, "--robots-timeout must be > 0"),
            (self.start_timeout > 0, "--start-timeout must be > 0"),
            (self.stall_timeout > 0, "--stall-timeout must be > 0"),
            (self.waiting_after > 0, "--waiting-after must be > 0"),
            (self.tick_seconds > 0, "tick_seconds must be > 0"),
            (self.max_body > 0, "max_body must be > 0"),
            (self.max_redirects >= 0, "--max-redirects must be >= 0 (0 = do not follow redirects)"),
            (self.extractors is None or self.extractors >= 1, "--extractors must be at least 1"),
            (self.fetchers is None or self.fetchers >= 1, "--fetchers must be at least 1"),
            (self.dns_lookups is None or self.dns_lookups >= 1, "--dns-lookups must be at least 1"),
            (bool(self.prefix) and "/" not in self.prefix, "--prefix must be a non-empty file name prefix"),
        ]
        for ok, message in checks:
            if not ok:
                raise UsageError(message)
        from ccrawl.fetch.config import check_user_agent, resolve_table

        if self.user_agent is not None:
            check_user_agent(self.user_agent)
        self.resolve = resolve_table(self.resolve)
        _check_paths(self)
        from ccrawl.recrawl.sizing import stage_processes  # the counts from the machine: docs/recrawl.md

        if self.fetch_writes is None:  # decided once, before --writers is filled in
            self.fetch_writes = (self.format == "parquet" and self.no_extract and bool(self.out)
                                 and self.writers is None)
        elif self.fetch_writes and (self.format != "parquet" or not self.no_extract or not self.out):
            raise UsageError("fetch_writes needs a fetch-only Parquet run with an output directory "
                             "(--no-extract, --format parquet, --out)")
        auto_f, auto_x, auto_w = stage_processes(cores(), self.workers, extracting=self.extracting,
                                                 warc=self.format == "warc", fetch_writes=self.fetch_writes)
        self.fetchers = min(self.fetchers or auto_f, self.workers)
        self.extractors = max(1, min(self.extractors or auto_x or 1, self.workers))
        # a fetch process that writes its own rows is its own writer: one writer per fetch process
        self.writers = self.fetchers if self.fetch_writes else (self.writers or auto_w)
        if self.dns_lookups is None:
            from ccrawl.fetch import default_dns_lookups

            self.dns_lookups = default_dns_lookups(self.workers)
        return self

    @property
    def extracting(self) -> bool:
        """A run renders pages only when it writes Parquet and was not told ``--no-extract``."""
        return self.format == "parquet" and not self.no_extract

    @property
    def archiving(self) -> bool:
        return bool(self.out)


#: The checkpoint kept in ``--out`` when no ``--state`` is given.
DEFAULT_STATE_NAME = ".ccrawl-state.json"


def default_state_path(out: str, shard: int = 0, shards: int = 1) -> str:
    """``<out>/.ccrawl-state.json``, or ``<out>/.ccrawl-state-s<i>of<n>.json`` for one of several shards
    (shards sharing one ``--out`` run one after another and each keeps its own checkpoint)."""
    name = DEFAULT_STATE_NAME if shards == 1 else f".ccrawl-state-s{shard}of{shards}.json"
    return os.path.join(out, name)


def _check_paths(params: RunParams) -> None:
    """``--state`` and ``--journal`` name files in directories that exist (``--out`` is made, then locked)."""
    for flag, value in (("--state", params.state), ("--journal", params.journal)):
        if not value:
            continue
        if os.path.isdir(value):
            raise UsageError(f"{flag} {value} is a directory: name a file")
        parent = os.path.dirname(os.path.abspath(value))
        if not os.path.isdir(parent):
            raise UsageError(f"{flag} {value}: the directory {parent} does not exist; create it first")
        if not os.access(parent, os.W_OK):
            raise UsageError(f"{flag} {value}: the directory {parent} is not writable")
