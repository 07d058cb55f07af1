"""Datasets on a hub: the hub layer (HuggingFace or a local directory), ledgers, cards and publishers.

The import is cheap: huggingface_hub, pyarrow and fsspec are imported by the modules that use them.
"""
