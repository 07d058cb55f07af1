"""``ccrawl serve``, ``ccrawl mcp`` and ``ccrawl api``: the servers (parsing and wiring only).

The global flags a user gives (``-c``, ``--data-dir``, ``--no-cache``, endpoints, ...) become the
servers' defaults: the Common Crawl client options every operation that talks to Common Crawl
receives, and defaults for the parameters named after a setting (``crawl``, ``dir`` of the index
operations, the library ``root``, ``cache_dir``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ccrawl.cli.common import Run, command


def _injected(run: Run) -> dict[str, Any]:
    from ccrawl.net.client import client_options

    options = client_options(run.settings.values)
    options["no_cache"] = run.no_cache
    return {"client_options": options, "notice": lambda message: click.echo(message, err=True)}


def _defaults(run: Run, registry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    settings = run.settings
    by_param: dict[str, Any] = {"root": str(settings.library_dir), "cache_dir": str(settings.cache_dir)}
    if settings.crawl:
        by_param["crawl"] = settings.crawl
    index_dir = str(Path(settings.data_dir) / "index")
    out: dict[str, dict[str, Any]] = {}
    for name, op in registry.items():
        names = {p.name for p in op.params}
        chosen = {k: v for k, v in by_param.items() if k in names}
        if name.startswith("index.") and "dir" in names:
            chosen["dir"] = index_dir
        if chosen:
            out[name] = chosen
    return out


def _warn_off_loopback(run: Run, addr: Any, what: str) -> None:
    if not addr.loopback:
        run.warn(f"{what} is listening on {addr.url()}, beyond this machine: it has no authentication "
                 "and no rate limit; bind 127.0.0.1 unless every client on that network is trusted")


@command("serve", help="Serve every operation over HTTP as NDJSON (GET /ops lists them).")
@click.option("--addr", default="127.0.0.1:8080", show_default=True,
              help="Listen address (host:port; ':8080' listens on every interface)")
@click.option("--allow-writes", is_flag=True, help="Expose the write operations, which are hidden by default")
def serve(run: Run, addr: str, allow_writes: bool) -> None:
    from ccrawl import ops
    from ccrawl.serve.ops_http import exposed, make_app
    from ccrawl.serve.runner import parse_addr, serve_forever

    where = parse_addr(addr)
    registry = ops.load_all()
    app = make_app(registry, allow_writes=allow_writes, defaults=_defaults(run, registry), injected=_injected(run))
    _warn_off_loopback(run, where, "serve")
    offered = exposed(registry, allow_writes=allow_writes)
    hidden = sum(1 for op in registry.values() if op.writes) if not allow_writes else 0
    run.info(f"serve: {len(offered)} operations" + (f" ({hidden} write operations hidden; --allow-writes shows them)"
                                                    if hidden else ""))
    serve_forever(app, where, announce=lambda m: click.echo(f"serve: {m}", err=True))


@command("mcp", help="Run as an MCP server over stdio: every read operation as a tool.")
@click.option("--allow-writes", is_flag=True, help="Expose the write operations as tools too")
@click.option("--max-records", type=click.IntRange(1, 1_000_000), default=1000, show_default=True,
              help="Records a tool call returns at most (a cut answer says it is partial)")
def mcp(run: Run, allow_writes: bool, max_records: int) -> None:
    from ccrawl import ops
    from ccrawl.serve.mcp_tools import load_sdk, make_server, run_stdio

    load_sdk()
    registry = ops.load_all()
    server = make_server(registry, allow_writes=allow_writes, defaults=_defaults(run, registry),
                         injected=_injected(run), max_records=max_records)
    run_stdio(server)


@command("api", help="Start the v2 REST API: host profiles from the web graph, BM25 search (--index-dir).")
@click.option("--addr", default="127.0.0.1:8080", show_default=True, help="Listen address (host:port)")
@click.option("--index-dir", default=None, help="A built index directory (ccrawl index build); search answers 503 "
              "without one")
@click.option("--graph", default=None, help="Web-graph release whose host ranks are loaded [newest]")
@click.option("--max-hosts", type=click.IntRange(1, 100_000_000), default=1_000_000, show_default=True,
              help="Hosts loaded from the top of the rank table")
def api(run: Run, addr: str, index_dir: str | None, graph: str | None, max_hosts: int) -> None:
    from ccrawl.serve.api import load_host_store, make_app
    from ccrawl.serve.runner import parse_addr, serve_forever
    from ccrawl.store.textindex import Searcher

    where = parse_addr(addr)
    searcher = Searcher.open(index_dir) if index_dir else None
    options = _injected(run)["client_options"]
    run.info(f"api: loading the top {max_hosts:,} hosts of the web graph's host ranks")
    hosts = load_host_store(options, graph, max_hosts)
    run.info(f"api: {len(hosts):,} hosts from {hosts.graph}"
             + (f"; index of {searcher.documents:,} documents" if searcher else "; no index (search answers 503)"))
    _warn_off_loopback(run, where, "api")
    serve_forever(make_app(hosts, searcher), where, announce=lambda m: click.echo(f"api: {m}", err=True))
