"""Polite bulk HTTP access to Common Crawl: ranged reads and coalesced batch reads."""
