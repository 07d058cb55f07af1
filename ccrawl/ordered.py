"""An ordered pool: a function over a stream of items on worker threads or processes, results in input order.

Memory stays flat in the stream's length: at most ``2 x workers`` items are in flight. Used by the
batch URL commands (:mod:`ccrawl.url.batchio`); nothing here knows what an item is.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _worker_init(owner: int) -> None:
    from ccrawl.scale.lifeline import exit_with

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent reports Ctrl-C once and stops the pool
    exit_with(owner)  # and a parent killed outright leaves no worker waiting on the pool


def ordered_map(
    func: Callable[[T], R], items: Iterable[T], workers: int, mode: str = "process", *,
    thread_name: str = "ccrawl-pool",
) -> Iterator[R]:
    """``func`` of each item, in input order: in this process for one worker, else a pool of ``workers``
    with at most ``2 x workers`` items in flight.

    ``mode`` is ``thread`` (for work that releases the GIL: no copy between processes) or ``process``
    (forked workers that ignore SIGINT and end with the parent; each item pickled there and back).
    """
    if workers <= 1:
        for item in items:
            yield func(item)
        return
    from concurrent.futures import Executor, Future

    pool: Executor
    if mode == "thread":  # concurrent.futures.thread alone: the process pool pulls in multiprocessing
        from concurrent.futures.thread import ThreadPoolExecutor

        pool = ThreadPoolExecutor(workers, thread_name_prefix=thread_name)
    else:
        import multiprocessing
        from concurrent.futures.process import ProcessPoolExecutor

        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_worker_init,
                                   initargs=(os.getpid(),))
    window: deque[Future[R]] = deque()
    try:
        for item in items:
            window.append(pool.submit(func, item))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        for future in window:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
