"""The synthetic web: one aiohttp app answering for any number of host names, with fault endpoints.

Every host name under ``.test`` is served by the same app (it reads the Host header), so a
fetcher pointed at it through a resolver override (``FetchConfig.resolve={"*.test": "127.0.0.1"}``)
or through the small DNS server started beside it sees a web of many sites on loopback.

Sites: ``site{i}.test`` for i < ``hosts``, each with a home page ``/`` and pages ``/p/{n}`` for
n < ``pages``: realistic HTML (title, headings, paragraphs, links within and across sites) in one
of seven languages, with ETag / Last-Modified validators honoured by a 304.

The first label of a host name picks its robots.txt: ``rdeny-*`` disallows everything,
``r404-*`` answers 404, ``r5xx-*`` 503, ``r429-*`` 429, ``rslow-*`` stalls ``robots_stall``
seconds, ``rdelay-*`` sets ``Crawl-delay: crawl_delay``, ``rredirect-*`` redirects to the file,
``rloop-*`` redirects robots.txt to itself; any other host disallows ``/private/`` only.

Fault endpoints (any host), listed with a URL each by :meth:`SynthWeb.catalog`::

    /fault/slow-ttfb?s=S        head after S seconds          /fault/slow-body?s=S   body stalls S s
    /fault/reset                RST before any answer         /fault/reset-mid-body  RST mid-body
    /fault/redirect/N           N hops, then a page           /fault/loop/a          a -> b -> a
    /fault/redirect-cross       to another host               /fault/self-redirect   to itself
    /fault/redirect-private     into /private/ (disallowed by the default robots.txt)
    /fault/encoding/CODING      gzip, br, deflate or zstd body (identity if not offered)
    /fault/big?mb=M             M MB with a Content-Length    /fault/big-chunked?mb=M  same, chunked
    /fault/broken-chunked       invalid chunk framing         /fault/short-body      fewer bytes than declared
    /fault/pdf  /fault/json     non-HTML types                /fault/status/CODE     that status
    /fault/huge-header?kb=K     one K KB header value         /fault/many-headers?n=N  N headers

Beside the HTTP port: a TLS port with a self-signed certificate (needs ``trustme``), a closed
port (connections refused) and a DNS server answering A records for ``.test`` with 127.0.0.1
and NXDOMAIN for anything else (``.invalid`` names included), optionally slowly, counting the
queries it has in flight. Run standalone::

    python -m ccrawl.testing.synthweb --port 0 --hosts 100 --pages 10

prints the HTTP port on the first line, a JSON line with every port and the resolver settings on
the second, then serves until SIGINT / SIGTERM. ``--urls-out FILE`` writes the catalog as JSONL.
"""

from ccrawl.testing.synthweb.app import SynthStats, SynthWeb
from ccrawl.testing.synthweb.pages import DOMAIN, LANGUAGES, LAST_MODIFIED, page_html, site_host
from ccrawl.testing.synthweb.runner import SynthWebThread, main

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "LAST_MODIFIED",
    "SynthStats",
    "SynthWeb",
    "SynthWebThread",
    "main",
    "page_html",
    "site_host",
]
