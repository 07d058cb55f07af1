"""Live content signals: fetch pages with the crawler's client, extract them, and judge them.

:mod:`ccrawl.content.live` fetches and extracts a list of URLs concurrently, in input order;
:mod:`ccrawl.content.signals` computes the quality signals (word count, title length, main
content, spam score, parked-domain detection) of one page. ``docs/content.md`` defines them.
"""
