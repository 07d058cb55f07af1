"""Local stores: the DuckDB database records can be teed into (``--db``)."""
