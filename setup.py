"""Build the optional native core: every ``csrc/*.pyx`` becomes ``ccrawl._native.<stem>``.

The package works without them (each has a pure-Python twin), so a failed compile is reported
and the install carries on unless ``CCRAWL_REQUIRE_EXTENSIONS=1`` asks for it to fail, which
CI sets so that a broken extension cannot hide behind its twin.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("ccrawl: Cython not found, installing without the native core", file=sys.stderr)
        return []
    from setuptools import Extension

    mods = [
        Extension(f"ccrawl._native.{pyx.stem}", [str(pyx.relative_to(HERE))], extra_compile_args=["-O3"])
        for pyx in sorted((HERE / "csrc").glob("*.pyx"))
    ]
    return cythonize(
        mods,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
        include_path=[str(HERE / "csrc")],  # shared declarations: csrc/*.pxd
        quiet=True,
    )


class OptionalBuildExt(build_ext):
    """Compile what compiles; the twins cover the rest unless extensions are required."""

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:  # a compiler error surfaces as several distutils types
            if os.environ.get("CCRAWL_REQUIRE_EXTENSIONS") == "1":
                raise
            print(f"ccrawl: could not build {ext.name} ({exc}); its pure-Python twin will be used", file=sys.stderr)


def _build_info() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=7", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    built = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    return f'"""Written by setup.py at build time."""\n\nCOMMIT = "{commit}"\nBUILT = "{built}"\n'


class BuildPyWithInfo(build_py):
    """Record the commit and build date in ``ccrawl/_build_info.py``."""

    def run(self) -> None:
        (HERE / "ccrawl" / "_build_info.py").write_text(_build_info())
        super().run()


if __name__ == "__main__":
    (HERE / "ccrawl" / "_build_info.py").write_text(_build_info())
    setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithInfo})
