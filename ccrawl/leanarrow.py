"""pyarrow imported without numpy and cloudpickle, for a process that needs neither (``url`` over stdin,
``columnar`` on the native engine).

pyarrow imports numpy when it is installed (to convert to and from numpy arrays) and cloudpickle
(to pickle extension types), and cloudpickle imports typing_extensions: together more than half
of ``import pyarrow`` here, ~0.1 CPU-s, in a command that takes ~1 CPU-s over a million URLs and
never converts to numpy nor pickles an Arrow type. :func:`import_pyarrow_lean` imports pyarrow
with both hidden; pyarrow then takes its paths for a machine without numpy (its numpy conversions
say numpy is required), and a later ``import numpy`` still imports numpy. It does nothing when
pyarrow or numpy is already imported, so it cannot change a process that uses them.
"""

from __future__ import annotations

import sys

HIDDEN = frozenset({"numpy", "cloudpickle"})


class _Hide:
    """A finder that answers ``import numpy`` / ``import cloudpickle`` (and their submodules) with ImportError."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in HIDDEN:
            raise ImportError(f"{name} is not imported by this command")
        return None


def import_pyarrow_lean(*also: str) -> None:
    """Import pyarrow (and the pyarrow modules named in ``also``) with numpy and cloudpickle hidden
    (see the module docstring); call before any thread that imports pyarrow starts."""
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return
    finder = _Hide()
    sys.meta_path.insert(0, finder)
    try:
        import importlib

        import pyarrow  # noqa: F401

        for name in also:
            importlib.import_module(name)
    finally:
        sys.meta_path.remove(finder)
