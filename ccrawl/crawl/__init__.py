"""The discovery crawl: a frontier that survives SIGKILL, its state on disk, and the run around it.

``frontier`` holds per-host queues and a ready heap keyed by each host's next allowed time;
``state`` is the SQLite file behind it (queue, politeness clocks, seen set of 10-byte URL keys);
``run`` drives fetches through :class:`ccrawl.fetch.Fetcher` and writes every fetch to WARC;
``tiers`` is the recrawl tier rule ``sched assign``, ``crawl seed`` and ``crawl status`` share.
See ``docs/crawl.md``.
"""
