"""URL canonicalisation ``canon/1`` and the URL keys derived from it.

``canonicalize("HTTP://WWW.Example.com:80/a/./b/?utm_source=x&id=7#top")
== "http://www.example.com/a/b/?id=7"``; ``url_key(canonical)`` is the first 10 bytes of the
blake3 digest of the canonical URL's UTF-8 bytes, in hex (20 characters).

The twelve steps of ``canon/1`` (docs/url.md says the same):

1. Surrounding whitespace and C0 controls are trimmed; tab, CR and LF are removed anywhere.
2. The URL is split into scheme, authority, path, query and fragment (RFC 3986 appendix B);
   the fragment is dropped.
3. The scheme is lowercased; only ``http`` and ``https`` with a ``//authority`` are crawlable,
   anything else raises :class:`ccrawl.errors.InputError`.
4. Userinfo (``user:pass@``) is dropped.
5. The host is percent-decoded, lowercased, converted to its IDNA (UTS 46) ASCII form and loses
   one trailing dot; it must then be non-empty and made of letters, digits, ``-``, ``_`` and
   non-empty dot-separated labels. An IPv6 literal is written in its compressed lowercase form.
6. An empty port and the scheme's default port (80, 443) are dropped; any other port must be
   1-65535 and is written without leading zeros.
7. Percent-encoding in path and query is normalised: escapes of unreserved characters
   (``A-Z a-z 0-9 - . _ ~``) are decoded, other escapes get uppercase hex digits, a ``%`` that
   starts no escape becomes ``%25``, and bytes outside RFC 3986's allowed set (space, controls,
   ``"<>\\^`{|}[]``, non-ASCII as UTF-8) are percent-encoded.
8. Path parameters (``;name=value`` inside a segment) whose name matches the tracking rules are
   removed (``;jsessionid=...``); other path parameters stay.
9. Dot segments are removed (RFC 3986 section 5.2.4); an empty path becomes ``/``. (After step 8,
   so that ``/.;jsessionid=x`` cannot leave a dot segment behind: canonical form is a fixed point.)
10. Query parameters whose name matches the tracking rules are removed. The rest keep their order,
    their repeats and their spelling: a query is never sorted or deduplicated.
11. An empty query (nothing after ``?``, or nothing left after step 10) is dropped with its ``?``.
12. The URL is reassembled as ``scheme://host[:port]path[?query]``. Case in path and query and
    trailing slashes are left as found: ``/a`` and ``/a/`` are different keys.

The tracking rules are ``ccrawl/data/canon/tracking-params.txt``, read byte for byte at import:
one rule per line, ``#`` comments, names compared case-insensitively, in three forms: ``name``
(always removed), ``prefix*`` (every name starting with prefix) and ``name?`` (removed only when
the value looks like a session token: 16 or more characters of ``[A-Za-z0-9_-]``, at least one a
digit). Editing that file changes keys, which makes it a new canonicalisation version, not a patch.

:func:`canonicalize` is the compiled one when ``ccrawl._native.canon`` is built, else
:func:`canonicalize_py`; both give the same output and raise the same errors.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import blake3

from ccrawl import accel
from ccrawl.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.url.batch import UrlColumn

__all__ = [
    "CANON_VERSION",
    "TRACKING_PARAMS_PATH",
    "TrackingRules",
    "canonical_array",
    "canonical_array_py",
    "canonicalize",
    "canonicalize_py",
    "is_session_token",
    "parse_tracking_rules",
    "tracking_rules",
    "url_key",
    "url_key_array",
]

CANON_VERSION = "canon/1"
TRACKING_PARAMS_PATH = Path(__file__).resolve().parent.parent / "data" / "canon" / "tracking-params.txt"

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# RFC 3986 pchar plus "/" and "?": what may stand unescaped in a path or a query.
_ALLOWED = _UNRESERVED | frozenset(b"!$&'()*+,;=:@/?")
_HEX = b"0123456789ABCDEF"
_HEX_VALUE = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_DEFAULT_PORT = {"http": "80", "https": "443"}


@dataclass(frozen=True, slots=True)
class TrackingRules:
    """The three rule forms of the tracking-parameter file, names lowercased."""

    names: frozenset[str]
    prefixes: tuple[str, ...]
    token_names: frozenset[str]

    def removes(self, name: str, value: str) -> bool:
        """True when a parameter ``name=value`` is tracking noise by these rules."""
        lowered = name.lower()
        if lowered in self.names:
            return True
        if lowered in self.token_names and is_session_token(value):
            return True
        return lowered.startswith(self.prefixes) if self.prefixes else False


def parse_tracking_rules(text: str) -> TrackingRules:
    """Rules from the text of a tracking-parameter file (``name``, ``prefix*``, ``name?``)."""
    names: set[str] = set()
    prefixes: list[str] = []
    token_names: set[str] = set()
    for line in text.splitlines():
        rule = line.split("#", 1)[0].strip().lower()
        if not rule:
            continue
        if rule.endswith("*"):
            prefixes.append(rule[:-1])
        elif rule.endswith("?"):
            token_names.add(rule[:-1])
        else:
            names.add(rule)
    return TrackingRules(frozenset(names), tuple(prefixes), frozenset(token_names))


@lru_cache(maxsize=1)
def tracking_rules() -> TrackingRules:
    """The rules of the shipped file, parsed once per process."""
    return parse_tracking_rules(TRACKING_PARAMS_PATH.read_bytes().decode("utf-8"))


def is_session_token(value: str) -> bool:
    """16+ characters of ``[A-Za-z0-9_-]`` with at least one digit: a value worth judging as a session."""
    return len(value) >= 16 and all(c in _TOKEN_CHARS for c in value) and any(c.isdigit() for c in value)


def normalize_percent(component: str) -> str:
    """Step 7 on a path or query: decode unreserved escapes, uppercase the rest, encode what must be."""
    if component.isascii() and "%" not in component and all(ord(c) in _ALLOWED for c in component):
        return component
    try:
        data = component.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("URL is not valid Unicode text (a lone surrogate)") from None
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c == 0x25:  # '%'
            if i + 2 < n and data[i + 1] in _HEX_VALUE and data[i + 2] in _HEX_VALUE:
                value = _HEX_VALUE[data[i + 1]] * 16 + _HEX_VALUE[data[i + 2]]
                if value in _UNRESERVED:
                    out.append(value)
                else:
                    out += b"%" + _HEX[value >> 4 : (value >> 4) + 1] + _HEX[value & 15 : (value & 15) + 1]
                i += 3
                continue
            out += b"%25"
        elif c in _ALLOWED:
            out.append(c)
        else:
            out += b"%" + _HEX[c >> 4 : (c >> 4) + 1] + _HEX[c & 15 : (c & 15) + 1]
        i += 1
    return out.decode("ascii")


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 on an absolute path; the result starts with ``/``."""
    if "." not in path:
        return path or "/"
    out: list[str] = []
    segments = path.split("/")[1:]
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        if segment == ".":
            if i == last:
                out.append("")
        elif segment == "..":
            if out:
                out.pop()
            if i == last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def strip_path_params(path: str, rules: TrackingRules) -> str:
    """Step 8: remove ``;name=value`` path parameters that the tracking rules match."""
    if ";" not in path:
        return path
    segments = path.split("/")
    for i, segment in enumerate(segments):
        if ";" not in segment:
            continue
        base, *params = segment.split(";")
        kept = [p for p in params if not rules.removes(*_name_value(p))]
        segments[i] = ";".join([base, *kept])
    return "/".join(segments)


def _name_value(param: str) -> tuple[str, str]:
    name, _, value = param.partition("=")
    return name, value


def filter_query(query: str, rules: TrackingRules) -> str:
    """Step 10: drop the ``&``-separated fields the tracking rules match, keeping order and repeats."""
    fields = query.split("&")
    kept = [f for f in fields if not rules.removes(*_name_value(f))]
    return "&".join(kept) if len(kept) != len(fields) else query


def canonical_host(host: str) -> str:
    """Step 5: the host in canonical form; InputError when it is not a usable host name."""
    if host.startswith("["):
        if not host.endswith("]"):
            raise InputError(f"not crawlable: bad IPv6 host {host!r}")
        try:
            return "[" + ipaddress.IPv6Address(host[1:-1]).compressed + "]"
        except ValueError:
            raise InputError(f"not crawlable: bad IPv6 host {host!r}") from None
    if "%" in host:
        try:
            host = unquote(host, errors="strict")
        except UnicodeDecodeError:
            raise InputError(f"not crawlable: host {host!r} does not decode to UTF-8 text") from None
    host = host.lower()
    if not host.isascii():
        from ccrawl.url.domain import ascii_host

        converted = ascii_host(host)
        if converted is None:
            raise InputError(f"not crawlable: host {host!r} has no IDNA form")
        host = converted.lower()
    if host.endswith("."):
        host = host[:-1]
    # A second trailing dot is an empty last label: refused, or the result would lose it next time.
    bad_labels = ".." in host or host.startswith(".") or host.endswith(".")
    if not host or bad_labels or not all(c in _HOST_CHARS for c in host):
        raise InputError(f"not crawlable: bad host {host!r}")
    return host


def canonical_port(port: str, scheme: str) -> str:
    """Step 6: ``""`` for no port or the default one, else the number without leading zeros."""
    if not port:
        return ""
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise InputError(f"not crawlable: bad port {port!r}; a port is a number from 1 to 65535")
    port = str(int(port))
    return "" if port == _DEFAULT_PORT[scheme] else port


def split_url(url: str) -> tuple[str, str, str, str | None]:
    """Steps 1-4: (lowercased scheme, host[:port] without userinfo, path, query or None)."""
    url = url.strip(_C0_AND_SPACE)
    if "\t" in url or "\n" in url or "\r" in url:
        url = url.replace("\t", "").replace("\n", "").replace("\r", "")
    if not url:
        raise InputError("empty URL: give an absolute URL such as https://example.com/")
    colon = url.find(":")
    scheme = url[:colon].lower() if colon > 0 else ""
    if scheme not in ("http", "https"):
        what = f"scheme {scheme!r}" if scheme else "no scheme"
        raise InputError(f"not crawlable: {what} in {url[:80]!r}; only http:// and https:// URLs are crawlable")
    rest = url[colon + 1 :]
    if not rest.startswith("//"):
        raise InputError(f"not crawlable: no host in {url[:80]!r}; write {scheme}://host/path")
    rest = rest[2:]
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    rest, has_query, query = rest.partition("?")
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    authority = authority.rpartition("@")[2]
    return scheme, authority, path, query if has_query else None


def _host_port(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return authority, ""
        host, rest = authority[: close + 1], authority[close + 1 :]
        if rest and not rest.startswith(":"):
            raise InputError(f"not crawlable: bad authority {authority!r}")
        return host, rest[1:]
    host, _, port = authority.partition(":")
    return host, port


def canonicalize_py(url: str) -> str:
    """``url`` in canon/1 form (pure Python); InputError when it is not a crawlable URL."""
    rules = tracking_rules()
    scheme, authority, path, query = split_url(url)
    raw_host, raw_port = _host_port(authority)
    if not raw_host:
        raise InputError(f"not crawlable: no host in {url[:80]!r}")
    host = canonical_host(raw_host)
    port = canonical_port(raw_port, scheme)
    path = remove_dot_segments(strip_path_params(normalize_percent(path), rules))
    if query:
        query = filter_query(normalize_percent(query), rules)
    out = scheme + "://" + host
    if port:
        out += ":" + port
    out += path
    if query:
        out += "?" + query
    return out


def url_key(canonical_url: str) -> str:
    """The URL key: first 10 bytes of blake3 of the canonical URL's UTF-8 bytes, as 20 hex digits."""
    return blake3.blake3(canonical_url.encode("utf-8")).digest()[:10].hex()


def canonical_array_py(
    urls: UrlColumn, with_errors: bool = False
) -> pa.StringArray | tuple[pa.StringArray, pa.StringArray]:
    """:func:`canonicalize_py` over every row (twin of the compiled ``canonical_array``): a pyarrow
    string array in input order, null for a null or bad row; ``with_errors`` adds the messages."""
    from ccrawl.url.batch import map_rows

    return map_rows(canonicalize_py, urls, with_errors)


def url_key_array(canonical: pa.StringArray) -> pa.StringArray:
    """:func:`url_key` of every row of a pyarrow string array of canonical URLs (null stays null)."""
    import pyarrow as pa

    hasher = blake3.blake3
    return pa.array(
        [None if c is None else hasher(c.encode("utf-8")).digest()[:10].hex() for c in canonical.to_pylist()],
        pa.string(),
    )


_native = accel.native("canon")
if _native is not None:
    _rules = tracking_rules()
    _canonicalizer = _native.Canonicalizer(_rules.names, _rules.prefixes, _rules.token_names)
    canonicalize: Callable[[str], str] = _canonicalizer.canonicalize
    canonical_array: Callable[..., Any] = _canonicalizer.canonical_array
else:
    canonicalize = canonicalize_py
    canonical_array = canonical_array_py
