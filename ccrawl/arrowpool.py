"""Which Arrow memory pool a batch command allocates from.

pyarrow's wheels default to mimalloc, which hands freed pages back to the kernel within
milliseconds. A batch command that builds and drops a few hundred megabytes of string buffers a
chunk at a time then faults the same pages in again and again: ``ccrawl url surt --from`` over a
million URLs spent 0.56 s of system time (0.2-0.9 from run to run) under mimalloc against 0.22 s
under jemalloc, which keeps freed pages for a second before returning them, and ran 1.27 s against
1.10 s (bench/README.md, "URL kernels"). So the commands that stream Arrow data through a process
switch its default pool to jemalloc when this pyarrow has it, and keep what it has otherwise.

A pool named in ``ARROW_DEFAULT_MEMORY_POOL`` always wins: that is how a user, or ``--profile-dir``
(which needs the system allocator so the heap profile sees Arrow's buffers), chooses one.
"""

from __future__ import annotations

import os


def prefer_retaining_pool() -> str:
    """Make jemalloc Arrow's default pool unless the environment names one; returns the pool in use."""
    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return str(pa.default_memory_pool().backend_name)
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc (macOS wheels, some conda builds)
        return str(pa.default_memory_pool().backend_name)
    pa.set_memory_pool(pool)
    return str(pool.backend_name)
