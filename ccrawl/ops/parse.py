"""The parse operation: decode local WARC, WAT or WET files (or stdin) into records.

One record per WARC record that passes the filters, with its location (``file``, ``offset``,
``length``), its WARC type, URL, date, HTTP status and media type. What else a record carries
depends on the format and the content flag:

* WET (``conversion`` records): ``text`` and ``content_language`` always (the shape
  ``index build --input`` reads);
* ``content="text"|"markdown"``: the page's text or Markdown, rendered by
  :mod:`ccrawl.extract` (its ``h2m`` engine) when it imports, else the ``<body>`` text by
  selectolax (Markdown then needs ccrawl.extract);
* ``content="links"``: ``links``, the page's outlinks resolved against its URL (for WAT
  metadata records: the links Common Crawl extracted);
* ``content="meta"``: ``title``, ``description``, ``canonical``, ``declared_language``.

``content`` is one kind, a comma list or a sequence of kinds, and the kinds add up: ``["markdown",
"meta"]`` gives ``title``, ``markdown``, ``description``, ``canonical`` and ``declared_language``
(every combination is allowed; one rendering of the page serves them all).

Filters: ``types`` (WARC-Type, a comma list), ``status`` (HTTP status), ``mime`` (a prefix of the
payload's media type), ``lang`` (ISO 639-3: a WET record's identified languages, else the language
ccrawl.extract detects in the page text), ``url`` (a substring of the target URI, or a glob with
``*``).

No record at all (an empty input, or filters that match nothing) is
:class:`~ccrawl.errors.NothingMatched` (exit 3), raised once every record was read.
Truncated or corrupt input yields the records that were whole, then raises
:class:`~ccrawl.errors.InputError` naming the file and offset (exit 1);
``skip_bad_records`` reports each skipped record on stderr and carries on.
"""

from __future__ import annotations

import fnmatch
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urljoin

from ccrawl.errors import NothingMatched, UsageError
from ccrawl.ops import batch_operation
from ccrawl.ops.caps import Bounds, Cap, Injected, ReadPath, Value
from ccrawl.ops.context import OpContext, context
from ccrawl.rowbatch import chunked, rows_of
from ccrawl.warc.reader import Record, decode_body, iter_records

if TYPE_CHECKING:
    import pyarrow as pa

Row = dict[str, Any]

COLUMNS = ("file", "offset", "length", "type", "url", "date", "status", "mime", "record_id")
CONTENT_KINDS = ("text", "markdown", "links", "meta")
FORMATS = ("warc", "wat", "wet")
_HTML = ("text/html", "application/xhtml+xml")


def detect_format(path: str) -> str:
    """``wat`` or ``wet`` from Common Crawl's file names (``*.warc.wat.gz``, ``*.warc.wet.gz``), else warc."""
    low = path.lower()
    if ".wat" in low:
        return "wat"
    if ".wet" in low:
        return "wet"
    return "warc"


def _text_of(record: Record) -> str:
    payload = decode_body(record).data if record.http_headers is not None else record.payload
    try:
        from ccrawl.extract.decode import decode_body as decode_text

        return decode_text(payload, record.http_header("Content-Type")).text
    except ImportError:
        return payload.decode("utf-8", errors="replace")


def _html_content(record: Record, kinds: Sequence[str]) -> Row:
    decoded = decode_body(record)  # at most the crawler's cap: a compression bomb stops there
    row = _html_rendered(decoded.data, record, kinds)
    if decoded.note:
        row["note"] = decoded.note
    return row


def _html_rendered(html: bytes, record: Record, kinds: Sequence[str]) -> Row:
    """The fields ``kinds`` ask for, from one rendering of the page (the fields add up)."""
    url = record.url or ""
    try:
        from ccrawl.extract.engines import get_extractor
    except ImportError:
        return _selectolax_content(html, url, kinds)
    out = get_extractor("h2m").extract(html, url, content_type=record.http_header("Content-Type"))
    row: Row = {}
    if "text" in kinds:
        row.update(title=out.title, text=out.text)
    if "markdown" in kinds:
        row.update(title=out.title, markdown=out.markdown)
    if "links" in kinds:
        row["links"] = list(out.outlinks)
    if "meta" in kinds:
        row.update(title=out.title, description=out.description, canonical=out.canonical,
                   declared_language=out.declared_language)
    return row


def _selectolax_content(html: bytes, url: str, kinds: Sequence[str]) -> Row:
    from selectolax.lexbor import LexborHTMLParser

    if "markdown" in kinds:
        raise UsageError("--markdown needs ccrawl.extract, which did not import; use --text instead")
    tree = LexborHTMLParser(html.decode("utf-8", errors="replace"))
    title_node = tree.css_first("title")
    title = title_node.text(strip=True) if title_node is not None else ""
    row: Row = {}
    if "links" in kinds:
        seen: dict[str, None] = {}
        for a in tree.css("a[href]"):
            href = (a.attributes.get("href") or "").strip()
            if href and not href.startswith(("javascript:", "mailto:", "#")):
                seen.setdefault(urljoin(url, href), None)
        row["links"] = list(seen)
    if "meta" in kinds:

        def attr(selector: str, name: str) -> str:
            node = tree.css_first(selector)
            return (node.attributes.get(name) or "") if node is not None else ""

        row.update(title=title, description=attr('meta[name="description"]', "content"),
                   canonical=attr('link[rel="canonical"]', "href"), declared_language=attr("html", "lang"))
    if "text" in kinds:
        tree.strip_tags(["script", "style", "template", "noscript"])
        body = tree.body
        row.update(title=title, text=body.text(separator="\n", strip=True) if body is not None else "")
    return row


def _wat_content(record: Record, kinds: Sequence[str]) -> Row:
    try:
        envelope = json.loads(record.payload)["Envelope"]
    except (ValueError, KeyError, TypeError):
        return {}
    html_meta = envelope.get("Payload-Metadata", {}).get("HTTP-Response-Metadata", {}).get("HTML-Metadata", {})
    row: Row = {}
    if "links" in kinds:
        base = record.url or ""
        row["links"] = [urljoin(base, link.get("url", "")) for link in html_meta.get("Links", []) if link.get("url")]
    if "meta" in kinds:
        row["title"] = html_meta.get("Head", {}).get("Title", "")
    return row


def _detected_language(record: Record) -> str:
    try:
        from ccrawl.extract.lang import detect_language
    except ImportError:
        return ""
    text = _html_content(record, ("text",)).get("text", "")
    return detect_language(str(text))[0]


def _matches(record: Record, *, types: set[str], status: int | None, mime: str | None, url: str | None) -> bool:
    if types and record.warc_type not in types:
        return False
    if status is not None and record.http_status != status:
        return False
    if mime and not record.mime.startswith(mime.lower()):
        return False
    if url:
        target = record.url or ""
        if "*" in url or "?" in url:
            return fnmatch.fnmatchcase(target, url)
        return url in target
    return True


#: the warc-fields of a warcinfo record worth a glance, in this order
_WARCINFO_FIELDS = ("isPartOf", "operator", "software", "format", "description", "robots")


def warcinfo_summary(record: Record) -> str:
    """What a warcinfo record is, in one line: the file it describes and its main warc-fields."""
    fields: dict[str, str] = {}
    for line in record.block.decode("utf-8", errors="replace").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() and value.strip():
            fields.setdefault(name.strip(), value.strip())
    parts = [f"{k}={fields[k]}" for k in _WARCINFO_FIELDS if k in fields]
    about = record.header("WARC-Filename")
    head = f"warcinfo of {about}" if about else "warcinfo"
    return f"{head}: {', '.join(parts)}" if parts else head


def content_kinds(content: str | Sequence[str] | None) -> tuple[str, ...]:
    """The content kinds asked for, in :data:`CONTENT_KINDS` order: ``content`` is one kind, a comma
    list (``"markdown,meta"``) or a sequence of kinds; a kind not known is a :class:`UsageError`."""
    items = [content] if isinstance(content, str) else list(content or ())
    asked = {k.strip().lower() for item in items for k in str(item).split(",") if k.strip()}
    unknown = sorted(asked.difference(CONTENT_KINDS))
    if unknown:
        raise UsageError(f"content {', '.join(map(repr, unknown))}: use any of text, markdown, links, meta "
                         "(--text, --markdown, --links, --meta)")
    return tuple(k for k in CONTENT_KINDS if k in asked)


def _row(record: Record, fmt: str, kinds: Sequence[str], lang_of: str | None) -> Row:
    row: Row = {
        "file": record.filename,
        "offset": record.offset,
        "length": record.length,
        "type": record.warc_type,
        "url": record.url,
        "date": record.date,
        "status": record.http_status,
        "mime": record.mime or None,
        "record_id": record.record_id,
    }
    if record.warc_type == "warcinfo":
        row["info"] = warcinfo_summary(record)
    if record.warc_type == "conversion" or (fmt == "wet" and record.warc_type != "warcinfo"):
        row["content_language"] = ",".join(record.languages) or None
        row["text"] = _text_of(record)
    elif lang_of:
        row["content_language"] = lang_of
    if not kinds:
        return row
    if fmt == "wat" and record.warc_type == "metadata":
        row.update(_wat_content(record, kinds))
    elif record.warc_type in ("response", "resource") and record.mime in _HTML:
        row.update(_html_content(record, kinds))
    return row


#: the declared fields of ``warc.parse``'s record batches, in the order a record's keys come
FIELDS = (
    ("file", "string"), ("offset", "int64"), ("length", "int64"), ("type", "string"), ("url", "string"),
    ("date", "string"), ("status", "int64"), ("mime", "string"), ("record_id", "string"), ("info", "string"),
    ("content_language", "string"), ("text", "string"), ("title", "string"), ("markdown", "string"),
    ("links", "list<string>"), ("description", "string"), ("canonical", "string"),
    ("declared_language", "string"), ("note", "string"),
)


@batch_operation("warc.parse", summary="Records of local WARC/WAT/WET files (or stdin)", columns=COLUMNS)
def warc_parse_batches(
    files: ReadPath[Sequence[str]],
    format: Value[str | None] = None,
    types: Value[Sequence[str]] = (),
    status: Annotated[int | None, Cap.VALUE, Bounds(0, 999)] = None,
    mime: Value[str | None] = None,
    lang: Value[str | None] = None,
    url: Value[str | None] = None,
    content: Value[Sequence[str] | None] = None,
    skip_bad_records: Value[bool] = False,
    verify_digests: Value[bool] = False,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[pa.RecordBatch]:
    """Every record of ``files`` (``-`` is stdin) passing the filters, with the content asked for, as record
    batches of :data:`FIELDS` (a chunk of records at a time); a skipped or noted record is a line to the
    context's notice."""
    return chunked(parse_rows(files, format=format, types=types, status=status, mime=mime, lang=lang, url=url,
                         content=content, skip_bad_records=skip_bad_records, verify_digests=verify_digests,
                         notice=context(ctx).notice), FIELDS)


def parse_rows(
    files: Sequence[str], *, format: str | None, types: Sequence[str], status: int | None, mime: str | None,
    lang: str | None, url: str | None, content: Sequence[str] | None, skip_bad_records: bool, verify_digests: bool,
    notice: Callable[[str], None] | None,
) -> Iterator[Row]:
    """The records of :func:`warc_parse_batches`, a dict each, as the reader gives them (what a chunk is made of)."""
    if format is not None and format not in FORMATS:
        raise UsageError(f"--format {format!r}: use warc, wat or wet")
    kinds = content_kinds(content)
    if not files:
        raise UsageError("parse needs a file, or - to read stdin")
    say = notice or (lambda msg: print(msg, file=sys.stderr, flush=True))
    wanted = {t.strip().lower() for item in types for t in item.split(",") if t.strip()}
    read = kept = 0
    for path in files:
        fmt = format or detect_format(path)
        records = iter_records(path, skip_bad_records=skip_bad_records, on_skip=notice, verify_digests=verify_digests)
        for record in records:
            read += 1
            if not _matches(record, types=wanted, status=status, mime=mime, url=url):
                continue
            found_lang: str | None = None
            if lang:
                langs = record.languages
                if not langs and record.warc_type in ("response", "resource") and record.mime in _HTML:
                    detected = _detected_language(record)
                    langs = [detected] if detected else []
                    found_lang = detected or None
                if lang.lower() not in langs:
                    continue
            kept += 1
            row = _row(record, fmt, kinds, found_lang)
            if row.get("note"):
                say(f"parse: {record.filename}@{record.offset}: {row['note']}")
            yield row
    if not kept:
        # Exit 3, like every query that ran and found nothing: a script can tell it from success.
        raise NothingMatched(f"parse: no record matched the filters ({read} records read)" if read
                             else "parse: the input holds no records")


#: ``warc.parse`` a dict a row, for a library caller
warc_parse = rows_of(warc_parse_batches)

#: the columns each content flag adds to every output format; ``note`` says when the payload was cut
#: at the decoding cap (a compression bomb)
CONTENT_COLUMNS = {
    "text": ("title", "text", "note"),
    "markdown": ("title", "markdown", "note"),
    "links": ("links", "note"),
    "meta": ("title", "description", "canonical", "declared_language", "note"),
}

__all__ = [
    "COLUMNS", "CONTENT_COLUMNS", "CONTENT_KINDS", "FIELDS", "FORMATS", "content_kinds", "detect_format", "parse_rows",
    "warc_parse", "warc_parse_batches", "warcinfo_summary",
]
