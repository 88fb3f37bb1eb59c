"""A commit of new segments into several partition directories of one log
directory that readers see as one step (the ``kafka-segments`` Spark writer's).

Under a log directory ``ROOT``:

* ``ROOT/_kcodec_staging/<job>/final/<topic>-<n>/``: the job's finished
  segments, built where no reader looks (kcodec's own names, recognised
  exactly: :data:`~kcodec.log.names.RESERVED_NAMES`);
  ``ROOT/_kcodec_staging/<job>/old/``: what the job replaced, until it is done;
  ``ROOT/_kcodec_staging/<job>/.lock``: held by the job's driver while it runs.
* ``ROOT/_kcodec_commit``: the commit record (JSON: job, mode, the partition
  directories the job writes, each staged directory's identity). It exists only
  while a commit is being published.

The protocol:

1. Build every partition's segments under the job's staging directory.
2. Commit point: write the record to ``_kcodec_commit.tmp`` and rename it to
   ``_kcodec_commit``. Before this rename the job has changed nothing readers
   see; after it, the new state is decided.
3. Publish (:func:`roll_forward`), per partition in the record: the staged
   directory takes the old one's place in one step where the filesystem can
   swap two names (Linux ``renameat2``; ``append`` first links the old
   directory's files into the staged one, so it holds the whole new partition),
   and the old directory goes to ``old/``; elsewhere the old directory moves to
   ``old/`` and the staged one in (``append`` then moves the new files one by
   one, index files first and ``.log`` last). ``overwrite`` then moves the
   partition directories the job did not write to ``old/``.
4. Remove the record (the commit is complete), then the job's staging
   directory with the old data.

Old data never carries a name a broker deletes (``<name>.<id>-delete``), and
on a local Linux filesystem each partition directory switches from old to new
in one step, also for a reader that does not know the record (a broker started
on a copy of the directory); the partitions switch one after another, so such
a reader can see some partitions new and others old (docs/spark.md: Limits).

Readers resolve the record (:func:`segment_sources`,
:func:`visible_partition_names`): while it exists, a partition directory
reads as the record's new state whatever step 3 reached (an ``overwrite``
partition from its staged directory until that has been switched in, an
``append`` one as its directory plus the staged files not moved yet, a
partition ``overwrite`` drops as empty); without it, directories read as they
are. Every step of 3 and 4 can be repeated, so the next writer finishing an
interrupted commit (record present: roll forward) or deleting a crashed job's
staging directory (no record: roll back) leaves ordinary Kafka partition
directories. A job whose driver still runs holds its lock: a second job on the
same path fails naming it (:func:`claim`) instead of deleting its staging.
Readers never write.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kcodec.errors import KcodecError
from kcodec.log.lock import OutputLock, OutputLockedError
from kcodec.log.names import COMMIT_RECORD, DELETE_SUFFIX, STAGING_DIR, is_partition_dir_name

__all__ = [
    "COMMIT_RECORD",
    "STAGING_DIR",
    "CommitRecord",
    "CommitRecordError",
    "PathBusyError",
    "claim",
    "release",
    "read_record",
    "write_record",
    "staged_dir",
    "segment_sources",
    "visible_partition_names",
    "roll_forward",
    "recover",
]

_JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)  # a job id is a path component


class CommitRecordError(KcodecError):
    """The commit record of a log directory cannot be read."""

    kind = "commit_record"


class PathBusyError(KcodecError):
    """Another job is writing the same log directory."""

    kind = "path_busy"


@dataclass(frozen=True)
class CommitRecord:
    job: str
    overwrite: bool
    partitions: tuple[str, ...]  # partition directory names the job writes
    # partition -> the staged directory's identity (FileSystem.identity): after a swap, the staged
    # name holds the old directory, and only this tells the two apart; empty where there is no swap
    ids: tuple[tuple[str, str], ...] = field(default=())


def _after_step(step: str) -> None:
    """Called after every change the commit makes (tests replace it to kill the commit there)."""


def record_path(fs, root: str) -> str:
    return fs.join(root, COMMIT_RECORD)


def job_dir(fs, root: str, job: str) -> str:
    return fs.join(root, STAGING_DIR, job)


def staged_dir(fs, root: str, job: str, name: str) -> str:
    return fs.join(job_dir(fs, root, job), "final", name)


def read_record(fs, root: str) -> CommitRecord | None:
    """The commit record of ``root``, or None when no commit is being published."""
    path = record_path(fs, root)
    try:
        data = fs.read_bytes(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        obj = json.loads(data)
        record = CommitRecord(
            str(obj["job"]),
            bool(obj["overwrite"]),
            tuple(str(p) for p in obj["partitions"]),
            tuple(sorted((str(k), str(v)) for k, v in dict(obj.get("ids") or {}).items())),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CommitRecordError(f"{path}: not a kcodec commit record ({exc})") from None
    bad = [p for p in record.partitions if not is_partition_dir_name(p)]
    if not _JOB_ID.fullmatch(record.job) or bad:
        what = f"partition directory {bad[0]!r}" if bad else f"job id {record.job!r}"
        raise CommitRecordError(
            f"{path}: names {what}, which is no path under {root}; not written by this kcodec: "
            "move it away to read the directories as they are"
        )
    return record


def write_record(fs, root: str, record: CommitRecord) -> None:
    """The commit point: the record appears whole, with one rename."""
    path = record_path(fs, root)
    tmp = path + ".tmp"
    data = json.dumps(
        {
            "job": record.job,
            "overwrite": record.overwrite,
            "partitions": list(record.partitions),
            "ids": dict(record.ids),
        }
    )
    with fs.open_output(tmp) as f:
        f.write(data.encode())
        if fs.local:
            f.flush()
            os.fsync(f.fileno())
    _after_step("record written")
    fs.move(tmp, path)
    _after_step("record renamed")


# ----------------------------------------------------------------------------- readers


def _pending_for(fs, directory: str) -> tuple[CommitRecord, str, str] | None:
    """(record, root, name) when ``directory`` lies in a log directory with a commit being published."""
    directory = str(directory)
    root = fs.parent(directory)
    if not fs.exists(record_path(fs, root)):
        return None
    record = read_record(fs, root)
    if record is None:
        return None
    return record, root, fs.name(directory)


def segment_sources(fs, directory: str) -> list[str] | None:
    """The directories whose segments make up ``directory`` while a commit is
    being published (the first one listing a base offset wins), or None when
    no commit concerns it and it reads as it is."""
    pending = _pending_for(fs, directory)
    if pending is None:
        return None
    record, root, name = pending
    if name not in record.partitions:
        return [] if record.overwrite and not name.endswith(DELETE_SUFFIX) else None
    staged = staged_dir(fs, root, record.job, name)
    if record.overwrite:
        return [staged] if _holds_new(fs, record, name, staged) else [str(directory)]
    return [staged, str(directory)]  # before or after the switch, the staged files complete the directory


def visible_partition_names(fs, root: str, names: list[str]) -> list[str]:
    """The partition directory names of ``root`` a reader sees, given those
    listed there: the commit being published decides which exist."""
    if not fs.exists(record_path(fs, root)):
        return names
    record = read_record(fs, root)
    if record is None:
        return names
    if record.overwrite:
        return sorted(record.partitions)
    return sorted(set(names) | set(record.partitions))


# ----------------------------------------------------------------------------- writers


def _publish_order(names: list[str]) -> list[str]:
    """Per segment the index files first and the ``.log`` last (a visible ``.log`` is a whole segment)."""
    return sorted(names, key=lambda n: (n.split(".", 1)[0], n.endswith(".log"), n))


def old_dir(fs, root: str, job: str, name: str) -> str:
    """Where the job keeps a directory it replaced until the commit is complete."""
    return fs.join(job_dir(fs, root, job), "old", name)


def identities(fs, root: str, job: str, names: list[str]) -> tuple[tuple[str, str], ...]:
    """The staged directories' identities, for the record (none where the filesystem has none)."""
    out = []
    for name in names:
        ident = fs.identity(staged_dir(fs, root, job, name))
        if ident is not None:
            out.append((name, ident))
    return tuple(out)


def _holds_new(fs, record: CommitRecord, name: str, staged: str) -> bool:
    """Whether the staged name still holds the job's new directory (not yet switched in; after a
    swap it holds the old one)."""
    if not fs.is_dir(staged):
        return False
    recorded = dict(record.ids).get(name)
    return recorded is None or fs.identity(staged) == recorded


def _set_aside(fs, root: str, job: str, name: str, path: str) -> None:
    old = old_dir(fs, root, job, name)
    fs.makedirs(fs.parent(old))
    fs.move(path, old)


def _link_old_files(fs, staged: str, target: str) -> bool:
    """``append`` before a swap: the old directory's files, hard-linked into the staged one, so the
    staged directory is the whole new partition. False where that cannot be (not local, a
    subdirectory, links refused): the new files are then moved in one by one."""
    if not fs.local:
        return False
    try:
        with os.scandir(target) as it:
            entries = list(it)
        if any(e.is_dir(follow_symlinks=False) for e in entries):
            return False
        for e in entries:
            dst = os.path.join(staged, e.name)
            if e.name == ".lock" or os.path.lexists(dst):
                continue  # a writer's lock is not data; a name already there was linked before
            os.link(e.path, dst, follow_symlinks=False)
    except OSError:
        return False
    return True


def _switch(fs, root: str, record: CommitRecord, name: str) -> None:
    """Put partition ``name``'s new directory in place (step 3 for one partition; repeatable)."""
    job = record.job
    staged = staged_dir(fs, root, job, name)
    target = fs.join(root, name)
    if not _holds_new(fs, record, name, staged):
        if fs.is_dir(staged):  # swapped: the staged name holds the old directory
            _set_aside(fs, root, job, name, staged)
            _after_step(f"{name} old set aside")
        return
    if fs.exists(target):
        whole = record.overwrite or (name in dict(record.ids) and _link_old_files(fs, staged, target))
        if whole and fs.exchange(staged, target):
            _after_step(f"{name} swapped in")
            _set_aside(fs, root, job, name, staged)
            _after_step(f"{name} old set aside")
            return
        if not record.overwrite:  # append without a swap: the new files, one by one
            for entry in _publish_order([fs.name(e.path) for e in fs.list(staged)]):
                dst = fs.join(target, entry)
                if fs.exists(dst):
                    fs.delete_file(fs.join(staged, entry))  # an old file linked in above
                else:
                    fs.move(fs.join(staged, entry), dst)
                    _after_step(f"{name}/{entry} moved in")
            fs.delete_dir(staged)
            _after_step(f"{name} staging removed")
            return
        _set_aside(fs, root, job, name, target)
        _after_step(f"{name} set aside")
    fs.move(staged, target)
    _after_step(f"{name} moved in")


def roll_forward(fs, root: str, record: CommitRecord) -> None:
    """Publish the committed job (steps 3 and 4); each step may already be done."""
    job = record.job
    for name in record.partitions:
        _switch(fs, root, record, name)
    if record.overwrite:
        for e in fs.list(root):
            name = fs.name(e.path)
            if e.is_dir and name not in record.partitions and is_partition_dir_name(name):
                _set_aside(fs, root, job, name, e.path)
                _after_step(f"{name} set aside")
    fs.delete_file(record_path(fs, root))
    _after_step("record removed")
    fs.delete_dir(job_dir(fs, root, job))
    _after_step("staging removed")


# ----------------------------------------------------------------------------- jobs

_HELD: dict[tuple[str, str], OutputLock] = {}  # (log directory, job) -> the lock its driver holds


def _job_lock(fs, root: str, job: str) -> OutputLock:
    return OutputLock.for_directory(Path(job_dir(fs, root, job)))


def _other_job_running(fs, root: str, job: str) -> bool:
    """Whether job ``job``'s driver still holds its lock (local directories; elsewhere none is)."""
    if not fs.local:
        return False
    try:
        lock = _job_lock(fs, root, job).acquire()
    except OutputLockedError:
        return True
    except OSError:
        return False  # no lock file can be made: nobody holds one
    lock.release()
    return False


def claim(fs, root: str, job: str) -> None:
    """A job starting to write ``root`` (called under the commit lock): fail naming another job that
    is still writing it; else make the job's staging directory and hold its lock until :func:`release`."""
    staging = fs.join(root, STAGING_DIR)
    if fs.is_dir(staging):
        for e in fs.list(staging):
            other = fs.name(e.path)
            if e.is_dir and other != job and _other_job_running(fs, root, other):
                raise PathBusyError(
                    f"kafka-segments: {root} is being written by job {other} (staging {e.path}); "
                    "one job writes a path at a time: wait for it, or write elsewhere"
                )
    fs.makedirs(job_dir(fs, root, job))
    if fs.local:
        _HELD[(root, job)] = _job_lock(fs, root, job).acquire()


def release(fs, root: str, job: str) -> None:
    """The job is done (committed or aborted): its lock goes."""
    lock = _HELD.pop((root, job), None)
    if lock is not None:
        lock.release()


def recover(fs, root: str, keep: str | None = None) -> None:
    """Finish an interrupted commit in ``root`` (roll forward when its record is
    there) and remove what crashed jobs staged (roll back), except job ``keep``'s
    and those of jobs still running."""
    if not fs.is_dir(root):
        return
    record = read_record(fs, root)
    if record is not None:
        roll_forward(fs, root, record)
    fs.delete_file(record_path(fs, root) + ".tmp")
    staging = fs.join(root, STAGING_DIR)
    if fs.is_dir(staging):
        for e in fs.list(staging):
            name = fs.name(e.path)
            if name == keep or (e.is_dir and _other_job_running(fs, root, name)):
                continue
            fs.delete_dir(e.path) if e.is_dir else fs.delete_file(e.path)
        if not fs.list(staging):
            fs.delete_dir(staging)


@contextlib.contextmanager
def commit_lock(fs, root: str):
    """One commit (or recovery) at a time in a local log directory: an
    exclusive ``flock`` on the directory itself, so no lock file is left in
    the layout (object stores have no locks; there one writer at a time is the
    caller's to ensure)."""
    if not fs.local:
        yield
        return
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
