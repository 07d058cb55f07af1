"""Every command's flags, as ``--help`` lists them, against a snapshot taken from the code (issue #38).

The CLI is being rebuilt over the operations (options generated from an operation's typed
parameters); this test makes sure no flag drifts or vanishes on the way: every leaf's options
(their spellings, type, whether a flag or repeatable, required, default) and arguments are
compared with ``help_flags.json``. A deliberate change regenerates it::

    CCRAWL_UPDATE_HELP_FLAGS=1 python3 -m pytest tests/cli/test_help_flags.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from ccrawl.cli.common import GLOBAL_NAMES, GlobalOption
from ccrawl.cli.main import COMMANDS, cli

SNAPSHOT = Path(__file__).with_name("help_flags.json")


def _default(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_default(v) for v in value]
    if repr(value) == "Sentinel.UNSET":  # click's "no default"
        return None
    return repr(value) if not callable(value) else "<callable>"


def _param(p: click.Parameter) -> str:
    """One line per parameter, so the snapshot stays small and its diffs readable."""
    f = _param_fields(p)
    text = f"{f.pop('kind')} {f.pop('name')}: {' '.join(f.pop('decls'))} <{f.pop('type')}>"
    shown = {k: v for k, v in sorted(f.items()) if v not in (False, None) and (k, v) != ("nargs", 1)}
    return text + "".join(f" {k}={json.dumps(v)}" for k, v in shown.items())


def _params(cmd: click.Command, shared: dict[str, str]) -> dict[str, Any]:
    """A command's own parameters in full; the global flags it takes by name (described once)."""
    own, glob = [], []
    for p in cmd.params:
        if isinstance(p, GlobalOption):
            assert p.name is not None
            line = _param(p)
            assert shared.setdefault(p.name, line) == line, f"global flag {p.name} differs between commands"
            glob.append(p.name)
        else:
            own.append(_param(p))
    missing = sorted(set(GLOBAL_NAMES) - set(glob))
    return {"params": own, "global": "all" if not missing else "all but " + ", ".join(missing)}


def _param_fields(p: click.Parameter) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, "kind": "option" if isinstance(p, click.Option) else "argument",
                           "decls": sorted([*p.opts, *p.secondary_opts]), "type": p.type.name,
                           "required": p.required, "nargs": p.nargs, "multiple": p.multiple,
                           "default": _default(p.default)}
    if isinstance(p, click.Option):
        out["is_flag"] = p.is_flag
        out["count"] = p.count
        out["hidden"] = p.hidden
        if isinstance(p.type, click.Choice):
            out["choices"] = list(p.type.choices)
    return out


def _walk(cmd: click.Command, path: str, ctx: click.Context, out: dict[str, Any], shared: dict[str, str]) -> None:
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, f"{path} {name}"
            _walk(sub, f"{path} {name}", click.Context(sub, parent=ctx, info_name=name), out, shared)
        out[path] = {"group": True, **_params(cmd, shared)}
        return
    out[path] = _params(cmd, shared)


def flag_sets() -> dict[str, Any]:
    out: dict[str, Any] = {}
    shared: dict[str, str] = {}
    ctx = click.Context(cli, info_name="ccrawl")
    for name in sorted(COMMANDS):
        sub = cli.get_command(ctx, name)
        assert sub is not None, name
        _walk(sub, f"ccrawl {name}", click.Context(sub, parent=ctx, info_name=name), out, shared)
    out["(global flags)"] = dict(sorted(shared.items()))
    return dict(sorted(out.items()))


def test_every_command_keeps_its_flags() -> None:
    now = flag_sets()
    if os.environ.get("CCRAWL_UPDATE_HELP_FLAGS"):
        SNAPSHOT.write_text(json.dumps(now, indent=1) + "\n")
    before = json.loads(SNAPSHOT.read_text())
    assert sorted(now) == sorted(before), "commands appeared or vanished"
    for path, want in before.items():
        got = json.loads(json.dumps(now[path]))
        assert got == want, f"{path}: its flags changed"


def test_snapshot_covers_the_leaves_and_their_shared_flags() -> None:
    before = json.loads(SNAPSHOT.read_text())
    leaves = [p for p, v in before.items() if not v.get("group")]
    assert len(leaves) >= 69
    assert before["ccrawl stats"]["global"] == "all"
    assert "--crawl -c" in before["(global flags)"]["crawl"]
