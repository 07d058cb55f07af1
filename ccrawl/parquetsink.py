"""A Parquet file written from a stream of record batches, encoded and compressed on a thread of its own.

Used by the batch commands that write ``-o parquet`` (:mod:`ccrawl.url.batchio`): a regular file is
written at its in-progress name and renamed when whole; a pipe or device (``/dev/stdout``) is written
in place.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ccrawl.durable import in_progress

if TYPE_CHECKING:
    import queue
    import threading

    import pyarrow as pa
    import pyarrow.parquet as pq

#: Columns whose values are (nearly) all distinct, written without dictionary or statistics.
PLAIN_COLUMNS = frozenset({"url", "surt", "canonical", "url_key"})


class ParquetSink:
    """Writes record batches to one Parquet file (``.tmp`` then renamed), a row group per batch.

    The encoding and zstd compression of a row group run on a writer thread of their own (pyarrow
    releases the GIL there), so the thread that reads the input and hands chunks to the kernels is
    not also the one that compresses the output: on two cores that serial pair was the command's
    critical path. At most ``depth`` batches wait for the writer, so memory stays bounded; an error
    on the writer thread is raised in the caller at its next batch or at :meth:`close`.
    """

    def __init__(
        self, target: str | IO[bytes], *, depth: int = 2, plain: Iterable[str] = PLAIN_COLUMNS,
    ) -> None:
        import queue

        self.target = target
        self.plain = frozenset(plain)
        self.tmp: Path | None = None
        self.writer: pq.ParquetWriter | None = None
        self.schema: pa.Schema | None = None
        self._queue: queue.Queue[pa.RecordBatch | None] = queue.Queue(maxsize=max(1, depth))
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._stop = False
        self._stream: IO[bytes] | None = None  # a device or FIFO named by --out, opened here

    def __call__(self, batch: pa.RecordBatch) -> None:
        if self._thread is None:
            import threading

            self._open(batch.schema)
            self._thread = threading.Thread(target=self._drain, name="ccrawl-parquet-writer", daemon=True)
            self._thread.start()
        if batch.num_rows:
            self._put(batch.cast(self.schema) if batch.schema != self.schema else batch)

    def _open(self, schema: pa.Schema) -> None:
        import pyarrow.parquet as pq

        self.schema = schema
        where: str | IO[bytes] = self.target
        if isinstance(self.target, str):
            if _regular_or_new(self.target):
                self.tmp = in_progress(self.target)
                where = str(self.tmp)
            else:  # pyarrow seeks in a file it opens by name; a pipe or a device takes a stream
                self._stream = open(self.target, "wb")  # noqa: SIM115 - closed by close() or abort()
                where = self._stream
        # plain columns are (nearly) all distinct: no dictionary, no min/max statistics to compute
        others = [n for n in schema.names if n not in self.plain]
        try:
            self.writer = pq.ParquetWriter(
                where, schema, compression="zstd", compression_level=1, use_dictionary=others,
                write_statistics=others,
            )
        except OSError as exc:
            raise self._output_error(exc) from None

    def _put(self, item: pa.RecordBatch) -> None:
        import queue

        while True:
            self._raise_pending()
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _raise_pending(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._stop = True
            raise error

    def _drain(self) -> None:
        writer = self.writer
        assert writer is not None  # opened before the thread starts
        while True:
            batch = self._queue.get()
            if batch is None or self._stop:
                return
            try:
                writer.write_batch(batch)
            except BaseException as exc:  # handed to the caller's thread
                self._error = self._output_error(exc)
                self._stop = True
                return

    def _output_error(self, exc: BaseException) -> BaseException:
        """A write the system refused (disk full, a closed pipe, ...) as one line naming the output."""
        if isinstance(exc, BrokenPipeError) or not isinstance(exc, OSError):
            return exc
        from ccrawl.errors import CcrawlError

        name = self.target if isinstance(self.target, str) else "standard output"
        reason = exc.strerror or str(exc).split("Detail: ")[-1]
        if "Broken pipe" in reason:
            return BrokenPipeError(reason)
        return CcrawlError(f"cannot write {name}: {reason}")

    def _join(self) -> None:
        if self._thread is None:
            return
        import queue

        while self._thread.is_alive():
            try:
                self._queue.put(None, timeout=0.1)
                break
            except queue.Full:
                continue
        self._thread.join()
        self._thread = None

    def close(self, empty_schema: pa.Schema | None = None) -> None:
        """Finish the file (an empty input still gets a file with ``empty_schema``) and rename it."""
        if self._thread is None and empty_schema is not None:
            self(_empty_batch(empty_schema))
        self._join()
        self._raise_pending()
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as exc:
                raise self._output_error(exc) from None
            self.writer = None
        if self._stream is not None:
            try:
                self._stream.close()
            except OSError as exc:
                raise self._output_error(exc) from None
            self._stream = None
        if self.tmp is not None:
            os.replace(self.tmp, str(self.target))
            self.tmp = None

    def abort(self) -> None:
        self._stop = True
        with contextlib.suppress(BaseException):
            self._join()
        self._error = None
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None
        if self._stream is not None:
            with contextlib.suppress(OSError):
                self._stream.close()
            self._stream = None
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                self.tmp.unlink()
            self.tmp = None


def _regular_or_new(path: str) -> bool:
    """Whether ``path`` is a file to write atomically (``.tmp`` then rename): not a device or a FIFO
    such as ``/dev/stdout``, which is written in place (renaming over it would replace the device)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def _empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
