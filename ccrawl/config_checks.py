"""Settings of the right type that still cannot work: refused at the edge, naming where they came from.

:func:`ccrawl.config.resolve` calls :func:`check_usable` once every setting is resolved (issue #13):
retries and waits past any sane bound (a retry storm or a run that never ends), an endpoint that is
not an http(s) URL, a user agent with a control character (a newline would split the header).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ccrawl.errors import UsageError

#: Upper bounds of the settings that drive retries and waits: past them a run hangs or storms.
LIMITS: dict[str, float] = {
    "retries": 100, "timeout": 86400.0, "rate": 3600.0, "global_rate": 3600.0, "backoff": 3600.0,
    "backoff_max": 86400.0,
}
ENDPOINTS = ("collinfo_endpoint", "data_endpoint", "cdx_endpoint", "s3_endpoint", "hf_endpoint")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _named(key: str, sources: Mapping[str, str]) -> str:
    source = sources.get(key, "default")
    return f"{key} (from {source})" if source != "default" else key


def check_usable(values: Mapping[str, Any], sources: Mapping[str, str]) -> None:
    """Refuse values of the right type that cannot work: out of range, not a URL, a header breaker.

    Called by :func:`resolve`; raises :class:`UsageError` naming the setting and where it came
    from (``env CCRAWL_RETRIES``, ``config [default]``, a flag), so the fix is one edit away.
    """
    for key, limit in LIMITS.items():
        value = values.get(key)
        if isinstance(value, int | float) and not 0 <= value <= limit:
            raise UsageError(f"{_named(key, sources)} = {value!r} is out of range: use 0 to {limit:g}")
    for key in ENDPOINTS:
        value = values.get(key)
        if value is None:
            continue
        try:
            parts = urlsplit(str(value))
            parts.port  # noqa: B018 (raises on a port out of range)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"{_named(key, sources)} = {value!r} is not an http(s) URL; write it as "
                             "https://host[:port][/path]")
    agent = values.get("user_agent")
    if isinstance(agent, str) and _CONTROL.search(agent):
        raise UsageError(f"{_named('user_agent', sources)} holds a control character (a newline?): "
                         f"{agent!r}; a header value is one line of text")
