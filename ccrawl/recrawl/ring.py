"""A byte ring in shared memory carrying messages from many producer processes to one consumer.

Bodies of up to 10 MB move between the pipeline's processes through here rather than being
pickled through a pipe (DESIGN.md §7: a shared-memory ring measured ~81k 50 KB messages/s
against ~49k for ``Pipe.send_bytes``). A message is a small ``meta`` blob plus a raw ``body``;
the producer copies both into the ring and sends a fixed 16-byte descriptor (position,
length) down a pipe, alone or in a batch of at most ``PIPE_BUF`` bytes, which is atomic under
concurrent writers. The consumer reads the bytes in place, then releases the record.

Layout: a 64-byte control block (head, tail, peak, waiters) and ``capacity`` bytes of records, each
``[u32 length][u32 state][u32 meta length][u32 body length][meta][body]`` padded to 16 bytes. Producers
allocate under a shared lock; records may be released out of order (descriptors can arrive
out of allocation order), so the consumer marks a record free and advances the tail over
every leading free record. A record that would straddle the end wraps, leaving a free pad.

The ring's capacity is the byte bound of the queue; a producer waits while a message does not
fit, on a semaphore the consumer releases once per waiter when a sixteenth of the ring is free
(waits also end after 10 ms, so a wake-up lost to a race costs no more). A semaphore, not a
condition: ``multiprocessing.Condition.notify`` blocks the notifier until each sleeper has
woken, and in a full pipeline the notifier is the slowest stage (the extract processes spent
a fifth of their samples there). The common path takes one lock per put and none per release.
:class:`StageCounter` sums the rings of a stage for the run summary's queue peak against
``--queue-mb``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import struct
import time
from multiprocessing import shared_memory
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.synchronize import Lock, Semaphore
from typing import TypedDict

_CTRL = 64
_HDR = struct.Struct("<IIII")  # record length, state, meta length, body length
_DESC = struct.Struct("<QQ")
#: Descriptors per pipe write: a write of at most PIPE_BUF bytes is never interleaved with
#: another producer's, so a batch announced at once still arrives as whole descriptors.
_DESCS_PER_WRITE = select.PIPE_BUF // _DESC.size
# The control words (head, tail, peak, waiting) are read and written through a ctypes u64 array:
# one aligned 8-byte load or store each, which another process never sees half done. struct
# packs a u64 a byte at a time: the parent sampling a half-written tail reported a queue peak of
# 1.5 GB against a 128 MB bound, and a producer reading one could take room never released.
_Ctl = ctypes.c_uint64 * 4
_HEAD, _TAIL, _PEAK, _WAITING = 0, 1, 2, 3


def _control_words(buf: memoryview) -> ctypes.Array[ctypes.c_uint64]:
    """The four control words at the start of ``buf`` as a ctypes array.

    Made from the mapping's address rather than with ``from_buffer``, which would hold an export
    of the buffer and make SharedMemory refuse to close at interpreter exit. The array is only
    used while the ring is attached.
    """
    probe = ctypes.c_char.from_buffer(buf)
    address = ctypes.addressof(probe)
    del probe
    return _Ctl.from_address(address)
_ALLOC, _FREE, _PAD = 1, 2, 3
_EOF = (1 << 64) - 1


def _align(n: int) -> int:
    # records are whole multiples of the header size, so a wrap pad always has room for its header
    return (n + 15) & ~15


def record_size(meta_len: int, body_len: int) -> int:
    """Bytes a message takes in the ring, header and padding included."""
    return _align(_HDR.size + meta_len + body_len)


class StageCounter:
    """Bytes held by the rings of one pipeline stage, and the most seen held at once.

    Read by the parent from the rings' control blocks (head - tail), so the producers and the
    consumer pay nothing for it; :meth:`sample` is called from the parent's loop (every ~50 ms),
    so the stage peak is a sampled peak. Each ring also keeps its own exact peak, updated under
    its lock, and the sum of those bounds the stage peak from above.
    """

    def __init__(self, rings: list[Ring]) -> None:
        self.rings = rings
        self._peak = 0

    def held(self) -> int:
        return sum(r.held() for r in self.rings)

    def sample(self) -> int:
        held = self.held()
        self._peak = max(self._peak, held)
        return held

    def peak(self) -> int:
        """The largest sampled total, never less than the largest single ring's exact peak."""
        return max(self._peak, max((r.peak() for r in self.rings), default=0))


class _RingState(TypedDict):
    """What a :class:`Ring` pickles into a child: its name in shared memory and its primitives."""

    capacity: int
    name: str
    lock: Lock
    room: Semaphore
    rx: Connection
    tx: Connection


class Ring:
    """A multi-producer, single-consumer message ring in shared memory (create in the parent)."""

    def __init__(self, ctx: BaseContext, capacity: int) -> None:
        self.capacity = _align(capacity)
        self._shm = shared_memory.SharedMemory(create=True, size=_CTRL + self.capacity)
        self._name = self._shm.name
        self._lock = ctx.Lock()
        self._room = ctx.Semaphore(0)
        self._wake_room = self.capacity // 16
        self._rx: Connection
        self._tx: Connection
        self._rx, self._tx = ctx.Pipe(duplex=False)
        self._owner = True
        self._pending = b""
        self._unsent: list[bytes] = []
        self._buf = self._view()
        self._buf[:_CTRL] = bytes(_CTRL)
        self._ctl = _control_words(self._buf)

    def _view(self) -> memoryview:
        buf = self._shm.buf
        assert buf is not None
        return buf

    # -- pickling into a child process: reattach by name ------------------------------------
    def __getstate__(self) -> _RingState:
        return {
            "capacity": self.capacity,
            "name": self._name,
            "lock": self._lock,
            "room": self._room,
            "rx": self._rx,
            "tx": self._tx,
        }

    def __setstate__(self, state: _RingState) -> None:
        self.capacity = state["capacity"]
        self._name = state["name"]
        self._shm = shared_memory.SharedMemory(name=self._name)
        self._buf = self._view()
        self._ctl = _control_words(self._buf)
        self._lock = state["lock"]
        self._room = state["room"]
        self._wake_room = self.capacity // 16
        self._rx = state["rx"]
        self._tx = state["tx"]
        self._owner = False
        self._pending = b""
        self._unsent = []

    # -- producer side ------------------------------------------------------------------------
    def put(self, meta: bytes, body: bytes | memoryview = b"") -> float:
        """Copy one message in and announce it; returns the seconds spent waiting for room."""
        need = self._size(meta, body)
        reserved = self._reserve(need, wait=True)
        assert reserved is not None  # a waiting reservation always ends with room
        head, phys, waited = reserved
        self._fill(head, phys, need, meta, body)
        os.write(self._tx.fileno(), _DESC.pack(head, need))
        return waited

    def try_put(self, meta: bytes, body: bytes | memoryview = b"", *, defer: bool = False) -> bool:
        """Copy one message in only if it fits now; False, with nothing written, when the ring is full.

        The fetch loop calls this first so the common case costs no hop to a helper thread. With
        ``defer`` the descriptor is held until :meth:`announce`, so rows finishing together cost
        the consumer one wake-up, not one each (a wake-up per row made the writer and the fetch
        processes trade the CPU row by row). The deferring thread must announce before anything
        waits for room: records not announced cannot be released.
        """
        need = self._size(meta, body)
        reserved = self._reserve(need, wait=False)
        if reserved is None:
            return False
        head, phys, _ = reserved
        self._fill(head, phys, need, meta, body)
        if defer:
            self._unsent.append(_DESC.pack(head, need))
        else:
            os.write(self._tx.fileno(), _DESC.pack(head, need))
        return True

    def announce(self) -> None:
        """Send the descriptors held by ``try_put(defer=True)``, in writes the pipe keeps whole."""
        unsent, self._unsent = self._unsent, []
        fd = self._tx.fileno()
        for i in range(0, len(unsent), _DESCS_PER_WRITE):
            os.write(fd, b"".join(unsent[i : i + _DESCS_PER_WRITE]))

    def _size(self, meta: bytes, body: bytes | memoryview) -> int:
        need = record_size(len(meta), len(body))
        if need > self.capacity:
            raise ValueError(f"message of {need} bytes does not fit a ring of {self.capacity} bytes")
        return need

    def _reserve(self, need: int, *, wait: bool) -> tuple[int, int, float] | None:
        """Allocate ``need`` bytes: (head, physical offset, seconds waited), or None if full and not waiting."""
        cap = self.capacity
        buf = self._buf
        ctl = self._ctl
        waited = 0.0
        while True:
            self._lock.acquire()
            head = ctl[_HEAD]
            tail = ctl[_TAIL]
            phys = head % cap
            pad = cap - phys if phys + need > cap else 0
            if head + pad + need - tail <= cap:
                break  # the lock is still held: allocate below
            if wait:
                ctl[_WAITING] += 1  # ask the consumer to wake us when it frees room
            self._lock.release()
            if not wait:
                return None
            t0 = time.perf_counter()
            if not self._room.acquire(timeout=0.01):
                with self._lock:  # timed out: withdraw the request, or the tokens would pile up
                    if ctl[_WAITING]:
                        ctl[_WAITING] -= 1
            waited += time.perf_counter() - t0
        try:
            if pad:
                _HDR.pack_into(buf, _CTRL + phys, pad, _PAD, 0, 0)
                head += pad
                phys = 0
            _HDR.pack_into(buf, _CTRL + phys, need, _ALLOC, 0, 0)
            ctl[_HEAD] = head + need
            used = head + need - tail
            if used > ctl[_PEAK]:
                ctl[_PEAK] = used
        finally:
            self._lock.release()
        return head, phys, waited

    def _fill(self, head: int, phys: int, need: int, meta: bytes, body: bytes | memoryview) -> None:
        buf = self._buf
        _HDR.pack_into(buf, _CTRL + phys, need, _ALLOC, len(meta), len(body))
        start = _CTRL + phys + _HDR.size
        buf[start : start + len(meta)] = meta
        start += len(meta)
        buf[start : start + len(body)] = body

    def put_eof(self) -> None:
        """Tell the consumer that this producer sends nothing more."""
        os.write(self._tx.fileno(), _DESC.pack(_EOF, 0))

    # -- consumer side ------------------------------------------------------------------------
    def fileno(self) -> int:
        """The descriptor pipe's read end, for ``select`` beside other inputs."""
        return self._rx.fileno()

    def read_descriptors(self, timeout: float | None = None) -> list[tuple[int, int]] | None:
        """Descriptors that have arrived (waiting up to ``timeout``); (EOF, 0) marks a producer's end."""
        fd = self._rx.fileno()
        if timeout is not None:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return []
        chunk = os.read(fd, 16 * 256)
        if not chunk:
            return None
        data = self._pending + chunk
        whole = len(data) - len(data) % _DESC.size
        self._pending = data[whole:]
        return [_DESC.unpack_from(data, i) for i in range(0, whole, _DESC.size)]

    @staticmethod
    def is_eof(desc: tuple[int, int]) -> bool:
        return desc[0] == _EOF

    def read(self, desc: tuple[int, int]) -> tuple[bytes, bytes]:
        """(meta, body) of a message, copied out of the ring."""
        phys = desc[0] % self.capacity
        buf = self._buf
        _length, _state, meta_len, body_len = _HDR.unpack_from(buf, _CTRL + phys)
        start = _CTRL + phys + _HDR.size
        meta = bytes(buf[start : start + meta_len])
        return meta, bytes(buf[start + meta_len : start + meta_len + body_len])

    def release(self, desc: tuple[int, int]) -> None:
        """Free a record read by :meth:`read`; the tail moves over every leading free record."""
        cap = self.capacity
        buf = self._buf
        phys = desc[0] % cap
        struct.pack_into("<I", buf, _CTRL + phys + 4, _FREE)
        ctl = self._ctl
        head = ctl[_HEAD]
        tail = start = ctl[_TAIL]
        while tail < head:
            length, state, _, _ = _HDR.unpack_from(buf, _CTRL + tail % cap)
            if state not in (_FREE, _PAD):
                break
            tail += length
        if tail != start:
            ctl[_TAIL] = tail  # the consumer alone writes the tail: no lock needed
            if ctl[_WAITING] and (cap - (head - tail) >= self._wake_room or tail == head):
                with self._lock:
                    waiters = int(ctl[_WAITING])
                    ctl[_WAITING] = 0
                for _ in range(waiters):
                    self._room.release()

    def held(self) -> int:
        """Bytes allocated and not yet released (wrap padding included), as the parent samples it."""
        tail = int(self._ctl[_TAIL])
        head = int(self._ctl[_HEAD])
        # read one after the other: records released in between would count twice, so clamp
        return max(0, min(head - tail, self.capacity))

    def peak(self) -> int:
        """The most this ring ever held, exact (updated under the producers' lock)."""
        return int(self._ctl[_PEAK])

    def close(self) -> None:
        """Detach; the creating process also removes the segment."""
        self._buf.release()
        try:
            self._shm.close()
        except BufferError:
            return
        if self._owner:
            with contextlib.suppress(FileNotFoundError):
                self._shm.unlink()
