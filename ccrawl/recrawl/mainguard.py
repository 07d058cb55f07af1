"""Refuse, in the parent and before any process starts, a run called from a script's unguarded top level.

The pipeline's processes are *spawned*: each re-imports the main script (as ``__mp_main__``). A script
that calls :func:`~ccrawl.recrawl.run_recrawl` at its top level, outside ``if __name__ ==
"__main__":``, would call it again in every child; each child then failed with its own traceback and
the parent with a fourth ("died with exit code 1"). :func:`check_main_guard` finds that case up front,
the way :mod:`multiprocessing.spawn` decides what a child re-imports, and raises one
:class:`~ccrawl.errors.UsageError` naming the script and line.
"""

from __future__ import annotations

import ast
import os
import sys
from types import FrameType

from ccrawl.errors import UsageError

GUARD = 'if __name__ == "__main__":'


def _reimported_main() -> str | None:
    """The file a spawned child re-imports as its main module, or None when it re-imports none
    (an interactive session, ``-c``, ``python -m pkg`` whose ``pkg.__main__`` spawn skips)."""
    main = sys.modules.get("__main__")
    if main is None:
        return None
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if spec_name is not None and (spec_name == "__main__" or spec_name.endswith(".__main__")):
        return None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return path


def _top_level_frame(main_globals: dict[str, object]) -> FrameType | None:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals is main_globals and frame.f_code.co_name == "<module>":
            return frame
        frame = frame.f_back
    return None


def _is_main_test(node: ast.expr) -> bool | None:
    """True for ``__name__ == "__main__"``, False for ``!=``, None for any other test."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and len(node.comparators) == 1):
        return None
    sides = [node.left, node.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    if not (names and consts):
        return None
    if isinstance(node.ops[0], ast.Eq):
        return True
    if isinstance(node.ops[0], ast.NotEq):
        return False
    return None


def _within(body: list[ast.stmt], line: int) -> bool:
    return bool(body) and body[0].lineno <= line <= (body[-1].end_lineno or body[-1].lineno)


def line_is_guarded(source: str, line: int) -> bool | None:
    """Whether ``line`` of ``source`` runs only when the module is ``__main__``; None if unknown."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = _is_main_test(node.test)
            if test is True and _within(node.body, line):
                return True
            if test is False and _within(node.orelse, line):
                return True
    return False


def check_main_guard(what: str = "run_recrawl") -> None:
    """Raise :class:`UsageError` when this call comes from the top level of a script that spawned
    processes re-import, outside its ``if __name__ == "__main__":`` block. Anything it cannot tell
    (no source, a frame it does not find) passes: the pipeline's own check in the child remains."""
    path = _reimported_main()
    if path is None:
        return
    main = sys.modules["__main__"]
    frame = _top_level_frame(main.__dict__)
    if frame is None or os.path.abspath(frame.f_code.co_filename) != os.path.abspath(path):
        return
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except (OSError, UnicodeDecodeError):
        return
    if line_is_guarded(source, line) is False:
        raise UsageError(
            f"{what} is called at the top level of {os.path.basename(path)} (line {line}): the recrawl pipeline's "
            f"processes are spawned and re-import the script, so call it under `{GUARD}` (see docs/recrawl.md)"
        )


__all__ = ["GUARD", "check_main_guard", "line_is_guarded"]
