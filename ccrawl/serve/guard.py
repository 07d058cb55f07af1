"""Who may talk to a server at all: the Host and Origin checks and the bearer token.

A server on 127.0.0.1 is still reachable from every web page the operator's browser opens: a
page can send requests to it (CSRF), and a page on a name the attacker controls can rebind that
name to 127.0.0.1 and read the answers (DNS rebinding). So, as Jupyter's server and VS Code's
remote server do:

- ``Host`` must name the server: one of the loopback names when it listens on loopback, else its
  own address, or a name the operator listed (``--allow-host``). Anything else: 421.
- A request carrying an ``Origin`` other than the server's own, or a browser's
  ``Sec-Fetch-Site`` of ``cross-site``/``same-site``, comes from another page: 403. (No CORS
  header is ever sent, so a page cannot read an answer either.)
- With a token (required off loopback), every route but ``/health`` wants
  ``Authorization: Bearer <token>``: 401 without it.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.typedefs import Handler, Middleware

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
OPEN_PATHS = frozenset({"/health", "/v2/health"})


def _host_name(host: str) -> str:
    """``[::1]:8080`` -> ``::1``; ``Example.org:80`` -> ``example.org``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


@dataclass(frozen=True, slots=True)
class Guard:
    """The checks a server makes before routing; ``hosts`` None means any Host is accepted."""

    hosts: frozenset[str] | None
    token: str | None = None

    @classmethod
    def for_address(cls, host: str, *, loopback: bool, extra: Iterable[str] = (), token: str | None = None) -> Guard:
        names = {_host_name(n) for n in extra if n.strip()}
        if loopback:
            names |= LOOPBACK_NAMES | {_host_name(host)}
        elif host not in ("", "0.0.0.0", "::"):
            names.add(_host_name(host))
        elif not names:
            return cls(None, token)  # every interface and no names listed: the token is the check
        return cls(frozenset(names), token)

    def refusal(self, method: str, path: str, headers: Mapping[str, str]) -> tuple[int, str] | None:
        """(status, reason) when the request may not go on; None when it may."""
        host = headers.get("Host")
        if self.hosts is not None and host is not None and _host_name(host) not in self.hosts:
            return 421, f"this server does not answer for the host {_host_name(host)[:100]!r}"
        origin = headers.get("Origin")
        if origin is not None:
            own = {f"http://{host}".lower(), f"https://{host}".lower()} if host else set()
            if origin.lower() not in own:
                return 403, "requests from another web origin are refused"
        if headers.get("Sec-Fetch-Site", "").lower() in ("cross-site", "same-site"):
            return 403, "requests from another web page are refused"
        if self.token is not None and path not in OPEN_PATHS:
            given = headers.get("Authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token.encode()):
                return 401, "this server wants a bearer token (Authorization: Bearer ...)"
        return None


def middleware(guard: Guard, reply: Callable[[int, str], web.StreamResponse]) -> Middleware:
    """An aiohttp middleware applying ``guard``; ``reply(status, message)`` makes the error response."""
    from aiohttp import web

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = guard.refusal(request.method, request.path, request.headers)
        if refused is not None:
            response: web.StreamResponse = reply(*refused)
            if refused[0] == 401:
                response.headers["WWW-Authenticate"] = 'Bearer realm="ccrawl"'
            return response
        result: web.StreamResponse = await handler(request)
        return result

    return check
