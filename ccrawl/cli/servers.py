"""``ccrawl serve``, ``ccrawl mcp`` and ``ccrawl api``: the servers (parsing and wiring only).

The global flags a user gives (``-c``, ``--data-dir``, ``--no-cache``, endpoints, ...) become the
servers' defaults: the Common Crawl client options every operation that talks to Common Crawl
receives, and defaults for the parameters named after a setting (``crawl``, ``dir`` of the index
operations, the library ``root``, ``cache_dir``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from ccrawl.cli.common import Run, command

if TYPE_CHECKING:
    from ccrawl.ops import Operation
    from ccrawl.serve.guard import Guard
    from ccrawl.serve.runner import Address
    from ccrawl.serve.worker import Budget

F = TypeVar("F", bound=Callable[..., None])


def _injected(run: Run) -> dict[str, object]:
    """What the server injects into every operation (never a client's): its :class:`OpContext` (no
    progress lines: a run's notices are frames to its client)."""
    return {"ctx": run.context().with_client(verbose=0).with_progress("none")}


def _defaults(run: Run, registry: Mapping[str, Operation]) -> dict[str, dict[str, object]]:
    settings = run.settings
    by_param: dict[str, object] = {"root": str(settings.library_dir), "cache_dir": str(settings.cache_dir)}
    db_path = settings.values.get("db_path")
    if settings.crawl:
        by_param["crawl"] = settings.crawl
    index_dir = str(Path(settings.data_dir) / "index")
    out: dict[str, dict[str, object]] = {}
    for name, op in registry.items():
        names = {p.name for p in op.params}
        chosen = {k: v for k, v in by_param.items() if k in names}
        if name.startswith("index.") and "dir" in names:
            chosen["dir"] = index_dir
        if name == "db.sql" and db_path:
            chosen["db"] = str(db_path)
        if chosen:
            out[name] = chosen
    return out


def _guard(run: Run, addr: Address, what: str, token: str | None, allow_hosts: tuple[str, ...]) -> Guard:
    """The Host/Origin/token checks; off loopback a token is required."""
    from ccrawl.errors import UsageError
    from ccrawl.serve.guard import Guard

    token = token or None
    if not addr.loopback:
        if token is None:
            raise UsageError(f"{what} --addr {addr.url()} listens beyond this machine: give --token (or set "
                             "CCRAWL_SERVE_TOKEN) so every request must carry it, or bind 127.0.0.1")
        run.warn(f"{what} is listening on {addr.url()}, beyond this machine: every request but /health needs the "
                 "bearer token; the traffic is not encrypted (put TLS in front of it)")
    if token is not None and len(token) < 16:
        raise UsageError("--token: use at least 16 characters (e.g. python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe())')")
    return Guard.for_address(addr.host, loopback=addr.loopback, extra=allow_hosts, token=token)


def _policy_defaults(run: Run, registry: Mapping[str, Operation],
                     allow_private: bool) -> dict[str, dict[str, object]]:
    defaults = _defaults(run, registry)
    if allow_private:
        for name, op in registry.items():
            if any(p.name == "allow_private_addresses" for p in op.params):
                defaults.setdefault(name, {})["allow_private_addresses"] = True
    return defaults


def _budget(max_seconds: float, max_memory_mb: int, max_running: int) -> Budget:
    from ccrawl.serve.worker import Budget

    return Budget(seconds=max_seconds, memory_mb=max_memory_mb, concurrent=max_running)


def _root(root: str | None) -> str | None:
    from ccrawl.errors import UsageError

    if root is None:
        return None
    path = Path(root).expanduser().resolve()
    if not path.is_dir():
        raise UsageError(f"--root {root}: not a folder")
    if path == Path(path.anchor):
        raise UsageError("--root /: name a folder for the clients' files, not the whole file system")
    return str(path)


_budget_options = [
    click.option("--root", default=None, help="The one folder whose files clients may name (read; write too with "
                 "--allow-writes). Without it no client gives a path"),
    click.option("--max-seconds", type=click.FloatRange(1, 86_400), default=600, show_default=True,
                 help="Wall-clock limit of one operation"),
    click.option("--max-memory-mb", type=click.IntRange(64, 1 << 20), default=2048, show_default=True,
                 help="Memory ceiling of one operation (its processes' resident size)"),
    click.option("--max-running", type=click.IntRange(1, 256), default=4, show_default=True,
                 help="Operations running at once; past it a request is refused (503)"),
    click.option("--allow-private-addresses", is_flag=True,
                 help="Let operations that fetch reach private and loopback addresses (the operator's choice, "
                 "never a client's)"),
]


def _with_budget_options(func: F) -> F:
    for option in reversed(_budget_options):
        func = option(func)
    return func


_http_options = [
    click.option("--token", envvar="CCRAWL_SERVE_TOKEN", default=None,
                 help="Bearer token every request but /health must carry; required off loopback "
                 "[env CCRAWL_SERVE_TOKEN]"),
    click.option("--allow-host", "allow_hosts", multiple=True,
                 help="Another name the server answers to in the Host header (repeatable); others get 421"),
]


def _with_http_options(func: F) -> F:
    for option in reversed(_http_options):
        func = option(func)
    return func


@command("serve", help="Serve every operation over HTTP as NDJSON (GET /ops lists them). Clients are "
         "untrusted: see docs/servers.md, 'Security model'.")
@click.option("--addr", default="127.0.0.1:8080", show_default=True,
              help="Listen address (host:port; ':8080' listens on every interface and needs --token)")
@click.option("--allow-writes", is_flag=True, help="Expose the write operations, which are hidden by default")
@click.option("--max-body-mb", type=click.IntRange(1, 1024), default=16, show_default=True,
              help="Largest JSON body a request may send")
@_with_http_options
@_with_budget_options
def serve(run: Run, addr: str, allow_writes: bool, max_body_mb: int, token: str | None, allow_hosts: tuple[str, ...],
          root: str | None, max_seconds: float, max_memory_mb: int, max_running: int,
          allow_private_addresses: bool) -> None:
    from ccrawl import ops
    from ccrawl.serve.binding import Policy
    from ccrawl.serve.ops_http import exposed, make_app
    from ccrawl.serve.runner import parse_addr, serve_forever
    from ccrawl.serve.worker import Runner

    where = parse_addr(addr)
    guard = _guard(run, where, "serve", token, allow_hosts)
    folder = _root(root)
    registry = ops.load_all()
    defaults = _policy_defaults(run, registry, allow_private_addresses)
    runner = Runner(_budget(max_seconds, max_memory_mb, max_running),
                    notice=lambda message: click.echo(message, err=True))
    runner.warm()
    app = make_app(registry, allow_writes=allow_writes, root=folder, defaults=defaults, injected=_injected(run),
                   max_body=max_body_mb << 20, runner=runner, guard=guard)
    policy = Policy(allow_writes=allow_writes, root=Path(folder) if folder else None)  # as make_app's
    offered = exposed(registry, allow_writes=allow_writes, policy=policy, defaults=defaults)
    hidden = sum(1 for op in registry.values() if op.writes) if not allow_writes else 0
    run.info(f"serve: {len(offered)} operations" + (f" ({hidden} write operations hidden; --allow-writes shows them)"
                                                    if hidden else "")
             + (f"; client paths inside {folder}" if folder else "; no client paths"))
    serve_forever(app, where, announce=lambda m: click.echo(f"serve: {m}", err=True))


@command("mcp", help="Run as an MCP server over stdio: every read operation as a tool. Callers are untrusted: "
         "see docs/servers.md, 'Security model'.")
@click.option("--allow-writes", is_flag=True, help="Expose the write operations as tools too")
@click.option("--max-records", type=click.IntRange(1, 1_000_000), default=1000, show_default=True,
              help="Records a tool call returns at most (a cut answer says it is partial)")
@_with_budget_options
def mcp(run: Run, allow_writes: bool, max_records: int, root: str | None, max_seconds: float, max_memory_mb: int,
        max_running: int, allow_private_addresses: bool) -> None:
    from ccrawl import ops
    from ccrawl.serve.mcp_tools import load_sdk, make_server, run_stdio
    from ccrawl.serve.worker import Runner

    load_sdk()
    folder = _root(root)
    registry = ops.load_all()
    runner = Runner(_budget(max_seconds, max_memory_mb, max_running),
                    notice=lambda message: click.echo(message, err=True))
    runner.warm()
    server = make_server(registry, allow_writes=allow_writes, root=folder,
                         defaults=_policy_defaults(run, registry, allow_private_addresses),
                         injected=_injected(run), max_records=max_records, runner=runner)
    run_stdio(server)


@command("api", help="Start the v2 REST API: host profiles from the web graph, BM25 search (--index-dir).")
@click.option("--addr", default="127.0.0.1:8080", show_default=True, help="Listen address (host:port)")
@click.option("--index-dir", default=None, help="A built index directory (ccrawl index build); search answers 503 "
              "without one")
@click.option("--graph", default=None, help="Web-graph release whose host ranks are loaded [newest]")
@click.option("--max-hosts", type=click.IntRange(1, 100_000_000), default=1_000_000, show_default=True,
              help="Hosts loaded from the top of the rank table")
@_with_http_options
def api(run: Run, addr: str, index_dir: str | None, graph: str | None, max_hosts: int, token: str | None,
        allow_hosts: tuple[str, ...]) -> None:
    from ccrawl.serve.api import load_host_store, make_app
    from ccrawl.serve.runner import parse_addr, serve_forever
    from ccrawl.store.textindex import Searcher

    where = parse_addr(addr)
    guard = _guard(run, where, "api", token, allow_hosts)
    searcher = Searcher.open(index_dir) if index_dir else None
    run.info(f"api: loading the top {max_hosts:,} hosts of the web graph's host ranks")
    hosts = load_host_store(run.context().with_client(verbose=0).client, graph, max_hosts)
    run.info(f"api: {len(hosts):,} hosts from {hosts.graph}"
             + (f"; index of {searcher.documents:,} documents" if searcher else "; no index (search answers 503)"))
    serve_forever(make_app(hosts, searcher, guard=guard), where, announce=lambda m: click.echo(f"api: {m}", err=True))
