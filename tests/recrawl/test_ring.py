"""The shared-memory ring carries messages intact between processes and bounds the bytes held."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import random

from ccrawl.recrawl.ring import Ring, StageCounter, record_size


def _produce(ring: Ring, who: int, n: int) -> None:
    rng = random.Random(who)
    for i in range(n):
        body = rng.randbytes(rng.randrange(0, 3000))
        meta = f"{who}:{i}:{hashlib.sha1(body).hexdigest()}".encode()
        ring.put(meta, body)
    ring.put_eof()


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
            meta, body = ring.read(desc)
            who, i, digest = meta.decode().split(":")
            assert hashlib.sha1(body).hexdigest() == digest
            assert int(i) == seen[int(who)]  # one producer's messages stay in order
            seen[int(who)] += 1
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
