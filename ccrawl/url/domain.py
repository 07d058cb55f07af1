"""Registered domains from the Public Suffix List, and the shard key and shard a URL or host belongs to.

``registered_domain("a.b.example.co.uk") == "example.co.uk"``;
``shard_of("https://a.example.co.uk/x", 3)`` is FNV-1a 64 of ``b"example.co.uk"`` modulo 3.

The list is the vendored ``ccrawl/data/psl/public_suffix_list.dat`` (its version, commit, date and
sha256 are in the ``public_suffix_list.json`` beside it; ``scripts/refresh_psl.py`` refreshes both).
It is read **with its private section** by default, for three reasons: the original Go tool's
shard key (``golang.org/x/net/publicsuffix``) uses the whole list, and a mixed fleet only agrees
on shards when both sides use the same rules; the PSL's own test cases assume it (``uk.com`` is a
private entry); and a private entry such as ``github.io`` marks where independent sites begin, which
is the unit of ownership. ``registered_domain(host, include_private=False)`` gives the ICANN-only
answer (what tldextract gives by default) for a user who wants it.

Rules: the longest matching rule wins, an exception rule (``!www.ck``) makes its parent the suffix,
a wildcard (``*.ck``) matches one label, and a host no rule covers falls to the implicit ``*`` (its
last label is the suffix). The registered domain is the suffix plus one label; a host that *is* a
suffix (``co.uk``), a single-label host, an IP address, a host with an empty label or a leading dot
has none (None), and so has a host that DNS could not carry: longer than :data:`MAX_HOST_LEN` (253)
characters as given or bytes in its ASCII form, or with a label over :data:`MAX_LABEL_LEN` (63) bytes
in its ASCII form. The lookup walks at most the longest rule's label count from the right, so its
cost is linear in the host's length whatever the number of labels.

Hosts: given as a host, ``host:port``, ``[ipv6]:port`` or an absolute URL (``scheme://...``). The
host is lowercased and one trailing dot dropped. Non-ASCII labels are matched through their IDNA
(UTS 46) ASCII form; :func:`registered_domain` answers in the form it was asked in (``食狮.com.cn``
gives ``食狮.com.cn``, ``xn--85x722f.com.cn`` gives ``xn--85x722f.com.cn``), while the shard key is
always the ASCII form, so an IDN and its punycode spelling land on the same shard. (The Go tool
matches a Unicode host against its ASCII table as written; Common Crawl URLs carry punycode hosts,
where the two agree.)

Shard key: the registered domain, else the lowercased ASCII host (``localhost``, ``1.2.3.4``,
``::1``), else ``""`` for input with no host at all. A host over :data:`MAX_HOST_LEN` characters is
its own key as given (lowercased, not IDNA-encoded: no DNS name is that long, so there is no ASCII
spelling to agree with). Shard: FNV-1a 64 of the key's UTF-8 bytes modulo
the shard count, with ``""`` always on shard 0.

:func:`registered_domain`, :func:`shard_key`, :func:`shard_of` and :func:`fnv1a64` are the compiled
ones when ``ccrawl._native.domain`` is built, else the ``*_py`` twins; both give the same output.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl import accel
from ccrawl.errors import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.jsontypes import JSONObject
    from ccrawl.url.batch import UrlColumn

__all__ = [
    "MAX_HOST_LEN",
    "MAX_LABEL_LEN",
    "PSL_PATH",
    "domain_columns",
    "domain_columns_py",
    "fnv1a64",
    "fnv1a64_py",
    "host_of",
    "psl_info",
    "registered_domain",
    "registered_domain_py",
    "shard_array",
    "shard_array_py",
    "shard_key",
    "shard_key_py",
    "shard_of",
    "shard_of_py",
]

PSL_PATH = Path(__file__).resolve().parent.parent / "data" / "psl" / "public_suffix_list.dat"
PSL_SIDECAR = PSL_PATH.with_suffix(".json")

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = 0xFFFFFFFFFFFFFFFF

# DNS limits (RFC 1035, without the trailing dot): a longer host or label has no registered domain.
MAX_HOST_LEN = 253
MAX_LABEL_LEN = 63

# UTS 46 maps these to "." before a host is split into labels.
_IDEOGRAPHIC_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def psl_info() -> JSONObject:
    """The sidecar of the vendored list: source, version, commit, date, sha256, rule counts."""
    info: JSONObject = json.loads(PSL_SIDECAR.read_text())
    return info


def _rule_to_ascii(rule: str) -> str:
    # Rules are published lowercased and NFC-normalised, so plain punycode is their IDNA form.
    return ".".join(
        label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii") for label in rule.split(".")
    )


def parse_psl(text: str) -> tuple[dict[str, bool], dict[str, bool], dict[str, bool]]:
    """(exact rules, wildcard bases, exception rules), each mapping the ASCII rule to ``is_private``.

    ``*.ck`` is stored as wildcard base ``ck``; ``!www.ck`` as exception ``www.ck``.
    """
    exact: dict[str, bool] = {}
    wildcard: dict[str, bool] = {}
    exception: dict[str, bool] = {}
    private = False
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("//"):
            if "===BEGIN PRIVATE DOMAINS===" in line:
                private = True
            elif "===END PRIVATE DOMAINS===" in line:
                private = False
            continue
        rule = _rule_to_ascii(line.split()[0].lower())
        if rule.startswith("!"):
            exception[rule[1:]] = private
        elif rule.startswith("*."):
            wildcard[rule[2:]] = private
        else:
            exact[rule] = private
    return exact, wildcard, exception


@lru_cache(maxsize=1)
def rules() -> tuple[dict[str, bool], dict[str, bool], dict[str, bool]]:
    """The vendored list, parsed once per process."""
    return parse_psl(PSL_PATH.read_text(encoding="utf-8"))


def host_of(url_or_host: str) -> str | None:
    """The host of an absolute URL, ``host``, ``host:port`` or ``[ipv6]:port``; None when there is none.

    The host is lowercased (ASCII letters and, for IDNs, Unicode), brackets are removed from IPv6
    literals and one trailing dot is dropped.
    """
    s = url_or_host.strip()
    at = s.find("://")
    if at >= 0:
        s = s[at + 3 :]
    elif s.startswith("//"):
        s = s[2:]
    for sep in "/?#":
        cut = s.find(sep)
        if cut >= 0:
            s = s[:cut]
    s = s.rpartition("@")[2]
    if s.startswith("["):
        close = s.find("]")
        host = s[1:close] if close > 0 else ""
    else:
        host = s.partition(":")[0]
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    return host or None


def _label_to_ascii(label: str) -> str | None:
    import idna  # only non-ASCII hosts get here

    try:
        return idna.encode(label, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        try:
            return label.encode("idna").decode("ascii")  # IDNA 2003, more lenient
        except UnicodeError:
            return None


def ascii_host(host: str) -> str | None:
    """``host`` with every non-ASCII label in its IDNA ASCII form; None when a label cannot be encoded."""
    if host.isascii():
        return host
    labels = []
    for label in host.translate(_IDEOGRAPHIC_DOTS).split("."):
        if label.isascii():
            labels.append(label)
            continue
        encoded = _label_to_ascii(label)
        if encoded is None:
            return None
        labels.append(encoded)
    return ".".join(labels)


def _not_a_domain(host: str) -> bool:
    """True for an IP address (v4 or v6), a leading dot or an empty label."""
    if ":" in host or host.startswith(".") or ".." in host:
        return True
    last = host[host.rfind(".") + 1 :]
    return last.isdigit()  # no TLD is numeric: 1.2.3.4 (and 1.2) are addresses


@lru_cache(maxsize=1)
def max_rule_labels() -> int:
    """The most labels a rule of the vendored list can match (a wildcard matches one more than its base)."""
    exact, wildcard, exception = rules()
    counts = [r.count(".") + 1 for r in (*exact, *exception)] + [r.count(".") + 2 for r in wildcard]
    return max(counts, default=1)


def suffix_labels(ascii_name: str, include_private: bool = True) -> int:
    """How many trailing labels of ``ascii_name`` form its public suffix (at least 1).

    Only the rightmost :func:`max_rule_labels` labels can match a rule, so the walk starts there:
    linear in the name's length however many labels it has.
    """
    exact, wildcard, exception = rules()
    start = 0
    labels = ascii_name.count(".") + 1
    most = max_rule_labels()
    if labels > most:
        dot = len(ascii_name)
        for _ in range(most):
            dot = ascii_name.rfind(".", 0, dot)
        start = dot + 1
        labels = most
    while True:
        candidate = ascii_name[start:]
        dot = ascii_name.find(".", start)
        private = exception.get(candidate)
        if private is not None and (include_private or not private):
            return labels - 1
        private = exact.get(candidate)
        if private is not None and (include_private or not private):
            return labels
        if dot < 0:
            return 1  # the implicit "*" rule
        private = wildcard.get(ascii_name[dot + 1 :])
        if private is not None and (include_private or not private):
            return labels
        start = dot + 1
        labels -= 1


def _registered(host: str, include_private: bool) -> tuple[str, str] | None:
    """(registered domain as written, in ASCII) for a lowercased host, or None."""
    if len(host) > MAX_HOST_LEN or _not_a_domain(host):
        return None  # the length first: IDNA is not run on a host DNS could not carry
    name = ascii_host(host)
    if name is None or ".." in name or name.startswith(".") or name.endswith("."):
        return None
    if len(name) > MAX_HOST_LEN or max(map(len, name.split("."))) > MAX_LABEL_LEN:
        return None
    keep = suffix_labels(name, include_private) + 1
    ascii_labels = name.split(".")
    if len(ascii_labels) < keep:
        return None
    ascii_domain = ".".join(ascii_labels[-keep:])
    if name is host:
        return ascii_domain, ascii_domain
    return ".".join(host.translate(_IDEOGRAPHIC_DOTS).split(".")[-keep:]), ascii_domain


def registered_domain_py(host: str | None, include_private: bool = True) -> str | None:
    """Registered domain (eTLD+1) of a host, ``host:port`` or URL; None when it has none."""
    if not host:
        return None
    name = host_of(host)
    if name is None:
        return None
    found = _registered(name, include_private)
    return found[0] if found else None


def fnv1a64_py(data: bytes) -> int:
    """FNV-1a 64-bit hash of ``data``."""
    h = FNV64_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV64_PRIME) & _MASK64
    return h


def shard_key_py(url_or_host: str) -> str:
    """The registered domain in ASCII, else the lowercased ASCII host, else ``""`` (no host)."""
    host = host_of(url_or_host)
    if host is None:
        return ""
    found = _registered(host, True)
    if found:
        return found[1]
    if len(host) > MAX_HOST_LEN:
        return host  # no DNS name is this long: no IDNA (linear, but slow on 100k labels) for it
    return ascii_host(host) or host


def _check_shards(n: int) -> None:
    if n < 1:
        raise UsageError(f"--shards must be at least 1 (got {n})")


def shard_of_py(url_or_host: str, n: int) -> int:
    """Shard ``0..n-1`` of a URL or host: FNV-1a 64 of its shard key modulo ``n``; no host -> 0."""
    _check_shards(n)
    key = shard_key_py(url_or_host)
    if not key:
        return 0
    return fnv1a64_py(key.encode("utf-8")) % n


def domain_columns_py(
    urls: UrlColumn, include_private: bool = True
) -> tuple[pa.StringArray, pa.StringArray, pa.StringArray]:
    """``(host, registered_domain, shard_key)`` pyarrow string arrays for every row (twin of the
    compiled ``domain_columns``): host null for no host, registered domain null when there is none,
    shard key ``""`` for no host; all three null for a null row."""
    import pyarrow as pa

    from ccrawl.url.batch import rows_of

    hosts: list[str | None] = []
    domains: list[str | None] = []
    keys: list[str | None] = []
    for row in rows_of(urls):
        if row is None:
            hosts.append(None)
            domains.append(None)
            keys.append(None)
            continue
        hosts.append(host_of(row))
        domains.append(registered_domain_py(row, include_private))
        keys.append(shard_key_py(row))
    return pa.array(hosts, pa.string()), pa.array(domains, pa.string()), pa.array(keys, pa.string())


def shard_array_py(urls: UrlColumn, shards: int) -> pa.UInt32Array:
    """Shard of every row, a pyarrow uint32 array (no host: 0; null row: null); twin of ``shard_array``."""
    import pyarrow as pa

    _check_shards(shards)
    keys = domain_columns_py(urls)[2].to_pylist()
    return pa.array(
        [None if k is None else (fnv1a64_py(k.encode("utf-8")) % shards if k else 0) for k in keys], pa.uint32()
    )


_native = accel.native("domain")
if _native is not None:
    _table = _native.SuffixTable(*rules())
    registered_domain: Callable[..., str | None] = _table.registered_domain
    shard_key: Callable[[str], str] = _table.shard_key
    shard_of: Callable[[str, int], int] = _table.shard_of
    fnv1a64: Callable[[bytes], int] = _native.fnv1a64
    domain_columns: Callable[..., tuple[pa.StringArray, pa.StringArray, pa.StringArray]] = _table.domain_columns
    shard_array: Callable[[UrlColumn, int], pa.UInt32Array] = _table.shard_array
else:
    registered_domain = registered_domain_py
    shard_key = shard_key_py
    shard_of = shard_of_py
    fnv1a64 = fnv1a64_py
    domain_columns = domain_columns_py
    shard_array = shard_array_py
