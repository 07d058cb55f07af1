"""CLI options generated from an operation's parameters (``ccrawl.cli.common.op_option``, issue #38):
the flag's default is the operation's, read off the registry, so the two cannot drift apart."""

from __future__ import annotations

import click
import pytest

from ccrawl import ops
from ccrawl.cli.common import op_option
from ccrawl.cli.main import cli

#: command path -> (operation, the parameters whose flags are generated from it)
GENERATED = {
    ("crawl", "seed"): ("crawl.seed", ("max_seeds", "max_tier")),
    ("crawl", "run"): ("crawl.run", ("max_pages", "same_host", "robots", "prefix", "workers", "host_budget",
                                     "domain_budget")),
    ("index", "build"): ("index.build", ("workers", "heap_mb")),
}


def _leaf(path: tuple[str, ...]) -> click.Command:
    ctx = click.Context(cli, info_name="ccrawl")
    cmd: click.Command | None = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(ctx, name)
        assert cmd is not None
        ctx = click.Context(cmd, parent=ctx, info_name=name)
    return cmd


@pytest.mark.parametrize("path", sorted(GENERATED))
def test_a_generated_flag_has_its_operations_default(path: tuple[str, ...]) -> None:
    op_name, names = GENERATED[path]
    defaults = {p.name: p.default for p in ops.get(op_name).params}
    options = {p.name: p for p in _leaf(path).params if isinstance(p, click.Option)}
    for name in names:
        assert options[name].default == defaults[name], f"{' '.join(path)} --{name}"


def test_a_generated_option_takes_no_default_of_its_own_and_names_a_real_parameter() -> None:
    with pytest.raises(TypeError, match="the default is the operation's"):
        op_option("crawl.seed", "max_tier", default=3)
    with pytest.raises(TypeError, match="no parameter 'nope'"):
        op_option("crawl.seed", "nope")
    option = op_option("index.build", "heap_mb", type=int)

    @option
    def f(heap_mb: int) -> None:
        pass

    params = vars(f)["__click_params__"]
    assert params[0].opts == ["--heap-mb"] and params[0].default == 128
