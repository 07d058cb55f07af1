"""Every operation parameter says who may set it, and no client can set a path, an endpoint, an
address allowance or a resource limit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest

from ccrawl import ops
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Limit, ReadPath, Value
from ccrawl.serve.binding import BindError, Policy, bind, fields_of

NEVER_A_CLIENTS = {Cap.ENDPOINT, Cap.NETWORK, Cap.LIMIT, Cap.INJECTED}
#: names that, whatever an operation calls them, are never plain values
SUSPECT = {"out", "dir", "path", "paths", "file", "files", "db", "root", "ledger", "state", "staging", "journal",
           "endpoint", "hub", "hub_endpoint", "resolve", "token", "max_body", "timeout", "workers", "jobs",
           "concurrency", "user_agent", "verify_tls", "allow_private_addresses", "cache_dir", "local", "table",
           "added_out", "warc_dir", "out_dir", "input", "previous", "hosts_file", "domains_file", "trusted"}


def test_every_parameter_of_every_operation_declares_its_class() -> None:
    registry = ops.load_all()
    assert len(registry) > 60
    missing = [f"{name}.{p.name}" for name, op in registry.items() for p in op.params if ops.undeclared(p)]
    assert missing == []


#: (operation, parameter) with a suspect name that really is plain data, and why
VALUES_BY_NAME = {
    ("cc.download", "paths"): "Common Crawl bucket keys, joined to the operator's data endpoint",
    ("news.list", "files"): "a count of files",
    ("news.download", "files"): "a count of files",
    ("news.publish", "files"): "a count of files",
    ("db.load", "table"): "a table name, checked against [A-Za-z_][A-Za-z0-9_]*",
}


def test_no_path_endpoint_allowance_or_limit_is_settable_by_a_client() -> None:
    registry = ops.load_all()
    for name, op in registry.items():
        for f in fields_of(op, Policy(allow_writes=True)) or ():
            assert f.cap in (Cap.VALUE, Cap.SQL), f"{name}.{f.name} is {f.cap} and settable"


def test_suspect_names_carry_a_class_that_is_not_a_plain_value() -> None:
    registry = ops.load_all()
    plain = sorted(f"{name}.{p.name}" for name, op in registry.items() for p in op.params
                   if p.name in SUSPECT and p.cap in (Cap.VALUE, Cap.SQL) and (name, p.name) not in VALUES_BY_NAME)
    assert plain == []


def test_sql_is_a_client_value_only_where_it_runs_sandboxed() -> None:
    registry = ops.load_all()
    sql_ops = {name for name, op in registry.items() for p in op.params if p.cap is Cap.SQL}
    assert sql_ops == {"db.sql", "columnar.query"}
    for name in sql_ops:
        trusted = next(p for p in registry[name].params if p.name == "trusted")
        assert trusted.cap is Cap.INJECTED and trusted.default is False


def test_a_client_number_is_bounded_and_its_default_inside_its_bounds() -> None:
    for name, op in ops.load_all().items():
        for p in op.params:
            if p.cap is Cap.VALUE and p.annotation.removesuffix(" | None") in ("int", "float"):
                assert p.bounds is not None, f"{name}.{p.name}"
                if isinstance(p.default, int | float) and not isinstance(p.default, bool):
                    assert p.bounds.check(p.default) is None, f"{name}.{p.name} default {p.default}"


def test_registering_an_operation_with_an_undeclared_parameter_is_refused() -> None:
    with pytest.raises(TypeError, match=r"'out' declares no capability class"):
        @ops.operation("test.undeclared", summary="x")
        def undeclared(url: Value[str], out: str = "x") -> Iterator[dict[str, str]]:
            yield {}

    with pytest.raises(TypeError, match=r"'n' is a number a client sets: declare its Bounds"):
        @ops.operation("test.unbounded", summary="x")
        def unbounded(n: Value[int] = 3) -> Iterator[dict[str, str]]:
            yield {}

    with pytest.raises(TypeError, match="outside its own bounds"):
        @ops.operation("test.outside", summary="x")
        def outside(n: Annotated[int, Cap.VALUE, Bounds(1, 5)] = 9) -> Iterator[dict[str, str]]:
            yield {}

    assert not {"test.undeclared", "test.unbounded", "test.outside"} & set(ops.REGISTRY)


@pytest.fixture()
def probe() -> Iterator[ops.Operation]:
    @ops.operation("test.probe", summary="every class once")
    def probe_op(
        url: Value[str],
        n: Annotated[int, Cap.VALUE, Bounds(1, 10)] = 1,
        src: ReadPath[str | None] = None,
        endpoint: Endpoint[str] = "",
        timeout: Limit[float] = 1.0,
    ) -> Iterator[dict[str, str]]:
        yield {}

    yield ops.REGISTRY["test.probe"]
    del ops.REGISTRY["test.probe"]


def test_binding_refuses_configuration_bounds_and_escapes(probe: ops.Operation, tmp_path: Path) -> None:
    with pytest.raises(BindError, match="server's configuration") as caught:
        bind(probe, {"url": "u", "endpoint": "http://127.0.0.1/"})
    assert caught.value.param == "endpoint"
    with pytest.raises(BindError, match="server's configuration"):
        bind(probe, {"url": "u", "timeout": 1e9})
    with pytest.raises(BindError, match="at most 10"):
        bind(probe, {"url": "u", "n": 11})
    with pytest.raises(BindError, match="--root DIR"):
        bind(probe, {"url": "u", "src": "/etc/passwd"})
    with pytest.raises(BindError, match="longer than"):
        bind(probe, {"url": "x" * 70_000})
    root = tmp_path / "root"
    root.mkdir()
    (root / "in.txt").write_text("x")
    (root / "link").symlink_to("/etc")
    policy = Policy(root=root.resolve())
    assert bind(probe, {"url": "u", "src": "in.txt"}, policy=policy)["src"] == str((root / "in.txt").resolve())
    for bad in ("../x", "/etc/passwd", "link/passwd", "in.txt/../../x", "a\x00b", "x" * 300, "a/" * 3000):
        with pytest.raises(BindError):
            bind(probe, {"url": "u", "src": bad}, policy=policy)
    # the server's configuration fills what a client may not set; the front end's own parameters too
    kwargs = bind(probe, {"url": "u"}, defaults={"endpoint": "http://hub.test/", "timeout": 5.0})
    assert kwargs == {"url": "u", "endpoint": "http://hub.test/", "timeout": 5.0}


def test_every_interface_leaves_the_host_to_the_token_and_loopback_names_itself() -> None:
    from ccrawl.serve.guard import Guard

    for host in ("", "0.0.0.0", "::"):
        assert Guard.for_address(host, loopback=False, token="t" * 20).hosts is None
    assert Guard.for_address("0.0.0.0", loopback=False, extra=("crawl.example",)).hosts == {"crawl.example"}
    local = Guard.for_address("127.0.0.1", loopback=True)
    assert local.hosts is not None and {"localhost", "127.0.0.1", "::1"} <= local.hosts
    assert Guard.for_address("10.1.2.3", loopback=False, token="t" * 20).hosts == {"10.1.2.3"}
