"""Hostile sizes through the url.* operations: a 100k-label host and a 1 MB URL cost linear time.

Each case times the operation on an input of size n and of size 4n (best of a few runs) and asserts
the ratio is under 11: linear work gives about 4 (up to 8 seen with 4 MB strings past the caches, pure
Python), the quadratic shapes these guard against gave 16.
A ratio of CPU times, not an absolute or wall time, so a slow or busy machine does not fail it (wall
time on a shared machine counts the other processes' turns: ratios of 10 were seen at load 10). Both implementations are
covered: this file runs natively and again with CCRAWL_NO_EXTENSIONS=1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from ccrawl import ops

REPEATS = 5


def _labels_host(n: int) -> str:
    return "a." * n + "com"


def _best(run: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def _ratio(operation: str, make: Callable[[int], str], n: int, rows: int = 1, **params: Any) -> float:
    def timed(size: int) -> float:
        urls = [make(size)] * rows  # rows > 1 lifts a short time well above the clock's resolution
        return _best(lambda: list(ops.get(operation)(urls=urls, **params)))

    timed(n // 8)  # warm up: imports, the list's parse, the native scratch buffers
    small, large = timed(n), timed(4 * n)
    ratio = large / max(small, 1e-9)
    print(f"{operation} {make.__name__} n={n}: {small * 1e3:.2f} ms, 4n: {large * 1e3:.2f} ms, ratio {ratio:.1f}")
    return ratio


def labels_host(n: int) -> str:
    return _labels_host(n)


def labels_url(n: int) -> str:
    return f"https://{_labels_host(n)}:8080/x?y=1"


def idn_labels_host(n: int) -> str:
    return "bücher." * n + "de"


@pytest.mark.parametrize("make", [labels_host, labels_url, idn_labels_host])
@pytest.mark.parametrize(("operation", "params"), [("url.domain", {}), ("url.shard", {"shards": 7})])
def test_many_labels_cost_linear_time(operation: str, params: dict[str, Any], make: Callable[[int], str]) -> None:
    records = list(ops.get(operation)(urls=[make(100_000)], **params))
    assert "error" not in records[0]
    if operation == "url.domain":
        assert records[0]["registered_domain"] is None  # no DNS name has 100k labels
    assert _ratio(operation, make, 25_000, rows=4, **params) < 11


def path_escapes(size: int) -> str:
    return "http://a.com/%" + "25" * (size // 2) + "41"  # one decoding round per "25"


def host_escapes(size: int) -> str:
    return "http://%" + "25" * (size // 2) + "41.com/"


def aspx_segments(size: int) -> str:
    return "http://a.com" + "/(s(abcdefghijklmnopqrstuvwx))" * (size // 30) + "/"


def aspx_short_segments(size: int) -> str:
    return "http://a.com" + "/(abcdefghijklmnopqrstuvwx)" * (size // 27) + "/"


def cfid_fields(size: int) -> str:
    return "http://a.com/?" + "cfid=" * (size // 5)


def dot_segments(size: int) -> str:
    return "http://a.com/" + "a/../" * (size // 5) + "?a=1;jsessionid=x"


def many_fields(size: int) -> str:
    return "http://a.com/x;sid=1?" + "utm_source=1&b=%41&" * (size // 20)


MEGABYTE_SHAPES = [labels_url, path_escapes, host_escapes, aspx_segments, aspx_short_segments, cfid_fields]


@pytest.mark.parametrize("make", [*MEGABYTE_SHAPES, dot_segments, many_fields])
@pytest.mark.parametrize("operation", ["url.surt", "url.canon", "url.domain"])
def test_a_megabyte_url_costs_linear_time(operation: str, make: Callable[[int], str]) -> None:
    # 1 MB against 4 MB: both past the CPU's caches, whose edge alone can double a ratio taken below it
    assert _ratio(operation, make, 1 << 20) < 11
