"""``cc.fetch_plan``: what ``fetch --batch --dry-run`` prints, as an operation (nothing is fetched).

The grouping of WARC record locations into coalesced ranged reads, summed into one line: locations,
requests, bytes read and saved. ``fetch --dry-run`` calls it, as ``fetch`` calls ``cc.fetch``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Injected, Limit, ReadPath, Value
from ccrawl.ops.context import OpContext, context


@operation("cc.fetch_plan", summary="How fetch --batch would group WARC record locations into ranged reads; "
           "nothing is fetched", columns=("plan",))
def cc_fetch_plan(
    locations: Value[Iterable[Mapping[str, object]]],
    gap: Limit[int] = 1 << 20,
    max_span: Limit[int] = 16 << 20,
    ledger: ReadPath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record: ``plan``, the line ``fetch --batch --dry-run`` prints (locations already in ``ledger`` left
    out); a location that cannot be read is named to the context's notice and skipped."""
    from ccrawl.ops.commoncrawl import dry_run_line

    yield {"plan": dry_run_line(locations, gap=gap, max_span=max_span, ledger=ledger, notice=context(ctx).notice)}
