"""Scoring of the extraction engine (``ccrawl.extract``) against labelled corpora.

Not the engine: the corpora (fetched into a cache, pinned by sha256, never vendored), their
loaders and scorers, used by the quality gates in ``tests/extract`` and the benchmarks in
``bench/``. ``evaluate``: the html-eval snippets; ``articles``: the second corpus (newspaper4k's
labelled pages) and the bag-of-tokens F1; ``corpora``: the public benchmark corpora;
``mdclasses``: what the Markdown adds beyond the text, by kind.
"""
