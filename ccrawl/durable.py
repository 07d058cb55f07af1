"""Files that are whole or absent: written under an in-progress name, fsynced, renamed, the rename fsynced.

A reader (or the next run after a kill) sees the old file or the new one, never half of one. Every
writer of a finished file goes through here, so the rule is written once:

* the file is written at :func:`in_progress` of its name (``<name>.tmp``, :data:`IN_PROGRESS`);
* :func:`replace` fsyncs it, renames it over the final name and fsyncs the directory, so the
  rename itself survives a power cut;
* :func:`writing` wraps the three for a writer that needs a path (pyarrow's, say), removing the
  in-progress file when the writer fails; :func:`write_bytes` is the whole thing for bytes in hand.

Files that grow across a run and are resumed from their in-progress state keep names of their
own (a WARC being written is ``.open`` to the crawl, a download ``.part``): their suffix is part of
what a resume looks for.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

#: The suffix of a file not yet whole.
IN_PROGRESS = ".tmp"

StrPath = str | os.PathLike[str]


def in_progress(path: StrPath) -> Path:
    """Where ``path`` is written until it is whole: ``<path>.tmp``."""
    path = Path(path)
    return path.with_name(path.name + IN_PROGRESS)


def fsync_file(path: StrPath) -> None:
    """Flush ``path``'s data to disk (for a file another library wrote and closed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: StrPath) -> None:
    """Make the names in ``directory`` durable (a rename is only on disk once its directory is)."""
    fd = os.open(str(directory) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace(tmp: StrPath, final: StrPath, *, sync_file: bool = True) -> None:
    """Rename the whole file ``tmp`` over ``final`` durably: fsync it (unless the writer did), rename,
    fsync the directory."""
    if sync_file:
        fsync_file(tmp)
    os.replace(tmp, final)
    fsync_dir(Path(final).parent)


@contextlib.contextmanager
def writing(path: StrPath) -> Iterator[Path]:
    """The in-progress path to write ``path`` at; on leaving the block it becomes ``path`` durably.

    When the block raises, the in-progress file is removed and ``path`` is left as it was.
    """
    tmp = in_progress(path)
    try:
        yield tmp
        replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: StrPath, data: bytes, *, sync: bool = True) -> None:
    """``path`` holds ``data``, whole; a kill at any moment leaves the old file or this one.

    ``sync=False`` skips the two fsyncs: still atomic for readers and against a killed process, but
    not against a power cut (for many small files a run can write again, where an fsync each costs).
    """
    tmp = in_progress(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if sync:
        replace(tmp, path, sync_file=False)
    else:
        os.replace(tmp, path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


__all__ = ["IN_PROGRESS", "fsync_dir", "fsync_file", "in_progress", "replace", "write_bytes", "writing"]
