"""Local stores: the DuckDB database records can be teed into (``--db``) and the dataset library manifest."""
