"""Peers the recrawl engine is measured against, each a small program run as its own process."""
