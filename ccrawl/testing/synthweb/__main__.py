"""``python -m ccrawl.testing.synthweb``: serve the synthetic web standalone (see ``runner.main``)."""

import sys

from ccrawl.testing.synthweb.runner import main

sys.exit(main())
