"""The hub layer, below every engine: one interface over a dataset repo (HuggingFace Hub or a local
directory), the per-machine ledgers, the stall clock, the staged commit loop and the work list read
from a hub.

The import is cheap: huggingface_hub, pyarrow and fsspec are imported by the modules that use them.
Engines may import this package; it imports none of ``ops``, ``cli``, ``serve`` or ``datasets``, and of
the engines only ``net`` (ranged reads, name resolution) and the web-graph release order of
``commoncrawl.webgraph``.
"""
