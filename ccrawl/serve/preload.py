"""Imported by the fork server of :mod:`ccrawl.serve.worker`: every operation, once, before any fork."""

from __future__ import annotations

from ccrawl import ops

ops.load_all()
