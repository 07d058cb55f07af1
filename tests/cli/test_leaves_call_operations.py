"""Every CLI leaf reaches its work through an operation of the registry (issue #38: one door).

A leaf is click declarations plus a call into :mod:`ccrawl.ops`; the few that are the front ends
themselves, or describe this installation, are listed here by name and nothing else may join them
silently. A leaf counts as calling an operation when its body (or a helper of its own module it
calls) names ``ops.get(...)``, imports from ``ccrawl.ops``, or calls a name its module bound to
something defined under ``ccrawl.ops``.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import click

from ccrawl.cli.main import COMMANDS, cli

#: leaves that are not an operation by design: the servers over the registry, and the installation's facts
WITHOUT_OPERATION = {"version", "config show", "serve", "mcp", "api"}


def _leaves() -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: str, ctx: click.Context) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                walk(sub, f"{path} {name}".strip(), click.Context(sub, parent=ctx, info_name=name))
        else:
            out[path] = cmd

    root = click.Context(cli, info_name="ccrawl")
    for name in sorted(COMMANDS):
        sub = cli.get_command(root, name)
        assert sub is not None
        walk(sub, name, click.Context(sub, parent=root, info_name=name))
    return out


def _from_ops(value: Any) -> bool:
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", "") or ""
    return name == "ccrawl.ops" or name.startswith("ccrawl.ops.")


def _reaches_operation(func: Callable[..., Any], depth: int = 3, seen: set[Any] | None = None) -> bool:
    seen = seen if seen is not None else set()
    if func in seen or depth < 0:
        return False
    seen.add(func)
    src = inspect.getsource(func)
    if re.search(r"\bops\.get\(|from ccrawl\.ops\b|\bccrawl\.ops\.", src):
        return True
    module = sys.modules[func.__module__]
    for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*[.(]", src)):
        value = getattr(module, name, None)
        if value is None:
            continue
        if _from_ops(value):
            return True
        if inspect.isfunction(value) and value.__module__ == func.__module__ and _reaches_operation(value, depth - 1,
                                                                                                      seen):
            return True
    return False


def test_every_leaf_calls_an_operation() -> None:
    leaves = _leaves()
    assert len(leaves) >= 69
    without = sorted(path for path, cmd in leaves.items()
                     if not _reaches_operation(getattr(cmd.callback, "__wrapped__", cmd.callback)))
    assert set(without) <= WITHOUT_OPERATION, (
        f"CLI leaves with no operation behind them: {sorted(set(without) - WITHOUT_OPERATION)} "
        "(give each an operation in ccrawl/ops and call it; see issue #38)")


def test_the_check_tells_a_leaf_without_an_operation() -> None:
    def leaf(run: Any) -> None:
        print(run)

    assert not _reaches_operation(leaf)
    assert _reaches_operation(_calls_one)


def _calls_one(run: Any) -> None:
    from ccrawl import ops

    run.emit(ops.get("url.surt")(urls=["a.test"]))


#: helpers a CLI leaf once called instead of its operation (issue #38), and the operation that replaced each
BYPASSES = {
    "run_batch": "url.batch (url --from)",
    "iter_results": "url.batch (url --from)",
    "dry_run_line": "cc.fetch_plan (fetch --batch --dry-run)",
}


def test_no_leaf_calls_the_helpers_its_operation_wraps() -> None:
    from pathlib import Path

    cli_dir = Path(__file__).resolve().parents[2] / "ccrawl" / "cli"
    found = sorted(f"{path.name}: {name} (use {op})" for path in cli_dir.glob("*.py")
                   for name, op in BYPASSES.items()
                   if re.search(rf"\b{name}\b", path.read_text(encoding="utf-8")))
    assert found == []


def test_url_from_and_fetch_dry_run_are_operations() -> None:
    from ccrawl import ops

    batch = ops.get("url.batch")
    assert batch.batch_func is not None
    assert {"command", "source", "column", "skip_bad"} <= {p.name for p in batch.params}
    assert ops.get("cc.fetch_plan").columns == ("plan",)


#: parameter types that are option bags (or records of anything) rather than typed values
_BAG = re.compile(r"\b(?:dict|Mapping|MutableMapping)\[str, *(?:typing\.)?Any\]")


def test_no_operation_takes_a_bag_of_anything() -> None:
    """No ``@operation`` parameter is a ``dict[str, Any]`` / ``Mapping[str, Any]`` (issue #38: typed options, not
    bags); records a client sends are ``Mapping[str, object]``, read with isinstance."""
    from ccrawl import ops

    bags = sorted(f"{name}.{p.name}: {p.annotation}" for name, op in ops.load_all().items() for p in op.params
                  if _BAG.search(p.annotation))
    assert bags == []


def test_the_degree_count_takes_typed_client_options() -> None:
    """``ops.webgraph`` hands the degree count a :class:`ClientOptions`, not a dict of keywords."""
    import typing

    from ccrawl.net.options import ClientOptions
    from ccrawl.ops import webgraph

    for helper in (webgraph._count_degrees, webgraph._add_degrees):
        hints = typing.get_type_hints(helper, vars(webgraph) | {"GraphRelease": object, "EdgeCount": object})
        assert hints["client"] is ClientOptions, helper.__name__
        assert "options" not in hints, helper.__name__
