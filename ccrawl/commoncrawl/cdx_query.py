"""A CDX query: the URL pattern, the filters, which of them go to the index server and which stay here.

The index server is pywb. Its ``filter=`` rules, which :class:`CdxQuery` writes and
:func:`filter_matches` re-applies to what comes back:

* ``[!][=|~]field:value``; ``=`` is an exact match, ``~`` a regex matched from the start of the
  value (Python ``re.match``), neither a substring; ``!`` negates; no ``field:`` means the whole
  CDX line.

What each flag becomes on the wire:

========================  ==========================================================
``--status 200``          ``=status:200`` (``--status !404`` gives ``!=status:404``)
``--mime text/html``      ``~mime:text/html``: a prefix, so ``text/`` matches every text type
``--lang eng``            ``~languages:(?:.*,)?eng(?:,|$)``: one of the record's languages
``--filter EXPR``         ``EXPR`` verbatim
``--url-contains S``      ``~url:.*S.*`` with S regex-escaped (the seed's form)
``--url-not-contains S``  ``!~url:.*S.*``
``--from`` / ``--to``     ``from=`` / ``to=`` as 1-14 digits (``2023-06`` is ``202306``)
========================  ==========================================================

With ``push_filters=False`` the two URL substring filters stay off the wire and are applied
here only; everything else is still sent, and every filter is checked again on what the server
sent, which costs nothing and means a server that filtered differently cannot widen the result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from ccrawl.errors import UsageError

__all__ = ["MATCH_TYPES", "CdxQuery", "filter_matches", "normalise_timestamp"]

MATCH_TYPES = ("exact", "prefix", "host", "domain")


def normalise_timestamp(value: str, *, flag: str) -> str:
    """``2023-06``, ``2023-06-01T12:00``, ``20230601`` -> the digits pywb takes (1-14 of them)."""
    digits = "".join(ch for ch in value if ch.isdigit())
    if not digits or len(digits) > 14 or len(digits) < 4:
        raise UsageError(f"{flag} {value!r}: write a date like 2023, 2023-06, 2023-06-01 or 20230601120000")
    return digits


def pad_timestamp(digits: str, *, up: bool) -> str:
    """A partial timestamp padded to 14 digits, to the start (``up=False``) or end of its span."""
    return digits + ("99991231235959"[len(digits) :] if up else "00000101000000"[len(digits) :])


@dataclass(frozen=True, slots=True)
class _Rule:
    invert: bool
    mode: str  # exact | regex | contains
    field: str
    value: str
    regex: re.Pattern[str] | None


_ALT_FIELDS = {"statuscode": "status", "mimetype": "mime", "original": "url"}


def _compile(expr: str) -> _Rule:
    text = expr
    invert = text.startswith("!")
    if invert:
        text = text[1:]
    mode = "contains"
    if text.startswith("="):
        mode, text = "exact", text[1:]
    elif text.startswith("~"):
        mode, text = "regex", text[1:]
    name, sep, value = text.partition(":")
    if not sep:
        name, value = "", text
    try:
        regex = re.compile(value) if mode == "regex" else None
    except re.error as exc:
        raise UsageError(f"--filter {expr!r}: the regex does not compile ({exc})") from None
    return _Rule(invert, mode, _ALT_FIELDS.get(name, name), value, regex)


def filter_matches(rule: _Rule, row: Mapping[str, object], line: str = "") -> bool:
    """pywb's verdict for one rule on one CDX row (``line`` is the whole line, for field-less rules)."""
    value = str(row.get(rule.field, "")) if rule.field else line
    if rule.mode == "exact":
        hit = value == rule.value
    elif rule.regex is not None:
        hit = rule.regex.match(value) is not None
    else:
        hit = rule.value in value
    return hit != rule.invert


@dataclass(frozen=True)
class CdxQuery:
    """What to ask the index for; :meth:`params` is what goes on the wire."""

    url: str
    match: str | None = None
    status: str | None = None
    mime: str | None = None
    lang: str | None = None
    filters: tuple[str, ...] = ()
    url_contains: tuple[str, ...] = ()
    url_not_contains: tuple[str, ...] = ()
    from_ts: str | None = None
    to_ts: str | None = None
    push_filters: bool = True
    _rules: tuple[tuple[str, _Rule, bool], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.url or not self.url.strip():
            raise UsageError("search needs a URL or a pattern such as example.com/* or *.example.com")
        if self.match is not None and self.match not in MATCH_TYPES:
            raise UsageError(f"--match {self.match!r}: use one of {', '.join(MATCH_TYPES)}")
        if self.status is not None and not self.status.lstrip("!").isdigit():
            raise UsageError(f"--status {self.status!r}: give an HTTP status such as 200 (or !404 to exclude one)")
        if self.lang is not None and not re.fullmatch(r"[a-z]{2,3}", self.lang):
            raise UsageError(f"--lang {self.lang!r}: give an ISO 639-3 code such as eng (Common Crawl's codes)")
        rules: list[tuple[str, _Rule, bool]] = []
        for desc, expr, pushed in self._filter_exprs():
            rules.append((desc, _compile(expr), pushed))
        object.__setattr__(self, "_rules", tuple(rules))

    # -- the wire ------------------------------------------------------------------------------

    def target(self) -> tuple[str, str]:
        """The ``url`` and ``matchType`` sent: ``*.x`` is domain, ``x/*`` prefix, unless --match says."""
        url, match = self.url.strip(), "exact"
        if url.startswith("*."):
            url, match = url[2:], "domain"
        elif url.endswith("*"):
            url, match = url[:-1], "prefix"
        return url, self.match or match

    def _filter_exprs(self) -> list[tuple[str, str, bool]]:
        """(flag as the user wrote it, filter expression, sent to the server?)."""
        out: list[tuple[str, str, bool]] = []
        if self.status is not None:
            neg = self.status.startswith("!")
            out.append((f"--status {self.status}", f"{'!' if neg else ''}=status:{self.status.lstrip('!')}", True))
        if self.mime is not None:
            out.append((f"--mime {self.mime}", f"~mime:{re.escape(self.mime)}", True))
        if self.lang is not None:
            out.append((f"--lang {self.lang}", f"~languages:(?:.*,)?{self.lang}(?:,|$)", True))
        for expr in self.filters:
            out.append((f"--filter {expr}", expr, True))
        for s in self.url_contains:
            out.append((f"--url-contains {s}", f"~url:.*{re.escape(s)}.*", self.push_filters))
        for s in self.url_not_contains:
            out.append((f"--url-not-contains {s}", f"!~url:.*{re.escape(s)}.*", self.push_filters))
        return out

    def params(self) -> list[tuple[str, str]]:
        """The query parameters, sorted by name the way the seed's ``--explain`` prints them."""
        url, match = self.target()
        params: list[tuple[str, str]] = [("filter", expr) for _, expr, pushed in self._filter_exprs() if pushed]
        if self.from_ts:
            params.append(("from", normalise_timestamp(self.from_ts, flag="--from")))
        if match != "exact":
            params.append(("matchType", match))
        params.append(("output", "json"))
        if self.to_ts:
            params.append(("to", normalise_timestamp(self.to_ts, flag="--to")))
        params.append(("url", url))
        return sorted(params, key=lambda kv: kv[0])

    def request_url(self, endpoint: str, extra: Sequence[tuple[str, str]] = ()) -> str:
        """The full request URL against ``endpoint`` (``.../CC-MAIN-2024-10-index``)."""
        return f"{endpoint}?{urlencode(self.params() + list(extra))}"

    # -- what the user sees in --explain -------------------------------------------------------

    def pushed(self) -> list[str]:
        out = [desc for desc, _, pushed in self._rules if pushed]
        if self.from_ts:
            out.append(f"--from {self.from_ts}")
        if self.to_ts:
            out.append(f"--to {self.to_ts}")
        return out

    def rechecked(self) -> list[str]:
        """Flags applied here again on what the server sent."""
        return [desc for desc, _, pushed in self._rules if pushed and desc.startswith("--url-")]

    def local_only(self) -> list[str]:
        return [desc for desc, _, pushed in self._rules if not pushed]

    # -- here ----------------------------------------------------------------------------------

    def keeps(self, row: Mapping[str, object]) -> bool:
        """Every filter, pushed or not, and the date bounds, checked on one row the server sent."""
        line = ""
        if any(not rule.field for _, rule, _ in self._rules):
            import json

            line = f"{row.get('urlkey', '')} {row.get('timestamp', '')} {json.dumps(dict(row))}"
        for _, rule, _ in self._rules:
            if not filter_matches(rule, row, line):
                return False
        ts = str(row.get("timestamp", ""))
        if self.from_ts and ts < pad_timestamp(normalise_timestamp(self.from_ts, flag="--from"), up=False):
            return False
        return not (self.to_ts and ts > pad_timestamp(normalise_timestamp(self.to_ts, flag="--to"), up=True))
