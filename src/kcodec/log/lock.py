"""One writer per output: an exclusive, non-blocking ``fcntl.flock`` on a lock
file, as Kafka's ``LogManager`` locks each log directory with its ``.lock``.

A partition directory is locked through ``<dir>/.lock``, a single file
``OUT.log`` through ``OUT.log.lock`` beside it. A second writer fails at once
with :class:`OutputLockedError` naming the lock file. The lock file is removed
on release (so outputs hold only Kafka's files); a writer that acquires a lock
file another writer has just removed notices (its inode is gone) and opens the
new one. The kernel drops a killed process's lock with its descriptor.
"""

from __future__ import annotations

import os
from pathlib import Path

from kcodec.errors import KcodecError

__all__ = ["OutputLockedError", "OutputLock", "DIR_LOCK_NAME", "LOCK_SUFFIX"]

DIR_LOCK_NAME = ".lock"  # LogManager.LockFileName
LOCK_SUFFIX = ".lock"

_ATTEMPTS = 10  # lock files removed under us between open and flock: each try sees a newer one
_PID_TEXT_MAX = 24  # what a holder writes: its process id and a newline


class OutputLockedError(KcodecError):
    """Another writer holds the output's lock."""

    kind = "locked"


class OutputLock:
    """An exclusive lock held from :meth:`acquire` (or ``with``) until :meth:`release`."""

    def __init__(self, lock_path: Path):
        self.path = Path(lock_path)
        self._fd: int | None = None

    @classmethod
    def for_directory(cls, directory: Path) -> OutputLock:
        return cls(Path(directory) / DIR_LOCK_NAME)

    @classmethod
    def for_file(cls, path: Path) -> OutputLock:
        path = Path(path)
        return cls(path.with_name(path.name + LOCK_SUFFIX))

    def acquire(self) -> OutputLock:
        try:
            import fcntl
        except ImportError:  # Windows: no flock; writers are not serialized there
            return self
        for _ in range(_ATTEMPTS):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, _PID_TEXT_MAX).decode("ascii", "replace").strip()
                os.close(fd)
                by = f" (process {holder})" if holder.isdigit() else ""
                raise OutputLockedError(f"{self.path} is locked: another writer{by} is writing this output") from None
            except BaseException:
                os.close(fd)
                raise
            try:
                current = os.stat(self.path).st_ino
            except FileNotFoundError:
                current = None
            if current == os.fstat(fd).st_ino:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode("ascii"))  # names the holder to a second writer
                self._fd = fd
                return self
            os.close(fd)  # the holder removed this lock file as we opened it: take the new one
        raise OutputLockedError(f"{self.path} is locked: it keeps changing hands")

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # while still held: nobody can lock the removed inode usefully
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
