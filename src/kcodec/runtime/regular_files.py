"""Reading a path that must be a regular file: a FIFO would block the open until a writer comes, a device
(``/dev/zero``) never ends, a directory has no bytes. The one check every reader of a user's path uses
(record files, index files, the generator's Kafka JSON definitions); it lives at the bottom floor so the
generator can use it too."""

from __future__ import annotations

import os
import stat

from kcodec.errors import NotRegularFileError

__all__ = ["open_regular_file", "read_regular_file"]


def open_regular_file(path: str | os.PathLike) -> int:
    """A read-only descriptor of ``path``, which must be a regular file (a FIFO is opened without
    blocking, then refused, as is a device or a directory)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a directory"
            if stat.S_ISDIR(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise NotRegularFileError(f"{os.fspath(path)} is {kind}: only regular files are read")
    return fd


def read_regular_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular_file`), at most its size when opened
    and at most ``limit``: a file that grows while it is read, or a sparse one, cannot make this read on."""
    fd = open_regular_file(path)
    try:
        size = os.fstat(fd).st_size
        n = size if limit is None else min(size, limit)
        parts, got = [], 0
        while got < n:  # a read of more than 2 GiB comes back in pieces; a file that shrank, short
            more = os.pread(fd, n - got, got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)
    finally:
        os.close(fd)
