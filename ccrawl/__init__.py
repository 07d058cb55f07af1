"""ccrawl: a Python toolkit for Common Crawl around a native-accelerated recrawler."""

__version__ = "0.1.0"

__all__ = ["__version__"]
