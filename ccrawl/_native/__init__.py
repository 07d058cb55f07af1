"""Compiled hot paths built from ``csrc/*.pyx``; every module here has a pure-Python twin.

Never import these modules directly: go through :func:`ccrawl.accel.native`, which honours
``CCRAWL_NO_EXTENSIONS=1`` and records which implementation each engine ended up with.
"""
