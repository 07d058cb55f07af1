"""Front ends over the operation registry: ``serve`` (NDJSON over HTTP), ``mcp`` (stdio tools), ``api``.

``serve`` and ``mcp`` hold no per-operation code: they read each operation's typed parameters
off :data:`ccrawl.ops.REGISTRY`, so registering an operation adds its endpoint and its tool.
"""
