"""Stub for the compiled range planner (twin: ccrawl.net.ranges.plan_groups_py)."""

from collections.abc import Iterable, Sequence
from typing import Any

from ccrawl.net.ranges import Group

def plan_groups(locations: Iterable[Sequence[Any]], gap: int = ..., max_span: int = ...) -> list[Group]: ...
