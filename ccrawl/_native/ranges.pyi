"""Stub for the compiled range planner (twin: ccrawl.net.ranges.plan_groups_py)."""

from collections.abc import Iterable

from ccrawl.net.ranges import Group

def plan_groups(locations: Iterable[tuple[str, int, int]], gap: int = ..., max_span: int = ...) -> list[Group]: ...
