"""Stub for the compiled Parquet footer walk (twin: ccrawl.commoncrawl.columnar.pageindex.walk_py)."""

def walk(
    footer: bytes,
) -> tuple[list[list[tuple[tuple[int, int] | None, tuple[int, int] | None, int]]], list[tuple[int, int, int]]]: ...
