"""Opening what records are read from: bytes, a file (memory-mapped) or a binary stream.

A 1 GiB segment is never read into memory: files are mapped read-only, and
the pages already walked can be dropped from the process (they stay in the
page cache). Streams are read in bounded chunks, so a lying size field costs
no memory.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, TypeGuard

__all__ = ["Source", "Buffer", "is_buffer", "is_path", "is_stream", "open_buffer", "read_up_to"]

Source = bytes | bytearray | memoryview | str | os.PathLike | BinaryIO

_RELEASE_EVERY = 32 << 20  # drop mapped pages in steps of 32 MiB


def is_buffer(source: object) -> TypeGuard[bytes | bytearray | memoryview]:
    return isinstance(source, (bytes, bytearray, memoryview))


def is_path(source: object) -> TypeGuard[str | os.PathLike]:
    return isinstance(source, (str, os.PathLike))


def is_stream(source: object) -> TypeGuard[BinaryIO]:
    return not is_buffer(source) and not is_path(source) and hasattr(source, "read")


class Buffer:
    """The bytes of a source as one memoryview; for a mapped file, :meth:`done_up_to` lets the pages
    before a position go."""

    def __init__(self, view: memoryview, mapping: mmap.mmap | None = None):
        self.view = view
        self._release = _page_releaser(mapping) if mapping is not None else None
        self._released = 0

    def done_up_to(self, position: int) -> None:
        """Nothing before ``position`` is read again (an optimisation only)."""
        if self._release is not None and position - self._released >= _RELEASE_EVERY:
            self._released = self._release(position)


@contextmanager
def open_buffer(source: Source, *, read_streams: bool = True) -> Iterator[Buffer | None]:
    """The whole of ``source`` as a :class:`Buffer`: bytes as they are, a path memory-mapped (None for an
    empty file, which cannot be mapped), a stream read whole (None when ``read_streams`` is False)."""
    if is_buffer(source):
        yield Buffer(memoryview(source))
    elif is_path(source):
        with open(source, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                yield None
                return
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                view = memoryview(mm)
                try:
                    yield Buffer(view, mm)
                finally:
                    view.release()  # before the mapping closes: it refuses while views exist
    elif is_stream(source):
        yield Buffer(memoryview(read_up_to(source, 2**62))) if read_streams else None
    else:
        raise TypeError(f"cannot read records from {type(source).__name__}")


def _page_releaser(mm: mmap.mmap):
    """Drop the mapped pages already read from this process's memory (they
    stay in the page cache), so streaming a 1 GiB segment keeps RSS small."""
    if not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None

    def release(upto: int) -> int:
        aligned = upto - upto % mmap.PAGESIZE
        if aligned > 0:
            try:
                mm.madvise(mmap.MADV_DONTNEED, 0, aligned)
            except OSError:
                pass  # only an optimisation
        return upto

    return release


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
