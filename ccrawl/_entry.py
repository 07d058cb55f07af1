"""The CLI's first module: Ctrl-C is one line and exit code 130 from the very first moment.

``python -m ccrawl`` and the ``ccrawl`` console script import this module before anything
else of the CLI (click and the command modules take a good part of the start-up). Until the
CLI's ``main`` is running inside its error handling, SIGINT writes ``ccrawl: interrupted`` and
exits 130 at once (no child process exists yet, nothing is half-written); from there on it is
Python's ``KeyboardInterrupt`` again, which ``main`` turns into the same line and code after
the command's own cleanup (workers stopped, files closed). When ``main`` returns, the
immediate exit is back for the interpreter's shutdown.

The handler lives in :mod:`ccrawl.sigint`. This module also sets ``OPENBLAS_NUM_THREADS=1`` unless
the environment sets it (see below).
"""

from __future__ import annotations

import os
import sys

from ccrawl.sigint import install

install()  # on import: nothing of the CLI has been imported before this module

# numpy (which pyarrow imports) starts an OpenBLAS thread per core that spins for a while with nothing
# to do: ~0.1 CPU-s a process here, in every worker of a run. No command does linear algebra.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class NoPandas:
    """A finder that answers ``import pandas`` with ImportError in a CLI process.

    pyarrow imports pandas the first time ``pa.array``, ``pa.scalar`` or ``Table.from_pylist`` sees a
    Python value, only to ask whether the value is a pandas object: 0.5-1.4 s of a command on this
    machine. No command uses pandas; refused, pyarrow takes its no-pandas path and says the same.
    """

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("ccrawl's commands do not use pandas")
        return None


def refuse_pandas() -> None:
    if not any(isinstance(f, NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, NoPandas())


def main() -> int:
    """Console-script entry point: the handler (installed when this module was imported), then the CLI."""
    from ccrawl.cli.main import install_redacting_hooks
    from ccrawl.cli.main import main as cli_main

    install_redacting_hooks()
    refuse_pandas()
    code = cli_main()
    from ccrawl.arrowpool import exit_without_teardown, python_files_handed

    if python_files_handed():  # Arrow read Parquet over Python bytes: skip the teardown it can abort in
        exit_without_teardown(code)
    return code


def run() -> None:
    """``python -m ccrawl``: :func:`main`, exiting with its code."""
    code = main()
    # CPython (3.11) remembers a KeyboardInterrupt that left any ``exec(<string>)`` (dataclasses
    # and namedtuple build their methods that way, so a Ctrl-C during an import can end there)
    # and, under ``python -m``, kills the process with SIGINT after a clean exit, even once the
    # exception was handled. Any later string exec clears that flag: the code stays 130.
    exec("None")
    sys.exit(code)
