"""URL toolkit: SURT keys, canon/1 canonicalisation and URL keys, registered domains and shards.

Import from the submodules (``ccrawl.url.surt``, ``ccrawl.url.canon``, ``ccrawl.url.domain``); each
picks its compiled hot path when ``ccrawl._native`` has it and its pure-Python twin otherwise.
"""
