"""Local stand-ins for the outside world, used by tests, benchmarks and the demo.

Real servers on loopback, never mocks of ccrawl's own code: the synthetic web (many host names
on 127.0.0.0/8 with fault endpoints), the fake Common Crawl (index and data servers) and the
fake HuggingFace Hub. They ship in the package so a user can run ``bench/`` or the demo.
"""
