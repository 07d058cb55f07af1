"""Default process counts from the machine: cores split across the stages by their cost per page.

Each stage's CPU time per page was measured on real-size pages (the shared html-eval corpus, mean
~145 KB, served by nginx on loopback; ``python -m bench.bench_recrawl --corpus ...``, the
``stage CPU`` figure of the run summary). A stage's share of the cores is its share of the summed
cost, rounded up (a process uses at most one core), and at least one process:

    n_stage = max(1, ceil(cores x cost_stage / (sum of the run's stages' costs + the parent's) - 0.3))

so a run with default flags keeps every core busy in proportion to the work there is, and the
stage that costs most (rendering, in a full run) gets most processes. Fetch processes are also
capped by ``--workers`` (each holds a share of the slots). The measured costs and the rule are
written out in docs/recrawl.md; the run summary's ``ceiling`` line says which stage held a run back.
"""

from __future__ import annotations

import math

#: CPU milliseconds per page of each stage on real-size pages (see the module docstring and
#: docs/recrawl.md): fetch = aiohttp + SHA-1 + building the row; extract = decode + h2m render +
#: simhash + language; write = columnar buffer + zstd Parquet; write_warc = gzip per record and two
#: SHA-1 digests; feed = the parent (work-list reading, routing, the checkpoint tracker), always one
#: process, counted so the other stages' shares are of what it leaves.
STAGE_COST_MS: dict[str, float] = {"fetch": 0.65, "extract": 2.1, "write": 0.32, "write_warc": 3.8, "feed": 0.05}


#: A stage gets a second (third, ...) process only when its share passes one (two, ...) core by
#: this much: the other stages' processes and the parent compete for the same cores, so a
#: process for a third of a core does not pay. Measured on 2 cores, fetch-only, real pages: the
#: fetch stage's share is 1.27 cores, and 1 fetch process ran 319 and 502 pages/s where 2 ran 295
#: and 391 (interleaved, bench/README.md).
SLACK = 0.3


def _processes(share_of_cores: float) -> int:
    # enough processes to take the stage's share of the cores (a process uses at most one)
    return max(1, math.ceil(share_of_cores - SLACK))


def stage_processes(cores: int, workers: int, *, extracting: bool, warc: bool = False,
                    costs: dict[str, float] | None = None, fetch_writes: bool = False) -> tuple[int, int, int]:
    """(fetch processes, extract processes, writer processes) for ``cores`` CPUs.

    ``extract`` is 0 when the run does not render (``--no-extract`` or WARC). With
    ``fetch_writes`` (a fetch-only Parquet run whose fetch processes write their own rows) the
    fetch and write costs are one stage, and the writers are the fetch processes themselves.
    """
    c = costs or STAGE_COST_MS
    if fetch_writes:
        # One stage of cost fetch + write: the event loop fetches and builds rows, a helper thread
        # compresses and writes the row groups. The thread does not buy a process a second core in
        # practice (on 2 cores, 15,000 real pages, a quiet machine: 1 process used 0.86 of a core
        # at 1,248 pages/s, 2 processes ran 1,375), so the stage's share is counted as for any other.
        share = cores * (c["fetch"] + c["write"]) / (c["fetch"] + c["write"] + c.get("feed", 0.0))
        fetchers = max(1, min(_processes(share), workers, max(1, math.ceil(workers / 16))))
        return fetchers, 0, fetchers
    stages = {"fetch": c["fetch"], "write": c["write_warc"] if warc else c["write"]}
    if extracting:
        stages["extract"] = c["extract"]
    total = sum(stages.values()) + c.get("feed", 0.0)
    n = {k: _processes(cores * v / total) for k, v in stages.items()}
    fetchers = max(1, min(n["fetch"], workers, max(1, math.ceil(workers / 16))))
    return fetchers, n.get("extract", 0), n["write"]
