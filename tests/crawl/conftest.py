"""A synthetic web of linked hosts on loopback, shared by the crawl tests of a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ccrawl.testing.synthweb import SynthWeb, SynthWebThread


@pytest.fixture(scope="module")
def web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=12, pages=6, page_bytes=4000, link_port=True, crawl_delay=0.3) as synth:
        yield synth
