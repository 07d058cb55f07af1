"""Markdown datasets: Common Crawl's captures converted to Markdown Parquet (``ccrawl markdown``).

The parts, in the order a run uses them:

* :mod:`.schema` -- the export columns, the Parquet writer (zstd, provenance in the footer);
* :mod:`.units` -- what a run is cut into: shards of a manifest (``--shards``) or parts of a
  location stream (``--locations``, ``--part-size``);
* :mod:`.sources` -- the documents of one unit: a WARC/WET file read whole, or records fetched
  by location with coalesced ranged reads;
* :mod:`.convert` -- one document to one row (extract, fingerprint, label the language), inline
  or in a pool of processes (``--workers``);
* :mod:`.committed` -- the ``<out>/.committed`` ledger a rerun resumes from;
* :mod:`.export` -- the run: units in, Parquet shards out, committed to a dataset repo.

``ccrawl dedup`` (:mod:`ccrawl.datasets.dedup`) reports duplicates in what this writes, and
``ccrawl convert`` (:mod:`.convert_files`) turns local archives into Parquet or JSONL.
"""
