"""Datasets on a hub: cards, verification and the publishers (the hub itself is :mod:`ccrawl.hub`, below the engines).

The import is cheap: huggingface_hub, pyarrow and fsspec are imported by the modules that use them.
"""
