"""Opening what records are read from: bytes, a regular file or a binary stream.

Files are read with ``os.pread`` in bounded windows, never memory-mapped: a mapped file that shrinks under
the reader (retention deleting a segment, a follower truncating its log after a leader change) kills the
process with SIGBUS, which Python cannot catch. A read past the file's new end only comes back short, and
the reader stops there as at any partial tail. A 1 GiB segment costs one window of memory (the page cache
keeps the file, outside the process). Streams are read in bounded chunks, so a lying size field costs no
memory.

Only regular files are opened: a FIFO or a device (``/dev/zero``) has no end a reader can trust, and
opening a FIFO blocks until a writer comes.
"""

from __future__ import annotations

import os
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
    "as_input",
    "is_buffer",
    "is_path",
    "is_random_access",
    "is_stream",
    "open_input",
    "open_regular_file",
    "read_regular_file",
    "read_up_to",
]

Source = bytes | bytearray | memoryview | str | os.PathLike | BinaryIO

WINDOW = 4 << 20  # bytes read ahead per pread; an entry larger than this is read on its own
CHUNK = 1 << 20  # bytes per read when only a checksum of the bytes is wanted


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
