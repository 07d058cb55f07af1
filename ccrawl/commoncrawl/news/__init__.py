"""CC-NEWS: the month manifests, the index Common Crawl does not publish, and the search over it.

The pieces, in the order a month flows through them:

* :mod:`.months` -- ``YYYY/MM`` months, their ``warc.paths.gz`` manifest and shard names;
* :mod:`.schema` -- the index's 22 columns (cc-index names, int64 offsets) as an Arrow schema;
* :mod:`.rows` -- one WARC record (a decompressed gzip member) to one index row;
* :mod:`.stream` -- a WARC streamed over HTTP, split into gzip members as it arrives, resumed at the
  last whole record by a ranged request when the connection drops;
* :mod:`.search` -- a host's articles from the published shards, or by scanning the archives.
"""
