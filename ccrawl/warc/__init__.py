"""Reading, writing, indexing and slicing WARC files."""
