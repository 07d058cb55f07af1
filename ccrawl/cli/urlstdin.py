"""URLs on stdin for ``ccrawl url surt|canon|key|domain|shard``, read and answered a block at a time.

The per-URL form of these commands reads stdin line by line (:func:`ccrawl.cli.common.read_stdin_values`:
blank lines and ``#`` comments skipped, JSON lines carrying a ``url``, a line that is not text named on
stderr) and yields one record per URL. Here the same input is read in blocks of whole lines: a block whose
every line is a plain value (the usual case: checked in C) becomes an Arrow string array in one copy, any
other block is read by ``numbered_stdin_values`` (the same reader), so both give the same values. The batch kernels of
``ccrawl.url`` answer a block at a time on worker threads (they release the GIL), in input order, and the
rows come out as record batches holding the operation's columns; a URL the kernel cannot handle is named
on stderr and left out, as the per-URL form does.
"""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING

from ccrawl import accel
from ccrawl.cli.common import InputLineError, numbered_stdin_values
from ccrawl.url.lineblocks import StreamBroken, line_blocks

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.url.batchio import BatchParams

BLOCK = 1 << 20  # bytes of text per block: a few blocks in flight keep two cores busy from the first MB

#: url subcommand -> batch command of ``ccrawl.url.batchio``
COMMANDS = {"url.surt": "surt", "url.canon": "canon", "url.key": "key", "url.domain": "domain", "url.shard": "shard"}

_SPACES = frozenset(" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)


def plain_lines_py(array: pa.StringArray) -> bool:
    """Twin of the compiled ``plain_lines``: every row a value as it stands (see the module docstring)."""
    for value in array.to_pylist():
        if not value or value[0] in "#{" or value[0] in _SPACES or value[-1] in _SPACES:
            return False
    return True


_textout = accel.native("textout")
plain_lines: Callable[[pa.StringArray], bool] = _textout.plain_lines if _textout is not None else plain_lines_py


def _blocks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """Blocks of whole lines as they arrive (:func:`ccrawl.url.lineblocks.line_blocks`, ``read1``: lines
    typed or trickling down a pipe are answered as they come); a read that fails raises its own error
    after the whole lines before it."""
    try:
        yield from line_blocks(stream, size)
    except StreamBroken as exc:
        raise exc.cause from None


class _Block:
    """One block's answer: its rows (a record batch), and in input order the lines that were not values
    and the URLs that failed (with their reasons)."""

    __slots__ = ("batch", "events")

    def __init__(self, batch: pa.RecordBatch, events: list[InputLineError | tuple[str, str]]) -> None:
        self.batch = batch
        self.events = events


def _values(
    block: bytes, first_line: int, op_name: str, op_params: Mapping[str, int]
) -> tuple[pa.StringArray, list[int] | None, list[tuple[int, InputLineError | tuple[str, str]]]]:
    """The block's values as a string array, each value's line number (None: one a line, in order), and
    the lines that were not values (a JSON line's value that is no Unicode text, a lone surrogate, gets
    the per-URL operation's own answer: it cannot travel in an Arrow string)."""
    native = accel.native("surt")
    if native is not None:
        urls, errors = native.lines_array(block, first_line)
    else:
        from ccrawl.url.batch import lines_array_py

        urls, errors = lines_array_py(block, first_line)
    if errors.null_count == len(errors) and plain_lines(urls):
        return urls, None, []
    values: list[str | None] = []
    lines: list[int] = []
    bad: list[tuple[int, InputLineError | tuple[str, str]]] = []
    for n, item in numbered_stdin_values(io.BytesIO(block)):
        number = n + first_line - 1
        if isinstance(item, InputLineError):
            bad.append((number, InputLineError(number, item.reason)))
            continue
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:
            from ccrawl import ops

            answer = next(iter(ops.get(op_name)(urls=[item], **op_params)), None)
            if answer is not None and answer.get("error"):
                bad.append((number, (item, str(answer["error"]))))
                continue
        values.append(item)
        lines.append(number)
    from ccrawl.rowbatch import string_array

    return string_array(values), lines, bad


def _answer(
    block: bytes, first_line: int, op_name: str, params: BatchParams, op_params: Mapping[str, int]
) -> _Block:
    import pyarrow as pa

    from ccrawl.url.batchio import NEW_COLUMNS, new_columns

    command = COMMANDS[op_name]
    urls, lines, bad = _values(block, first_line, op_name, op_params)
    columns, errors = new_columns(command, urls, params)
    batch = pa.RecordBatch.from_arrays([urls, *(columns[n] for n in NEW_COLUMNS[command])],
                                       names=["url", *NEW_COLUMNS[command]])
    events: list[tuple[int, InputLineError | tuple[str, str]]] = list(bad)
    keep = None
    if errors.null_count != len(errors):
        import pyarrow.compute as pc

        for i, (url, error) in enumerate(zip(urls.to_pylist(), errors.to_pylist(), strict=True)):
            if error is not None:
                events.append((lines[i] if lines is not None else i, (url, error)))
        keep = pc.is_null(errors)
    only = params.get("only")
    if command == "shard" and only is not None:
        import pyarrow.compute as pc

        mine = pc.fill_null(pc.equal(batch.column("shard"), pa.scalar(only, pa.uint32())), False)
        keep = mine if keep is None else pc.and_(keep, mine)
    if keep is not None:
        batch = batch.filter(keep)
    events.sort(key=lambda e: e[0])
    return _Block(batch, [e for _, e in events])


def stdin_batches(
    op_name: str, stream: IO[bytes], params: Mapping[str, int], *, on_bad_line: Callable[[InputLineError], None],
    on_failed: Callable[[str, str], None], on_rows: Callable[[int], None], workers: int = 2, block: int = BLOCK,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the ``url.*`` operation ``op_name`` over the URLs of ``stream``, in input order.

    ``on_bad_line`` hears of each line that is not a value, ``on_failed`` of each URL the operation cannot
    handle (with its reason), ``on_rows`` of each batch's row count, all before the batch is yielded.
    """
    from ccrawl.leanarrow import import_pyarrow_lean
    from ccrawl.url.batchio import BatchParams

    import_pyarrow_lean()  # before the workers: this command never uses numpy (~0.1 CPU-s of its start)
    command = COMMANDS[op_name]
    op_params = dict(params)
    batch_params = BatchParams()
    if command == "shard":  # the operation's ``shard`` (the one to keep) is the batch form's ``only``
        batch_params = BatchParams(shards=params["shards"], only=params.get("shard"))
    elif "include_private" in params:
        batch_params["include_private"] = bool(params["include_private"])
    threaded = workers > 1 and accel.native("surt") is not None

    def answers() -> Iterator[_Block]:
        line = 1
        for data in _blocks(stream, block):
            first, line = line, line + data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            if not threaded:
                yield _answer(data, first, op_name, batch_params, op_params)
                continue
            window.append(pool.submit(_answer, data, first, op_name, batch_params, op_params))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()

    from concurrent.futures import Future
    from concurrent.futures.thread import ThreadPoolExecutor

    window: deque[Future[_Block]] = deque()
    pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="ccrawl-url")
    try:
        for answer in answers():
            for event in answer.events:
                if isinstance(event, InputLineError):
                    on_bad_line(event)
                else:
                    on_failed(*event)
            on_rows(answer.batch.num_rows)
            yield answer.batch
    finally:
        for future in window:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
