"""The shared-memory ring carries messages intact between processes and bounds the bytes held."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import random
import signal
import threading
import time

from ccrawl.recrawl.ring import Ring, StageCounter, record_size


def _produce(ring: Ring, who: int, n: int) -> None:
    rng = random.Random(who)
    for i in range(n):
        body = rng.randbytes(rng.randrange(0, 3000))
        meta = f"{who}:{i}:{hashlib.sha1(body).hexdigest()}".encode()
        ring.put(meta, body)
    ring.put_eof()



def _check_in_order(ring: Ring, desc: tuple[int, int], seen: dict[int, int]) -> None:
    """A message arrived whole (its sha1 matches) and in its producer's order."""
    meta, body = ring.read(desc)
    who, i, digest = meta.decode().split(":")
    assert hashlib.sha1(body).hexdigest() == digest
    assert int(i) == seen[int(who)]  # one producer's messages stay in order
    seen[int(who)] += 1

def test_messages_from_two_producer_processes_arrive_intact_through_a_small_ring() -> None:
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 16 * 1024)
    counter = StageCounter([ring])  # far smaller than the traffic: wraps and waits many times
    procs = [ctx.Process(target=_produce, args=(ring, w, 150)) for w in range(2)]
    for p in procs:
        p.start()
    seen: dict[int, int] = {0: 0, 1: 0}
    eofs = 0
    pending = []
    rng = random.Random(7)
    while eofs < 2:
        descs = ring.read_descriptors(timeout=0.2) or []
        if not descs:  # nothing new: give everything back so a waiting producer can go on
            while pending:
                ring.release(pending.pop())
        for desc in descs:
            if Ring.is_eof(desc):
                eofs += 1
                continue
            _check_in_order(ring, desc, seen)
            pending.append(desc)
        rng.shuffle(pending)  # release out of order: the tail must wait for the oldest
        while len(pending) > 2:
            ring.release(pending.pop())
    for d in pending:
        ring.release(d)
    for p in procs:
        p.join(10)
    assert seen == {0: 150, 1: 150}
    assert counter.held() == 0 == ring.held()
    assert 3000 < ring.peak() <= ring.capacity, "the ring filled up and never past its bound"
    assert counter.peak() >= ring.peak()
    ring.close()


def test_record_size_is_header_plus_payload_rounded_to_sixteen() -> None:
    assert record_size(0, 0) == 16
    assert record_size(1, 0) == 32
    assert record_size(10, 6) == 32


def test_try_put_writes_nothing_when_full_and_succeeds_once_room_is_released() -> None:
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 4096)
    body = bytes(1000)
    written = 0
    while ring.try_put(b"m", body):
        written += 1
    assert written == 4096 // record_size(1, len(body))
    descs: list[tuple[int, int]] = []
    while len(descs) < written:
        descs += ring.read_descriptors(timeout=1.0) or []
    assert len(descs) == written  # the refused put announced nothing
    assert ring.read(descs[0]) == (b"m", body)
    ring.release(descs[0])
    assert ring.try_put(b"n", body)
    more = ring.read_descriptors(timeout=1.0) or []
    assert [ring.read(d)[0] for d in more] == [b"n"]
    for d in descs[1:] + more:
        ring.release(d)
    ring.close()


def test_counters_crossing_4_gib_stay_exact_under_two_producers() -> None:
    """head/tail start just below 2**32 so the run crosses the boundary every byte store would tear at."""
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 16 * 1024)
    start = 2**32 - 5000
    ring._ctl[0] = ring._ctl[1] = start  # head, tail: an empty ring that has carried ~4 GiB
    procs = [ctx.Process(target=_produce, args=(ring, w, 200)) for w in range(2)]
    for p in procs:
        p.start()
    eofs, got, worst = 0, 0, 0
    while eofs < 2:
        worst = max(worst, ring.held())
        for desc in ring.read_descriptors(timeout=0.2) or []:
            if Ring.is_eof(desc):
                eofs += 1
                continue
            meta, body = ring.read(desc)
            assert hashlib.sha1(body).hexdigest() == meta.decode().split(":")[2]
            got += 1
            ring.release(desc)
    for p in procs:
        p.join()
    assert got == 400
    assert ring._ctl[0] > 2**32 and ring._ctl[0] == ring._ctl[1]  # crossed, and everything released
    assert worst <= ring.capacity and ring.peak() <= ring.capacity
    ring.close()


def _produce_deferred(ring: Ring, who: int, n: int) -> None:
    """Like _produce, but as the fetch loop does: deferred puts, announced in batches of 300."""
    rng = random.Random(who)
    for i in range(n):
        body = rng.randbytes(rng.randrange(0, 40))
        meta = f"{who}:{i}:{hashlib.sha1(body).hexdigest()}".encode()
        while not ring.try_put(meta, body, defer=True):
            ring.announce()  # full: what is held must go out before waiting for room
            time.sleep(0.001)
        if i % 300 == 299:
            ring.announce()
    ring.announce()
    ring.put_eof()


def test_deferred_puts_reach_the_consumer_only_when_announced() -> None:
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 4096)
    assert ring.try_put(b"a", b"1", defer=True) and ring.try_put(b"b", b"2", defer=True)
    assert ring.read_descriptors(timeout=0.2) == [], "nothing announced yet"
    ring.announce()
    descs = ring.read_descriptors(timeout=1.0) or []
    assert [ring.read(d) for d in descs] == [(b"a", b"1"), (b"b", b"2")]
    for d in descs:
        ring.release(d)
    ring.announce()  # nothing held: writes nothing
    assert ring.read_descriptors(timeout=0.1) == []
    ring.close()


def test_batches_larger_than_one_pipe_write_from_two_producers_arrive_whole() -> None:
    """300 descriptors a batch is more than PIPE_BUF: split writes must not interleave mid-descriptor."""
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 256 * 1024)
    procs = [ctx.Process(target=_produce_deferred, args=(ring, w, 1200)) for w in range(2)]
    for p in procs:
        p.start()
    seen = {0: 0, 1: 0}
    eofs = 0
    while eofs < 2:
        for desc in ring.read_descriptors(timeout=1.0) or []:
            if Ring.is_eof(desc):
                eofs += 1
                continue
            _check_in_order(ring, desc, seen)
            ring.release(desc)
    for p in procs:
        p.join(10)
    assert seen == {0: 1200, 1: 1200}
    assert ring.held() == 0
    ring.close()


def _fill_then_put_one_more(ring: Ring) -> None:
    while ring.try_put(b"m", bytes(1000)):
        pass
    ring.put(b"last", bytes(1000))  # waits for room
    ring.put_eof()


def test_freeing_room_does_not_wait_for_the_waiting_producer_to_run() -> None:
    """The consumer is often the slowest stage: waking a producer must not stall it on that producer.

    The producer is stopped (SIGSTOP) while it waits for room; releasing records must still return
    at once (``multiprocessing.Condition.notify`` would block until the sleeper ran again).
    """
    ctx = mp.get_context("spawn")
    ring = Ring(ctx, 4096)
    proc = ctx.Process(target=_fill_then_put_one_more, args=(ring,))
    proc.start()
    try:
        deadline = time.monotonic() + 20
        while not ring._ctl[3] and time.monotonic() < deadline:  # the waiters word
            time.sleep(0.01)
        assert ring._ctl[3], "the producer never waited for room"
        os.kill(proc.pid, signal.SIGSTOP)
        descs: list[tuple[int, int]] = []
        while len(descs) < 4096 // record_size(1, 1000):
            descs += ring.read_descriptors(timeout=1.0) or []
        releasing = threading.Thread(target=lambda: [ring.release(d) for d in descs], daemon=True)
        started = time.monotonic()
        releasing.start()
        releasing.join(5)
        assert not releasing.is_alive(), "release blocked on the stopped producer"
        assert time.monotonic() - started < 2
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    got = []
    while len(got) < 2:
        got += ring.read_descriptors(timeout=2.0) or []
    assert ring.read(got[0])[0] == b"last" and Ring.is_eof(got[1])
    ring.release(got[0])
    proc.join(10)
    assert proc.exitcode == 0
    ring.close()
