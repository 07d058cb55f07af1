"""Credentials out of messages: ``scheme://user:password@host`` becomes ``scheme://***@host``.

An endpoint may carry ``user:password@`` (a proxy or a private hub); it must not be echoed into
retry lines, errors or logs (issue #13). Applied where such a URL can reach text: the hub's
retry lines and errors, and the CLI's one-line error as a last net.
"""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s@?#]+)@")


def redact_userinfo(text: str) -> str:
    """``text`` with the user-info part of every URL in it replaced by ``***``."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
