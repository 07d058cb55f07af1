"""Operations about ccrawl itself: version facts, resolved settings, the on-disk cache."""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Iterator
from pathlib import Path

from ccrawl import __version__, accel
from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import ReadPath, WritePath

VERSION_FIELDS = ("version", "commit", "built", "platform", "python", "native")


def version_info() -> dict[str, str]:
    """The six facts of ``ccrawl version``: version, commit, built, platform, python, native."""
    try:
        from ccrawl import _build_info

        commit, built = _build_info.COMMIT, _build_info.BUILT
    except ImportError:
        commit, built = "unknown", "unknown"
    return {
        "version": __version__,
        "commit": commit,
        "built": built,
        "platform": f"{platform.system().lower()}/{platform.machine()}",
        "python": f"python{platform.python_version()}",
        "native": accel.summary(),
    }


def version_line(info: dict[str, str]) -> str:
    """``ccrawl 0.1.0 (commit abc1234, built 2026-11-29, linux/x86_64, python3.11.7, native)``."""
    return (
        f"ccrawl {info['version']} (commit {info['commit']}, built {info['built']}, "
        f"{info['platform']}, {info['python']}, {info['native']})"
    )


@operation("version", summary="Version, commit, build date, platform, Python and native core", columns=VERSION_FIELDS)
def version() -> Iterator[Record]:
    yield dict(version_info())


@operation("native", summary="Which implementation each hot path uses", columns=("module", "implementation"))
def native_modules() -> Iterator[Record]:
    for module, impl in accel.implementations().items():
        yield {"module": module, "implementation": impl}


def _walk_size(root: Path) -> tuple[int, int]:
    files = size = 0
    if not root.is_dir():
        return 0, 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
                files += 1
            except OSError:
                continue
    return files, size


@operation("cache.show", summary="Where the cache is and how much it holds", columns=("path", "files", "bytes"))
def cache_show(cache_dir: ReadPath[str]) -> Iterator[Record]:
    files, size = _walk_size(Path(cache_dir))
    yield {"path": cache_dir, "files": files, "bytes": size}


@operation("cache.clear", summary="Delete everything in the cache", columns=("path", "files", "bytes"), writes=True)
def cache_clear(cache_dir: WritePath[str]) -> Iterator[Record]:
    root = Path(cache_dir)
    files, size = _walk_size(root)
    if root.is_dir():
        for child in root.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    yield {"path": cache_dir, "files": files, "bytes": size}
