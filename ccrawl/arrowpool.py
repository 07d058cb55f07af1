"""Which Arrow memory pool a batch command allocates from, chosen before pyarrow loads.

pyarrow's wheels default to mimalloc, which hands freed pages back to the kernel within
milliseconds. A batch command that builds and drops a few hundred megabytes of string buffers a
chunk at a time then faults the same pages in again and again: ``ccrawl url surt --from`` over a
million URLs spent 0.56 s of system time (0.2-0.9 from run to run) under mimalloc against 0.22 s
under jemalloc, which keeps freed pages for a second before returning them, and ran 1.27 s against
1.10 s (bench/README.md, "URL kernels"). So the commands that stream Arrow data through a process
switch its default pool to jemalloc when this pyarrow has it, and keep what it has otherwise.

Arrow's C++ side reads its default pool from ``ARROW_DEFAULT_MEMORY_POOL`` once, when pyarrow is
imported, and the Parquet reader's and writer's own buffers come from that pool whatever
``pa.set_memory_pool`` says afterwards (which only reaches allocations made through pyarrow's Python
API). So :func:`prefer_retaining_pool`, called before anything imports pyarrow, names jemalloc in the
environment (worker processes inherit it) and then imports it; Arrow's warning for a build without
jemalloc is kept off stderr, and such a build keeps its own pool. Called later, it can only switch the
Python side's pool, as before.

The same call sets ``OPENBLAS_NUM_THREADS=1`` unless the environment sets it: pyarrow imports numpy,
whose OpenBLAS starts a thread per core that spins for a while with nothing to do. None of these
commands does linear algebra, and on two cores the spinning took 4% of the command's CPU.

A pool named in ``ARROW_DEFAULT_MEMORY_POOL`` always wins: that is how a user, or ``--profile-dir``
(which needs the system allocator so the heap profile sees Arrow's buffers), chooses one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_ENV = "ARROW_DEFAULT_MEMORY_POOL"


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 pointed at /dev/null: Arrow's C++ logging writes there, not to sys.stderr."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr to silence
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def prefer_retaining_pool() -> str:
    """Make jemalloc Arrow's default pool unless the environment names one; returns the pool in use."""
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        if not os.environ.get(_ENV):
            os.environ[_ENV] = "jemalloc"
            with _stderr_silenced():
                import pyarrow as pa
            name = str(pa.default_memory_pool().backend_name)
            if name != "jemalloc":  # a pyarrow built without it (macOS wheels, some conda builds)
                del os.environ[_ENV]
            return name
    import pyarrow as pa

    if os.environ.get(_ENV):
        return str(pa.default_memory_pool().backend_name)
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:
        return str(pa.default_memory_pool().backend_name)
    pa.set_memory_pool(pool)
    return str(pool.backend_name)


def arrow_owned(data: bytes | bytearray | memoryview) -> Any:
    """A copy of ``data`` in a buffer Arrow allocated and owns (``pa.py_buffer`` would wrap the Python object).

    For Arrow work that may run on Arrow's own threads (a threaded CSV read, a pre-buffered Parquet
    read): a buffer over a Python object is released there by taking the GIL, and one released that
    way after the interpreter has finalised aborts the process ("terminate called without an active
    exception"). An Arrow-owned copy is freed without Python.
    """
    import pyarrow as pa

    view = memoryview(data).cast("B")
    buf = pa.allocate_buffer(len(view))
    if len(view):
        memoryview(buf).cast("B")[:] = view
    return buf


#: set once this process has handed Arrow a Python file object (a ranged read over HTTP): Arrow then
#: holds buffers over Python ``bytes`` that its own threads may release during the interpreter's teardown
_PYTHON_FILES = False


def python_file_handed_to_arrow() -> None:
    """Say that Arrow reads a Python file object in this process (see :func:`exit_without_teardown`)."""
    global _PYTHON_FILES
    _PYTHON_FILES = True


def python_files_handed() -> bool:
    return _PYTHON_FILES


def exit_without_teardown(code: int) -> None:
    """End the process as the interpreter would, but without its teardown.

    An Arrow thread that drops the last reference to a buffer over Python ``bytes`` takes the GIL; when
    that happens after the interpreter has finalised, the process aborts with "terminate called without
    an active exception" (exit 134) after printing a good answer (issue #36: 1 run in 25-100). Closing the
    readers made it rare, not impossible: Arrow's I/O pool can still hold such a buffer. So a command that
    read Parquet through a Python file object ends here: non-daemon threads joined, ``atexit`` run
    (temporary files, multiprocessing's cleanup, logging), standard streams flushed, then ``os._exit``:
    the module teardown, where the abort lives, never runs.
    """
    import atexit
    import contextlib
    import os
    import sys
    import threading

    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said on it
            stream.flush()
    os._exit(code)
