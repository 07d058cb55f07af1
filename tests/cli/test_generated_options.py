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


def test_every_generated_option_names_a_parameter_of_an_operation_its_leaf_calls() -> None:
    """An ``op_option`` flag is generated from a parameter of the very operations its leaf calls (the filter flags
    come from ``columnar.urls`` and serve every columnar query and ``db load``, whose parameters match by name;
    ``columnar sql`` prints the SQL they make without running an operation), with that parameter's default."""
    from ccrawl.cli.common import OpOption
    from tests.cli.test_flags_match_operations import _func_of, operations_of
    from tests.cli.test_leaves_call_operations import _leaves

    count, wrong = 0, []
    for path, cmd in _leaves().items():
        called = operations_of(_func_of(cmd))
        for option in (p for p in cmd.params if isinstance(p, OpOption)):
            count += 1
            assert option.operation is not None, f"{path} --{option.name}"
            source, param = option.operation
            theirs = [p for name in called for p in ops.get(name).params if p.name == param]
            if not called:  # columnar sql prints the query the filter flags make: no operation runs
                continue
            if not theirs:
                wrong.append(f"{path} --{option.name}: from {source}, which {path} does not call")
            elif any(p.default != ops.get(source).params[[q.name for q in ops.get(source).params].index(param)]
                     .default for p in theirs):
                wrong.append(f"{path} --{option.name}: {source}'s default differs from the called operation's")
    assert wrong == []
    assert count >= 300
