"""Opening what records are read from: bytes, a regular file or a binary stream.

Files are read with ``os.pread`` in bounded windows, never memory-mapped: a mapped file that shrinks under
the reader (retention deleting a segment, a follower truncating its log after a leader change) kills the
process with SIGBUS, which Python cannot catch. A read past the file's new end only comes back short, and
the reader stops there as at any partial tail. A 1 GiB segment costs one window of memory (the page cache
keeps the file, outside the process). Streams are read in bounded chunks, so a lying size field costs no
memory.

A stream read by a reader that must look ahead (``read_batches(stream, skip_corrupt=True)`` resynchronising
after damage) is a :class:`StreamInput`: read forward only as far as asked, what was read kept in anonymous
temporary files, and dropped once the reader has gone past it. Memory holds one window; the disk holds what
lies between the reader and its furthest look-ahead (at most about ``max_batch_size``).

Only regular files are opened: a FIFO or a device (``/dev/zero``) has no end a reader can trust, and
opening a FIFO blocks until a writer comes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, TypeGuard

from kcodec.runtime.regular_files import open_regular_file, read_regular_file

__all__ = [
    "Source",
    "Input",
    "MemoryInput",
    "FileInput",
    "RangedInput",
    "StreamInput",
    "as_input",
    "is_buffer",
    "is_path",
    "is_random_access",
    "is_stream",
    "open_input",
    "open_stream_input",
    "SpilledStream",
    "spilled_stream",
    "open_regular_file",
    "read_regular_file",
    "read_up_to",
]

Source = bytes | bytearray | memoryview | str | os.PathLike | BinaryIO

WINDOW = 4 << 20  # bytes read ahead per pread; an entry larger than this is read on its own
CHUNK = 1 << 20  # bytes per read when only a checksum of the bytes is wanted
SPILL_PART = 64 << 20  # bytes per temporary file a StreamInput keeps; a part wholly behind the reader is dropped
UNKNOWN_SIZE = 2**62  # a StreamInput's size until its stream has ended


def is_buffer(source: object) -> TypeGuard[bytes | bytearray | memoryview]:
    return isinstance(source, (bytes, bytearray, memoryview))


def is_path(source: object) -> TypeGuard[str | os.PathLike]:
    return isinstance(source, (str, os.PathLike))


def is_random_access(source: object) -> bool:
    """A file read at positions, as pyarrow's RandomAccessFile (an object in S3, GCS, HDFS ...) is:
    ``read_at(n, pos)`` and ``size()``, each a ranged read of the object, never the whole of it."""
    return hasattr(source, "read_at") and callable(getattr(source, "size", None))


def is_stream(source: object) -> TypeGuard[BinaryIO]:
    return not is_buffer(source) and not is_path(source) and not is_random_access(source) and hasattr(source, "read")


class Input:
    """Random access to the bytes of a source. ``size`` is fixed when it is opened; a read returns fewer
    bytes than asked only at the end (a file that shrank since it was opened ends early, and
    ``shrank_to`` says where)."""

    size: int
    shrank_to: int | None = None

    def read(self, pos: int, n: int):
        """Bytes ``[pos, pos + n)`` as a bytes-like object, read ahead for a reader going forward."""
        raise NotImplementedError

    def pread(self, pos: int, n: int):
        """Bytes ``[pos, pos + n)``, without disturbing the read-ahead of :meth:`read`."""
        raise NotImplementedError

    def ahead(self, pos: int, n: int):
        """Up to ``n`` bytes from ``pos`` that are at hand (read ahead), for a reader that takes as many
        whole entries as they hold: the rest of the current window, or a new window read from ``pos``."""
        return self.read(pos, n)

    def reach(self, pos: int, n: int) -> int:
        """How many of the bytes ``[pos, pos + n)`` the input holds (fewer than ``n`` only at its end)."""
        return max(0, min(n, self.size - pos))

    def end_by(self, end: int) -> int:
        """Where the input ends, or ``end`` when that comes first."""
        return min(end, self.size)

    def forget(self, pos: int) -> None:
        """The reader will not read below ``pos`` again (a stream drops what it kept of those bytes)."""

    def windows(self, start: int, end: int, overlap: int) -> Iterator[tuple[int, bytes | memoryview]]:
        """(base, bytes from ``base``) covering ``[start, end)``; consecutive windows share ``overlap``
        bytes, so a pattern of up to ``overlap + 1`` bytes is whole in one of them."""
        raise NotImplementedError

    def chunks(self, pos: int, end: int) -> Iterator[bytes | memoryview]:
        """Bytes ``[pos, end)`` in pieces of bounded size (short at the end of the input)."""
        raise NotImplementedError


class MemoryInput(Input):
    def __init__(self, view: memoryview):
        self.view = view if view.format == "B" and view.ndim == 1 else view.cast("B")
        self.size = len(self.view)

    def read(self, pos: int, n: int) -> memoryview:
        return self.view[pos : pos + n]

    pread = read

    def windows(self, start: int, end: int, overlap: int) -> Iterator[tuple[int, memoryview]]:
        yield 0, self.view[:end]

    def chunks(self, pos: int, end: int) -> Iterator[memoryview]:
        yield self.view[pos:end]


class FileInput(Input):
    """A regular file read through ``os.pread``: never more than a window (or one entry) in memory."""

    def __init__(self, fd: int, size: int):
        self.fd, self.size = fd, size
        self._base, self._ahead = 0, memoryview(b"")
        self.shrank_to: int | None = None  # where the file ended when a read found it shorter than ``size``

    def read(self, pos: int, n: int):
        n = max(0, min(n, self.size - pos))
        at = pos - self._base
        if 0 <= at and at + n <= len(self._ahead):
            return self._ahead[at : at + n]
        if n > WINDOW:
            return self.pread(pos, n)
        self._base, self._ahead = pos, memoryview(self.pread(pos, max(n, WINDOW)))
        return self._ahead[:n]

    def ahead(self, pos: int, n: int):
        at = pos - self._base
        if 0 <= at < len(self._ahead):
            return self._ahead[at : at + max(0, n)]
        return self.read(pos, min(n, WINDOW))

    def pread(self, pos: int, n: int) -> bytes:
        n = max(0, min(n, self.size - pos))
        parts, got = [], 0
        while got < n:  # a read of more than 2 GiB comes back in pieces
            more = self._read_at(n - got, pos + got)
            if not more:  # the file shrank: the caller sees a short read
                self.shrank_to = pos + got if self.shrank_to is None else min(self.shrank_to, pos + got)
                break
            parts.append(more)
            got += len(more)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _read_at(self, n: int, pos: int) -> bytes:
        return os.pread(self.fd, n, pos)

    def windows(self, start: int, end: int, overlap: int) -> Iterator[tuple[int, bytes]]:
        base = start
        while True:
            want = min(WINDOW, end - base)
            data = self.pread(base, want)
            yield base, data
            if len(data) < want or base + len(data) >= end:
                return
            base += len(data) - overlap

    def chunks(self, pos: int, end: int) -> Iterator[bytes]:
        while pos < end:
            data = self.pread(pos, min(CHUNK, end - pos))
            if not data:
                return
            yield data
            pos += len(data)


class RangedInput(FileInput):
    """A random-access file (:func:`is_random_access`: an object store's object through pyarrow) read as a
    local file is, window by window: each window one ranged GET, a multi-GB object never whole in memory."""

    def __init__(self, file):
        super().__init__(-1, file.size())
        self.file = file

    def _read_at(self, n: int, pos: int) -> bytes:
        return self.file.read_at(n, pos)


class StreamInput(FileInput):
    """A binary stream as an :class:`Input`: read forward as far as a reader asks (:meth:`reach`), the bytes
    kept in anonymous temporary files of ``SPILL_PART`` bytes, a file dropped once :meth:`forget` has passed
    it. ``size`` is ``UNKNOWN_SIZE`` until the stream has ended, then the bytes it held; a read below what was
    forgotten is a bug of the caller's (ValueError)."""

    def __init__(self, stream: BinaryIO, part: int | None = None):
        super().__init__(-1, UNKNOWN_SIZE)
        self.stream, self.part = stream, part or SPILL_PART
        self._parts: dict[int, BinaryIO] = {}  # part number -> its temporary file
        self._filled = 0  # bytes read from the stream so far
        self._kept_from = 0  # bytes below this were forgotten

    def close(self) -> None:
        for f in self._parts.values():
            f.close()
        self._parts.clear()

    def _fill(self, upto: int) -> None:
        while self._filled < upto and self.size == UNKNOWN_SIZE:
            chunk = self.stream.read(CHUNK)  # bounded reads: a lying size costs a look-ahead, never memory
            if not chunk:
                self.size = self._filled
                return
            view = memoryview(chunk)
            while view:
                number, at = divmod(self._filled, self.part)
                f = self._parts.get(number)
                if f is None:
                    f = self._parts[number] = tempfile.TemporaryFile(prefix="kcodec-stream-")
                n = min(len(view), self.part - at)
                os.pwrite(f.fileno(), view[:n], at)
                view, self._filled = view[n:], self._filled + n

    def reach(self, pos: int, n: int) -> int:
        self._fill(pos + n)
        return max(0, min(n, self._filled - pos))

    def end_by(self, end: int) -> int:
        while self.size == UNKNOWN_SIZE and self._filled < end:  # read on to the end, keeping nothing
            self.forget(self._filled)
            self._fill(min(end, self._filled + self.part))
        return min(end, self._filled)

    def forget(self, pos: int) -> None:
        self._kept_from = max(self._kept_from, pos)
        for number in [k for k in self._parts if (k + 1) * self.part <= self._kept_from]:
            self._parts.pop(number).close()

    def pread(self, pos: int, n: int) -> bytes:
        if pos < self._kept_from:
            raise ValueError(f"stream bytes from {pos} were already passed over (kept from {self._kept_from})")
        n = self.reach(pos, n)
        parts = []
        while n > 0:
            number, at = divmod(pos, self.part)
            got = os.pread(self._parts[number].fileno(), min(n, self.part - at), at)
            if not got:  # cannot happen: every byte up to _filled was written
                break
            parts.append(got)
            pos, n = pos + len(got), n - len(got)
        return parts[0] if len(parts) == 1 else b"".join(parts)


def as_input(data) -> Input:
    """An :class:`Input` as it is, or one over a bytes-like object."""
    return data if isinstance(data, Input) else MemoryInput(memoryview(data))


@contextmanager
def open_input(source: Source) -> Iterator[Input]:
    """``source`` as an :class:`Input`: bytes as they are, a path read with pread (a regular file only),
    a random-access file (an object) with ranged reads, a stream read whole (which is why the plain readers
    walk streams themselves)."""
    if is_buffer(source):
        yield MemoryInput(memoryview(source))
    elif is_path(source):
        fd = open_regular_file(source)
        try:
            yield FileInput(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
    elif is_random_access(source):
        yield RangedInput(source)
    elif is_stream(source):
        yield MemoryInput(memoryview(read_up_to(source, 2**62)))
    else:
        raise TypeError(f"cannot read records from {type(source).__name__}")


@contextmanager
def open_stream_input(stream: BinaryIO, part: int | None = None) -> Iterator[StreamInput]:
    """``stream`` as a :class:`StreamInput`, its temporary files removed on leaving."""
    source = StreamInput(stream, part)
    try:
        yield source
    finally:
        source.close()


class SpilledStream:
    """What a stream held, copied to a temporary file, as a random-access file (:func:`is_random_access`) whose
    positions start at ``start``, as the stream's do for :func:`read_batches`: it can be read twice."""

    def __init__(self, file: BinaryIO, start: int):
        self.file, self.start = file, start

    def size(self) -> int:
        return self.start + os.fstat(self.file.fileno()).st_size

    def read_at(self, n: int, pos: int) -> bytes:
        if pos < self.start:
            raise ValueError(f"byte {pos} is before the stream's first byte ({self.start})")
        return os.pread(self.file.fileno(), n, pos - self.start)


@contextmanager
def spilled_stream(stream: BinaryIO, start: int = 0) -> Iterator[SpilledStream]:
    """The rest of ``stream`` copied to a temporary file (a chunk at a time), its first byte at position
    ``start``; the file is removed on leaving."""
    with tempfile.TemporaryFile(prefix="kcodec-stream-") as f:
        shutil.copyfileobj(stream, f, CHUNK)
        f.flush()
        yield SpilledStream(f, start)


def read_up_to(stream: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes of ``stream`` (fewer at its end), read in chunks of at most 1 MiB."""
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(min(n - got, 1 << 20))  # bounded reads: a lying size costs no memory
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
