"""The operation registry: typed parameters read off the signature, one name per operation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import pytest

from ccrawl import ops
from ccrawl.ops.caps import Bounds, Cap, Value


def test_operation_records_params_columns_and_writes() -> None:
    @ops.operation("test.echo", summary="echo", columns=("value",), writes=True)
    def echo(value: Value[str], times: Annotated[int, Cap.VALUE, Bounds(0, 9)] = 2) -> Iterator[dict[str, str]]:
        for _ in range(times):
            yield {"value": value}

    op = ops.REGISTRY["test.echo"]
    assert op.writes and op.columns == ("value",)
    assert [(p.name, p.annotation, p.required, p.default) for p in op.params] == [
        ("value", "str", True, None),
        ("times", "int", False, 2),
    ]
    assert [p.cap for p in op.params] == [Cap.VALUE, Cap.VALUE] and op.params[1].bounds == Bounds(0, 9)
    assert list(op(value="x", times=3)) == [{"value": "x"}] * 3
    del ops.REGISTRY["test.echo"]


def test_registering_another_function_under_a_taken_name_is_refused() -> None:
    @ops.operation("test.dup", summary="one")
    def one() -> Iterator[dict[str, str]]:
        yield {}

    with pytest.raises(ValueError, match="registered twice"):

        @ops.operation("test.dup", summary="two")
        def two() -> Iterator[dict[str, str]]:
            yield {}

    del ops.REGISTRY["test.dup"]


def test_get_names_the_known_operations_when_missing() -> None:
    with pytest.raises(KeyError, match=r"known: .*version"):
        ops.get("no.such.op")


def test_meta_operations_are_registered() -> None:
    registry = ops.load_all()
    assert {"version", "native", "cache.show", "cache.clear"} <= set(registry)
    assert registry["cache.clear"].writes and not registry["cache.show"].writes


def test_the_homes_index_names_the_module_of_every_operation() -> None:
    from ccrawl.ops.homes import HOMES

    registry = ops.load_all()
    actual = {
        name: (op.batch_func or op.func).__module__.rsplit(".", 1)[1]
        for name, op in registry.items()
        if (op.batch_func or op.func).__module__.startswith("ccrawl.ops.")
    }
    missing = [f'    "{name}": "{home}",' for name, home in sorted(actual.items()) if HOMES.get(name) != home]
    assert not missing, "add to ccrawl/ops/homes.py:\n" + "\n".join(missing)
    assert set(HOMES) <= set(actual), f"operations that no longer exist: {sorted(set(HOMES) - set(actual))}"


@pytest.mark.parametrize(
    "name", ["cc.search", "host.degrees", "rank.domain", "sched.assign", "urls.publish", "warc.parse"]
)
def test_get_imports_only_the_operations_home_module(name: str) -> None:
    """A name whose prefix is no module (``cc.search`` lives in ``ops/search.py``) must not import every module."""
    import subprocess
    import sys

    from ccrawl.ops.homes import HOMES

    code = (
        "import sys\nfrom ccrawl import ops\n"
        f"ops.get({name!r})\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('ccrawl.ops.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    operation_modules = set(out) - {"ccrawl.ops.caps", "ccrawl.ops.context", "ccrawl.ops.homes"}
    assert f"ccrawl.ops.{HOMES[name]}" in operation_modules
    assert len(operation_modules) <= 3, f"get({name!r}) imported {sorted(operation_modules)}"
