"""A fake Common Crawl on loopback: collinfo, path manifests, WARC/WAT/WET files with Range, faults.

``build_site`` writes the bucket (:mod:`.site`), ``make_app`` serves it (:mod:`.app`),
``FakeCCServer`` runs it in a background thread (:mod:`.server`) and ``Faults`` arms misbehaviour
(:mod:`.faults`). From a shell: ``python -m ccrawl.testing.fakecc --port 0``.
"""

from ccrawl.testing.fakecc.faults import Faults
from ccrawl.testing.fakecc.server import FakeCCServer
from ccrawl.testing.fakecc.site import KINDS, FakeSite, SiteSpec, build_site, load_site

__all__ = ["KINDS", "FakeCCServer", "FakeSite", "Faults", "SiteSpec", "build_site", "load_site"]
