"""What every Common Crawl client is configured with, typed and parsed once.

:class:`ClientOptions` is the frozen form of the keyword arguments :class:`ccrawl.net.client.CCClient`
takes: endpoints, pacing, retries, cache, user agent. Durations are seconds (a ``"200ms"`` from a
flag or a setting is parsed by :meth:`ClientOptions.parse`, once, with the flag's name in the error),
counts are ints. Front ends build one from the resolved settings and hand it to operations inside
their :class:`ccrawl.ops.context.OpContext`; a client is opened with
:meth:`ccrawl.net.client.CCClient.of`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from ccrawl import __version__
from ccrawl.errors import UsageError

DEFAULT_COLLINFO_ENDPOINT = "https://index.commoncrawl.org/collinfo.json"
DEFAULT_DATA_ENDPOINT = "https://data.commoncrawl.org"
DEFAULT_S3_ENDPOINT = "https://commoncrawl.s3.amazonaws.com"
DEFAULT_CDX_ENDPOINT = "https://index.commoncrawl.org"
DEFAULT_USER_AGENT = f"ccrawl/{__version__} (+https://commoncrawl.org/terms-of-use)"

#: the options that are durations, with the flag that names them in an error
_DURATIONS = {"rate": "--rate", "global_rate": "--global-rate", "timeout": "--timeout",
              "backoff": "backoff", "backoff_max": "backoff_max"}
_INTS = ("retries", "max_connections", "verbose")


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """A Common Crawl client's configuration (see :class:`ccrawl.net.client.CCClient` for each)."""

    collinfo_endpoint: str = DEFAULT_COLLINFO_ENDPOINT
    data_endpoint: str = DEFAULT_DATA_ENDPOINT
    cdx_endpoint: str = DEFAULT_CDX_ENDPOINT
    s3_endpoint: str = DEFAULT_S3_ENDPOINT
    source: str = "https"
    rate: float = 0.0  #: seconds between this process's requests
    global_rate: float = 0.2  #: seconds between requests of every ccrawl process sharing data_dir
    data_dir: str | None = None
    cache_dir: str | None = None
    no_cache: bool = False
    timeout: float = 0.0  #: seconds per request; 0: none
    retries: int = 3
    backoff: float = 0.5
    backoff_max: float = 30.0
    user_agent: str = DEFAULT_USER_AGENT
    max_connections: int = 64
    verbose: int = 0

    @classmethod
    def parse(cls, values: Mapping[str, object]) -> ClientOptions:
        """The options among ``values`` (resolved settings, or a test's few), other keys ignored.

        Durations may be numbers or text (``"200ms"``); a bad one is a usage error naming its flag.
        """

        given: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            value = values.get(f.name)
            if value is None:
                continue
            if f.name in _DURATIONS:
                value = seconds(value, name=_DURATIONS[f.name])  # type: ignore[arg-type]
            elif f.name in _INTS:
                value = int(value)  # type: ignore[call-overload]
            elif f.name == "no_cache":
                value = bool(value)
            elif f.name in ("data_dir", "cache_dir"):
                value = str(value)
            given[f.name] = value
        return cls(**given)  # type: ignore[arg-type]

    def replace(self, **changes: object) -> ClientOptions:
        """A copy with ``changes`` parsed as :meth:`parse` would."""
        return ClientOptions.parse({**self.as_dict(), **changes})

    def as_dict(self) -> dict[str, object]:
        """The options as :class:`~ccrawl.net.client.CCClient` keyword arguments (for an engine that
        still takes them as keywords, and for pickling across a process boundary)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def seconds(value: float | int | str | None, *, name: str = "duration") -> float:
    """A duration in seconds from a number or a duration string; :func:`ccrawl.config.parse_duration` reads it."""
    from ccrawl.config import parse_duration

    if value is None:
        return 0.0
    if isinstance(value, str) and not value.strip():
        return 0.0
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{name}: {exc}") from exc
