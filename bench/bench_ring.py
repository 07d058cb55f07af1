"""IPC for the recrawl pipeline: 50 KB messages between two processes, our ring vs Pipe.send_bytes.

    python -m bench.bench_ring [--messages 20000] [--size 50000]

DESIGN.md §7 measured ~81k msg/s for a shared-memory SPSC ring and ~49k for ``send_bytes``; this
measures ``ccrawl.recrawl.ring.Ring`` (multi-producer capable, lock per put, a 16-byte descriptor
on a pipe) on the same shape. Bounded by ``--messages``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time

from ccrawl.recrawl.ring import Ring


def _ring_producer(ring: Ring, n: int, size: int) -> None:
    body = b"x" * size
    for _ in range(n):
        ring.put(b"m", body)
    ring.put_eof()


def _pipe_producer(conn: object, n: int, size: int) -> None:
    body = b"x" * size
    for _ in range(n):
        conn.send_bytes(body)  # type: ignore[attr-defined]
    conn.send_bytes(b"")  # type: ignore[attr-defined]


def bench_ring(n: int, size: int) -> float:
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 32 * 1024 * 1024)
    p = ctx.Process(target=_ring_producer, args=(ring, n, size))
    p.start()
    got = 0
    t0 = 0.0
    done = False
    while not done:
        for d in ring.read_descriptors() or []:
            if Ring.is_eof(d):
                done = True
                break
            if not got:
                t0 = time.perf_counter()
            ring.read(d)
            ring.release(d)
            got += 1
    rate = (got - 1) / (time.perf_counter() - t0)
    p.join()
    ring.close()
    return rate


def bench_pipe(n: int, size: int) -> float:
    ctx = mp.get_context("spawn")
    rx, tx = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_pipe_producer, args=(tx, n, size))
    p.start()
    got = 0
    t0 = 0.0
    while True:
        msg = rx.recv_bytes()
        if not msg:
            break
        if not got:
            t0 = time.perf_counter()
        got += 1
    rate = (got - 1) / (time.perf_counter() - t0)
    p.join()
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--size", type=int, default=50000)
    a = ap.parse_args()
    print(json.dumps({"ring_msgs_per_s": round(bench_ring(a.messages, a.size)),
                      "pipe_send_bytes_msgs_per_s": round(bench_pipe(a.messages, a.size)), "size": a.size}))


if __name__ == "__main__":
    main()
