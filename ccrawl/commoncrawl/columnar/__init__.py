"""Queries over Common Crawl's columnar index (the cc-index-table): filters, engines, ranged reads.

The reader stack, from the bytes up: :mod:`.source` (ranged reads, counted and cached),
:mod:`.schema` (the published columns), :mod:`.filters` (what a flag means, and the ``url_surtkey``
prefixes that prune), :mod:`.sql` (the portable SQL every SQL engine runs), :mod:`.native` (pyarrow,
pruning parts, row groups and columns), :mod:`.duck` (DuckDB over the same bytes), :mod:`.query`
(one query from flags to records) and :mod:`.parts` (which part files a crawl has).
"""
