"""The columnar filters, once: what a flag means, as SQL and as pruning ranges over ``url_surtkey``.

Every engine answers the same :class:`Filters`. Their meaning, column by column:

* ``domains`` (``--domain``, ``--domains-file``): ``url_host_registered_domain`` is one of them;
* ``hosts`` (``--host``, ``--hosts-file``): ``url_host_name`` is one of them (lowercased);
* ``tlds`` / ``mimes`` / ``statuses`` / ``subsets``: ``url_host_tld`` / ``content_mime_type`` /
  ``fetch_status`` / the ``subset`` partition is one of them;
* ``langs``: one of them is among the comma-separated ``content_languages``;
* ``path_prefix``: ``url_path`` starts with it;
* the negations (``--not-tld`` ...): the column is missing (NULL) **or** none of the values, so
  ``--not-lang vie`` keeps the captures Common Crawl never labelled.

Hosts, domains and TLDs also give :meth:`Filters.surt_prefixes`: every matching row's
``url_surtkey`` starts with one of them (the host's labels reversed, a leading ``www`` dropped, since
Common Crawl's SURT drops it), and the parts are sorted by ``url_surtkey``, so a part or a row
group whose min..max holds none of the prefixes cannot match. The prefixes only prune; the exact
test is always on the host/domain/TLD column, so a looser prefix costs bytes, never answers.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ccrawl.errors import InputError, UsageError

SUBSETS = ("warc", "crawldiagnostics", "robotstxt")
_WWW = re.compile(r"^www\d*$")
_HOST = re.compile(r"^[a-z0-9_.:\[\]-]+$")


@dataclass(slots=True, frozen=True)
class Filters:
    """The filter flags of a columnar query; empty tuples mean "no condition"."""

    domains: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    tlds: tuple[str, ...] = ()
    mimes: tuple[str, ...] = ()
    statuses: tuple[int, ...] = ()
    langs: tuple[str, ...] = ()
    path_prefix: str | None = None
    subsets: tuple[str, ...] = ()
    not_tlds: tuple[str, ...] = ()
    not_mimes: tuple[str, ...] = ()
    not_langs: tuple[str, ...] = ()
    not_statuses: tuple[int, ...] = ()
    crawls: tuple[str, ...] = field(default=())

    def with_crawls(self, crawls: Sequence[str]) -> Filters:
        return replace(self, crawls=tuple(crawls))

    # -- pruning ---------------------------------------------------------------------------------

    def surt_prefixes(self) -> list[str] | None:
        """Sorted prefixes every matching ``url_surtkey`` starts with, or None when any key may match."""
        sets: list[set[str]] = []
        if self.hosts:
            sets.append({host_prefix(h) for h in self.hosts})
        if self.domains:
            sets.append({host_prefix(d) for d in self.domains})
        if self.tlds:
            sets.append({t for t in self.tlds})
        if not sets:
            return None
        # Several kinds at once: a row must satisfy all, so any one set is a sound (if loose) bound;
        # the smallest is the tightest cheap choice.
        best = min(sets, key=len)
        return sorted(_drop_nested(best))

    def keeps_subset(self, subset: str) -> bool:
        return not self.subsets or subset in self.subsets

    def keeps_crawl(self, crawl: str) -> bool:
        return not self.crawls or crawl in self.crawls


def host_prefix(host: str) -> str:
    """``www.news.example.com`` -> ``com,example,news``: the start of every url_surtkey of that host."""
    labels = host.lower().strip(".").split(".")
    if len(labels) > 1 and _WWW.match(labels[0]):
        labels = labels[1:]
    return ",".join(reversed(labels))


def _drop_nested(prefixes: set[str]) -> list[str]:
    """Drop a prefix another one already covers (``com,example`` covers ``com,example,news``)."""
    out: list[str] = []
    for p in sorted(prefixes):
        if out and p.startswith(out[-1]):
            continue
        out.append(p)
    return out


def range_may_match(prefixes: Sequence[str], lo: str, hi: str) -> bool:
    """Whether some key in ``[lo, hi]`` can start with one of ``prefixes`` (sorted, none nested).

    Either a prefix sorts inside the range, or the last prefix before ``lo`` is a prefix of ``lo``
    (with no nested prefixes, a string between ``p`` and ``lo`` that ``lo`` starts with would
    itself start with ``p``, so that one candidate is enough).
    """
    if bisect.bisect_left(prefixes, lo) < bisect.bisect_right(prefixes, hi):
        return True
    i = bisect.bisect_right(prefixes, lo) - 1
    return i >= 0 and lo.startswith(prefixes[i])


#: The most ``--hosts-file`` / ``--domains-file`` may hold; a larger file is refused, not read.
MAX_LIST_BYTES = 64 << 20


def _read_capped(path: str | Path, flag: str) -> bytes:
    """The bytes of the regular file ``path``, at most :data:`MAX_LIST_BYTES`.

    A device, a FIFO or a directory is refused before it is opened for reading (a FIFO would block
    the open, ``/dev/zero`` never ends); the open itself is non-blocking and checked again, in case
    the path was swapped between the two looks. No error quotes the file's content.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise UsageError(f"{flag}: not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise UsageError(f"{flag}: no such file") from None
    except OSError as exc:
        raise InputError(f"{flag}: cannot read it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise UsageError(f"{flag}: not a regular file")
        try:
            data = fh.read(MAX_LIST_BYTES + 1)
        except OSError as exc:
            raise InputError(f"{flag}: cannot read it ({exc.strerror})") from None
    if len(data) > MAX_LIST_BYTES:
        raise UsageError(f"{flag}: larger than {_size(MAX_LIST_BYTES)}; split it or narrow it")
    return data


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} bytes"


def read_list(path: str | Path, *, what: str) -> tuple[str, ...]:
    """One value a line from ``path``: blanks and ``#`` comments skipped, lowercased, deduplicated.

    ``path`` must be a regular file of at most :data:`MAX_LIST_BYTES`; a bad line is named by its
    number, never quoted (the file may not be what the caller meant to share).
    """
    flag = f"--{what}s-file {path}"
    data = _read_capped(path, flag)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{flag}:{bad_line}: not UTF-8 text") from None
    values: dict[str, None] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip().lower()
        if not line:
            continue
        if not _HOST.match(line):
            raise InputError(f"{flag}:{n}: not a {what} name (one {what} a line, # for comments)")
        values[line.strip(".")] = None
    if not values:
        raise UsageError(f"{flag}: holds no {what} (only blanks and comments)")
    return tuple(values)


def clean_values(values: Iterable[str], flag: str) -> tuple[str, ...]:
    """Values of a repeatable flag; a comma list counts as several; empty ones refused."""
    out: list[str] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                raise UsageError(f"{flag}: empty value")
            out.append(part)
    return tuple(dict.fromkeys(out))


def clean_statuses(values: Iterable[str], flag: str) -> tuple[int, ...]:
    out = []
    for v in clean_values(values, flag):
        if not v.isdigit() or not 100 <= int(v) <= 999:
            raise UsageError(f"{flag} {v!r}: give an HTTP status such as 200")
        out.append(int(v))
    return tuple(out)


def build(
    *,
    domain: Iterable[str] = (),
    host: Iterable[str] = (),
    tld: Iterable[str] = (),
    mime: Iterable[str] = (),
    status: Iterable[str] = (),
    lang: Iterable[str] = (),
    path_prefix: str | None = None,
    subset: Iterable[str] = (),
    not_tld: Iterable[str] = (),
    not_mime: Iterable[str] = (),
    not_lang: Iterable[str] = (),
    not_status: Iterable[str] = (),
    hosts_file: str | None = None,
    domains_file: str | None = None,
) -> Filters:
    """:class:`Filters` from flag values, with a clear error for a bad one."""
    hosts = tuple(h.lower().strip(".") for h in clean_values(host, "--host"))
    domains = tuple(d.lower().strip(".") for d in clean_values(domain, "--domain"))
    if hosts_file:
        hosts = tuple(dict.fromkeys(hosts + read_list(hosts_file, what="host")))
    if domains_file:
        domains = tuple(dict.fromkeys(domains + read_list(domains_file, what="domain")))
    subsets = clean_values(subset, "--subset")
    for s in subsets:
        if s not in SUBSETS:
            raise UsageError(f"--subset {s!r}: use one of {', '.join(SUBSETS)}")
    for flag, values in (("--lang", lang), ("--not-lang", not_lang)):
        for code in clean_values(values, flag):
            if not re.fullmatch(r"[a-z]{2,3}", code):
                raise UsageError(f"{flag} {code!r}: give an ISO 639-3 code such as vie")
    if path_prefix is not None and not path_prefix.startswith("/"):
        raise UsageError(f"--path-prefix {path_prefix!r}: a URL path starts with /")
    return Filters(
        domains=domains,
        hosts=hosts,
        tlds=tuple(t.lower().lstrip(".") for t in clean_values(tld, "--tld")),
        mimes=clean_values(mime, "--mime"),
        statuses=clean_statuses(status, "--status"),
        langs=clean_values(lang, "--lang"),
        path_prefix=path_prefix,
        subsets=subsets,
        not_tlds=tuple(t.lower().lstrip(".") for t in clean_values(not_tld, "--not-tld")),
        not_mimes=clean_values(not_mime, "--not-mime"),
        not_langs=clean_values(not_lang, "--not-lang"),
        not_statuses=clean_statuses(not_status, "--not-status"),
    )
