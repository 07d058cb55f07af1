"""SURT keys of URLs, as Common Crawl's ``url_surtkey`` and the Internet Archive ``surt`` package write them.

``surt("http://www.Example.com/A/b/?B=2&a=1#x") == "com,example)/a/b?a=1&b=2"``

The output is the ``surt`` package's default (``surt.surt(url)``), which is what Common Crawl's CDX
and columnar indexes carry, reached by the same steps in the same order:

1. strip surrounding whitespace, drop tab/CR/LF anywhere; prefix ``http://`` when there is no
   scheme; collapse repeated ``http(s)://`` prefixes (``http://https://a.com`` is ``https://a.com``);
2. split RFC 2396 style; userinfo and fragment are dropped; ``http:////host/path`` takes the host
   from the path;
3. host: percent-decoded until stable, IDNA-encoded when not ASCII (Python's IDNA 2003 codec, as the
   package does), ``..`` collapsed, outer dots stripped; numeric hosts (``1.2``, ``010.1.1.1``,
   ``3232235777``) rewritten as dotted quads with ``inet_aton`` rules; lowercased, a leading
   ``www``/``wwwN.`` label removed, labels reversed and joined with commas, closed by ``)``;
4. the default port (80 for http, 443 for https) is removed, any other port kept as ``:port``;
5. path: percent-decoded until stable, dot segments resolved and empty segments dropped,
   re-escaped, lowercased, ASP.NET ``(S(...))`` session segments removed, one trailing slash removed
   (except for the root ``/``);
6. query: percent-decoded and re-escaped, ``jsessionid``/``phpsessid``/``sid``/``aspsessionid``/
   ``cfid+cftoken`` session values removed, lowercased, its ``&``-separated fields sorted; an empty
   query is dropped.

Deliberate divergences from the package (tested): an empty or blank URL raises
:class:`ccrawl.errors.InputError` where the package returns ``"-"`` or fails with an
AttributeError; a port that is not a number in 0-65535 raises InputError where the package raises
ValueError; a numeric host that ``inet_aton`` rejects is kept as written, where the package would
ask DNS about it (and keep it as written when DNS says no, so only the lookup differs).

:func:`surt` is the compiled implementation when ``ccrawl._native.surt`` is built, else
:func:`surt_py`; both give the same output for every input.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_from_bytes, unquote_to_bytes

from ccrawl import accel
from ccrawl.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.url.batch import UrlColumn

__all__ = ["surt", "surt_array", "surt_array_py", "surt_py"]

_SCHEME = re.compile(rb"[a-zA-Z][a-zA-Z0-9+.\-]*:")
_REPEATED_HTTP = re.compile(rb"(https?://)+")
_WWW_LABEL = re.compile(rb"www\d*\.")
_DECIMAL_IP = re.compile(rb"[1-9][0-9]*(?:\.[0-9]+){0,3}")
_OCTAL_IP = re.compile(rb"0[0-7]*(?:\.[0-7]+){0,3}")

# Characters `escape_once` leaves alone besides ASCII letters, digits and "_.-~": everything printable
# except '#' and '%', so an escape survives exactly one decode/encode round.
_ESCAPE_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"

# Session identifiers the Internet Archive's canonicaliser removes from queries; applied in this
# order, each to the result of the one before, with the leftmost-longest semantics of `re`.
_QUERY_SESSION_PATTERNS = tuple(
    re.compile(rb"^(.*)(?:" + p + rb")(?:&(.*))?$", re.I)
    for p in (
        rb"jsessionid=[0-9a-zA-Z]{32}",
        rb"phpsessid=[0-9a-zA-Z]{32}",
        rb"sid=[0-9a-zA-Z]{32}",
        rb"ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}",
        rb"cfid=[^&]+&cftoken=[^&]+",
    )
)
# ASP.NET cookieless session segments: /(S(xxxxxxxxxxxxxxxxxxxxxxxx))/page.aspx and /(xxxx...)/page.aspx
_PATH_SESSION_PATTERNS = (
    re.compile(rb"^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$", re.I),
    re.compile(rb"^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$", re.I),
)


_HEX_VALUES = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}


def unescape_repeatedly(data: bytes) -> bytes:
    """Percent-decode until nothing changes (``%2541`` becomes ``A``).

    A few whole-string rounds settle every URL met in practice; a string that needs more (a hostile
    ``%2525...2541`` would need one round per ``25``, quadratic) goes to :func:`_unescape_fixed_point`,
    which reaches the same result in one pass.
    """
    for _ in range(4):
        decoded = unquote_to_bytes(data)
        if decoded == data:
            return data
        data = decoded
    return _unescape_fixed_point(data)


def _unescape_fixed_point(data: bytes) -> bytes:
    """What repeated percent-decoding ends at, in one left-to-right pass.

    Escapes (``%`` and two hex digits) cannot overlap, as ``%`` is no hex digit, so every order of
    decoding them ends at the same string; this order keeps the output free of escapes and decodes
    the one a new byte completes, which can only end at that byte.
    """
    out = bytearray()
    hexv = _HEX_VALUES
    for i, chunk in enumerate(data.split(b"%")):
        if i:
            out.append(0x25)
        pos, end = 0, len(chunk)
        while pos < end and 0x25 in out[-2:]:  # a "%" close enough to the end to start an escape
            out.append(chunk[pos])
            pos += 1
            while len(out) >= 3 and out[-3] == 0x25 and out[-2] in hexv and out[-1] in hexv:
                value = hexv[out[-2]] * 16 + hexv[out[-1]]
                del out[-3:]
                out.append(value)
        out += chunk[pos:]
    return bytes(out)


def escape_once(data: bytes) -> bytes:
    """Percent-encode controls, space, ``#``, ``%``, DEL and every non-ASCII byte (uppercase hex)."""
    return quote_from_bytes(data, safe=_ESCAPE_SAFE).encode("ascii") if data else data


# The same patterns without the ``^(.*)`` around them, tried at one position: each starts with a
# fixed keyword, so only the keyword's occurrences need trying, from the right (``(.*)`` is greedy).
_QUERY_SESSION_AT = tuple(
    (keyword, re.compile(p + rb"(?:&|\Z)", re.I))
    for keyword, p in (
        (b"jsessionid=", rb"jsessionid=[0-9a-zA-Z]{32}"),
        (b"phpsessid=", rb"phpsessid=[0-9a-zA-Z]{32}"),
        (b"sid=", rb"sid=[0-9a-zA-Z]{32}"),
        (b"aspsessionid", rb"ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}"),
    )
)
_PATH_SESSION_AT = (
    re.compile(rb"\((?:[a-z]\([0-9a-z]{24}\))+\)/", re.I),
    re.compile(rb"\([0-9a-z]{24}\)/", re.I),
)


def _positions(data: bytes, needle: bytes) -> list[int]:
    """Every start of ``needle`` in ``data`` (it must not overlap itself), ascending."""
    out = []
    at = data.find(needle)
    while at >= 0:
        out.append(at)
        at = data.find(needle, at + len(needle))
    return out


def _first_at_or_after(positions: list[int], at: int, default: int) -> int:
    k = bisect.bisect_left(positions, at)
    return positions[k] if k < len(positions) else default


def strip_query_session_ids(query: bytes) -> bytes:
    """Remove the session identifiers of :data:`_QUERY_SESSION_PATTERNS` from a raw query.

    Each pattern removes its last match that ends the query or a ``&`` field (the pattern's greedy
    ``^(.*)``), in time linear in the query: a regex match from the start backtracks over every
    occurrence of ``cfid=``, quadratic on a hostile query. A query with a newline (never one that
    :func:`surt` makes: it escapes them) keeps the regexes, whose ``.`` and ``$`` treat it apart.
    """
    if b"\n" in query:
        for pattern in _QUERY_SESSION_PATTERNS:
            m = pattern.match(query)
            if m:
                query = m.group(1) + (m.group(2) or b"")
        return query
    for keyword, at_pattern in _QUERY_SESSION_AT:
        for p in reversed(_positions(query.lower(), keyword)):
            m = at_pattern.match(query, p)
            if m:
                end = p + len(m.group(0))  # past the "&" that ends the field, if any
                query = query[:p] + query[end:]
                break
    return _strip_cfid(query)


def _strip_cfid(query: bytes) -> bytes:
    """``cfid=[^&]+&cftoken=[^&]+`` ending the query or a field: the last such match removed."""
    amps = _positions(query, b"&")
    n = len(query)
    for p in reversed(_positions(query.lower(), b"cfid=")):
        a = _first_at_or_after(amps, p + 5, n)  # [^&]+ runs to the first "&"
        if a == p + 5 or query[a : a + 9].lower() != b"&cftoken=":
            continue
        b = _first_at_or_after(amps, a + 9, n)
        if b == a + 9:
            continue
        return query[:p] + query[b + 1 :]  # with the "&" after it, when there is one
    return query


def strip_path_session_ids(path: bytes) -> bytes:
    """Remove an ASP.NET cookieless session segment from a path that ends in an ``.aspx`` page.

    As :data:`_PATH_SESSION_PATTERNS` applied in turn: each removes the last segment after which a
    ``.aspx`` comes before any ``?``, found in time linear in the path (the regexes backtrack over
    every candidate segment, quadratic on a hostile path). A path with a newline (never one that
    :func:`surt` makes: it escapes them) keeps the regexes, whose ``.`` and ``$`` treat it apart.
    """
    if b"\n" in path:
        for pattern in _PATH_SESSION_PATTERNS:
            m = pattern.match(path)
            if m:
                path = m.group(1) + m.group(3)
        return path
    for segment in _PATH_SESSION_AT:
        path = _strip_one_path_session(path, segment)
    return path


def _strip_one_path_session(path: bytes, segment: re.Pattern[bytes]) -> bytes:
    aspx = _positions(path.lower(), b".aspx")
    if not aspx:
        return path
    questions = _positions(path, b"?")
    n = len(path)
    for slash in reversed(_positions(path, b"/(")):
        m = segment.match(path, slash + 1)
        if m is None:
            continue
        end = m.end()
        # then [^?]+\.aspx.*$: a ".aspx" at least one byte on, before the first "?"
        dot = _first_at_or_after(aspx, end + 1, n)
        if dot < n and dot < _first_at_or_after(questions, end, n):
            return path[: slash + 1] + path[end:]
    return path


def _inet_aton(host: bytes) -> bytes | None:
    """Dotted quad for an all-numeric host by glibc ``inet_aton`` rules, or None when it rejects it."""
    parts = host.split(b".")
    values = []
    for part in parts:
        if len(part) > 1 and part[:1] == b"0":
            if part.strip(b"01234567"):
                return None  # 8 or 9 in an octal part
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 0xFF for v in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    number = last
    for i, v in enumerate(head):
        number |= v << (24 - 8 * i)
    return _dotted(number)


def _dotted(number: int) -> bytes:
    return b"%d.%d.%d.%d" % (number >> 24 & 0xFF, number >> 16 & 0xFF, number >> 8 & 0xFF, number & 0xFF)


def numeric_host(host: bytes) -> bytes | None:
    """The dotted quad a numeric host stands for (``1.2`` is ``1.0.0.2``), or None for a name."""
    if host.isdigit():
        return _dotted(int(host) & 0xFFFFFFFF)  # masked to 32 bits, as the Wayback tools do
    if _DECIMAL_IP.fullmatch(host) or _OCTAL_IP.fullmatch(host):
        return _inet_aton(host)
    return None


def normalize_path(path: bytes | None) -> bytes:
    """Resolve ``.`` and ``..``, drop empty segments except a trailing one; never empty."""
    if not path:
        return b"/"
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(segment)  # ".." above the root is kept, as the Wayback tools do
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(s + b"/" for s in kept[:-1] if s) + kept[-1]


def _sort_query(query: bytes) -> bytes:
    """Sort ``&``-separated fields by (name, value), keeping ``a`` and ``a=`` distinct."""
    if len(query) <= 1:
        return query
    fields = sorted(tuple(arg.split(b"=", 1)) for arg in query.split(b"&"))
    return b"&".join(b"=".join(f) for f in fields)


def _canonical_host(host: bytes) -> bytes:
    host = unescape_repeatedly(host)
    if not host.isascii():
        # a host IDNA cannot encode keeps its raw bytes, percent-escaped below
        with contextlib.suppress(ValueError):
            host = host.decode("utf-8", "ignore").encode("idna")
    host = host.replace(b"..", b".").strip(b".")
    ip = numeric_host(host)
    return ip if ip is not None else escape_once(host.lower())


def _split(raw: bytes) -> tuple[bytes, bytes, bytes | None, bytes | None]:
    """(scheme, netloc, path or None, query or None) of a URL that starts with a scheme."""
    colon = raw.index(b":")
    scheme, rest = raw[:colon], raw[colon + 1 :]
    hash_at = rest.find(b"#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    rest, _, query = rest.partition(b"?")
    netloc = b""
    if rest.startswith(b"//"):
        slash = rest.find(b"/", 2)
        if slash < 0:
            netloc, rest = rest[2:], b""
        else:
            netloc, rest = rest[2:slash], rest[slash:]
    return scheme, netloc, rest or None, query or None


def _host_and_port(netloc: bytes) -> tuple[bytes | None, int | None]:
    """Host (lowercased, None when empty) and port (None when absent or 0), as urllib reads a netloc."""
    netloc = netloc.rstrip(b":")
    hostinfo = netloc.rpartition(b"@")[2]
    _, bracket, bracketed = hostinfo.partition(b"[")
    if bracket:
        host, _, port = bracketed.partition(b"]")
        port = port.partition(b":")[2]
    else:
        host, _, port = hostinfo.partition(b":")
    number = None
    if port:
        if not (port.isdigit() and port.isascii()) or int(port) > 65535:
            raise InputError(f"bad port {port.decode('utf-8', 'replace')!r}: a port is a number from 0 to 65535")
        number = int(port) or None
    if not host:
        return None, number
    name, percent, zone = host.partition(b"%")  # an IPv6 zone id keeps its case
    return name.lower() + percent + zone, number


def surt_bytes(url: bytes) -> bytes:
    """SURT of a URL given as UTF-8 bytes; see the module docstring for the steps."""
    if url.startswith(b"filedesc"):
        return url  # ARC file header lines pass through, as in CDX files
    raw = url.strip()
    if b"\t" in raw or b"\n" in raw or b"\r" in raw:
        raw = raw.translate(None, b"\t\n\r")
    if not raw:
        raise InputError("empty URL: give an absolute URL such as https://example.com/")
    if not _SCHEME.match(raw):
        raw = b"http://" + raw
    m = _REPEATED_HTTP.match(raw)
    if m:
        raw = m.group(1) + raw[m.end() :]

    scheme, netloc, path, query = _split(raw)
    host, port = _host_and_port(netloc)
    if scheme.startswith(b"http") and host is None and path is not None:
        host, _, rest = path.lstrip(b"/").partition(b"/")
        path = b"/" + rest

    if query:
        query = escape_once(unescape_repeatedly(query))
    if host:
        host = _canonical_host(host)
    if path is not None:
        path = unescape_repeatedly(path)
    if host:
        path = normalize_path(path)
    if path:
        path = escape_once(path).lower()
        if b"(" in path:
            path = strip_path_session_ids(path)
        if len(path) > 1 and path.endswith(b"/"):
            path = path[:-1]

    if host:
        host = host.lower()
        m = _WWW_LABEL.match(host)
        if m:
            host = host[m.end() :]
    default_port = {b"http": 80, b"https": 443}.get(scheme.lower(), 0)
    if port == default_port:
        port = None
    if query:
        query = _sort_query(strip_query_session_ids(query).lower()) or None

    if host:
        out = b",".join(reversed(host.split(b".")))
        if port is not None:
            out += b":%d" % port
        out += b")"
    else:
        out = scheme + b":"
    if path:
        out += path
    elif query is not None:
        out += b"/"
    if query is not None:
        out += b"?" + query
    return out


def surt_py(url: str) -> str:
    """SURT key of ``url`` (pure Python); raises InputError for an empty URL or a bad port."""
    try:
        raw = url.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"URL is not valid Unicode text: {url!r}") from None
    if not raw:
        raise InputError("empty URL: give an absolute URL such as https://example.com/")
    return surt_bytes(raw).decode("utf-8")


def surt_array_py(
    urls: UrlColumn, with_errors: bool = False
) -> pa.StringArray | tuple[pa.StringArray, pa.StringArray]:
    """:func:`surt_py` over every row (pure-Python twin of the compiled ``surt_array``).

    ``urls`` is a sequence of str or a pyarrow string array; the result is a pyarrow string array in
    input order, null for a null or bad row; with ``with_errors`` a pair ``(surts, errors)``.
    """
    from ccrawl.url.batch import map_rows

    return map_rows(surt_py, urls, with_errors)


_native = accel.native("surt")
surt: Callable[[str], str] = _native.surt if _native else surt_py
surt_array: Callable[..., Any] = _native.surt_array if _native else surt_array_py
"""SURT of every row of a sequence of str or a pyarrow string array: a pyarrow string array (null
for a null or bad row); ``with_errors=True`` returns ``(surts, errors)``. The compiled one runs its
C pass with the GIL released."""
