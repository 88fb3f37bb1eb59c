"""A commit of new segments into several partition directories of one log
directory that readers see as one step (the ``kafka-segments`` Spark writer's).

Under a log directory ``ROOT``:

* ``ROOT/_kcodec_staging/<job>/final/<topic>-<n>/``: the job's finished
  segments, built where no reader looks (names starting with ``_`` are not
  partition directories, for kcodec as for Kafka's ``LogManager``).
* ``ROOT/_kcodec_commit``: the commit record (JSON: job, mode, the partition
  directories the job writes). It exists only while a commit is being
  published.

The protocol:

1. Build every partition's segments under the job's staging directory.
2. Commit point: write the record to ``_kcodec_commit.tmp`` and rename it to
   ``_kcodec_commit``. Before this rename the job has changed nothing readers
   see; after it, the new state is decided.
3. Publish (:func:`roll_forward`): per partition in the record, ``overwrite``
   renames the old directory to ``<name>.<job>-delete`` (Kafka's convention
   for directories being deleted) and the staged one into its place;
   ``append`` moves a new partition's directory in with one rename, or an
   existing one's new files (per segment, index files first and ``.log``
   last). ``overwrite`` then retires the partition directories the job did not
   write. The retired directories are removed.
4. Remove the record, then the job's staging directory.

Readers resolve the record (:func:`segment_sources`,
:func:`visible_partition_names`): while it exists, a partition directory
reads as the record's new state whatever step 3 reached (an ``overwrite``
partition from its staged directory until it has moved, an ``append`` one as
its directory plus the staged files not moved yet, a partition ``overwrite``
drops as empty); without it, directories read as they are. Every step of 3
and 4 can be repeated, so the next writer finishing an interrupted commit
(record present: roll forward) or deleting a crashed job's staging directory
(no record: roll back) leaves ordinary Kafka partition directories. Readers
never write.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from kcodec.errors import KcodecError
from kcodec.log.names import DELETE_SUFFIX, is_partition_dir_name

__all__ = [
    "COMMIT_RECORD",
    "STAGING_DIR",
    "CommitRecord",
    "CommitRecordError",
    "read_record",
    "write_record",
    "staged_dir",
    "segment_sources",
    "visible_partition_names",
    "roll_forward",
    "recover",
]

COMMIT_RECORD = "_kcodec_commit"
STAGING_DIR = "_kcodec_staging"


class CommitRecordError(KcodecError):
    """The commit record of a log directory cannot be read."""

    kind = "commit_record"


@dataclass(frozen=True)
class CommitRecord:
    job: str
    overwrite: bool
    partitions: tuple[str, ...]  # partition directory names the job writes


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
        return CommitRecord(str(obj["job"]), bool(obj["overwrite"]), tuple(str(p) for p in obj["partitions"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise CommitRecordError(f"{path}: not a kcodec commit record ({exc})") from None


def write_record(fs, root: str, record: CommitRecord) -> None:
    """The commit point: the record appears whole, with one rename."""
    path = record_path(fs, root)
    tmp = path + ".tmp"
    data = json.dumps({"job": record.job, "overwrite": record.overwrite, "partitions": list(record.partitions)})
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
        return [staged] if fs.is_dir(staged) else [str(directory)]
    return [staged, str(directory)]


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


def _retired(fs, root: str, name: str, job: str) -> str:
    return fs.join(root, f"{name}.{job}{DELETE_SUFFIX}")


def roll_forward(fs, root: str, record: CommitRecord) -> None:
    """Publish the committed job (steps 3 and 4); each step may already be done."""
    job = record.job
    for name in record.partitions:
        staged = staged_dir(fs, root, job, name)
        target = fs.join(root, name)
        if not fs.is_dir(staged):
            continue  # published
        if record.overwrite and fs.exists(target):
            fs.move(target, _retired(fs, root, name, job))
            _after_step(f"{name} retired")
        if not fs.exists(target):
            fs.move(staged, target)
            _after_step(f"{name} moved in")
            continue
        for entry in _publish_order([fs.name(e.path) for e in fs.list(staged)]):
            fs.move(fs.join(staged, entry), fs.join(target, entry))
            _after_step(f"{name}/{entry} moved in")
        fs.delete_dir(staged)
        _after_step(f"{name} staging removed")
    if record.overwrite:
        for e in fs.list(root):
            name = fs.name(e.path)
            if e.is_dir and name not in record.partitions and is_partition_dir_name(name):
                fs.move(e.path, _retired(fs, root, name, job))
                _after_step(f"{name} retired")
    suffix = f".{job}{DELETE_SUFFIX}"
    for e in fs.list(root):
        if e.is_dir and fs.name(e.path).endswith(suffix):
            fs.delete_dir(e.path)
            _after_step(f"{fs.name(e.path)} deleted")
    fs.delete_file(record_path(fs, root))
    _after_step("record removed")
    fs.delete_dir(job_dir(fs, root, job))
    _after_step("staging removed")


def recover(fs, root: str, keep: str | None = None) -> None:
    """Finish an interrupted commit in ``root`` (roll forward when its record is
    there) and remove what crashed jobs staged (roll back), except job ``keep``'s."""
    if not fs.is_dir(root):
        return
    record = read_record(fs, root)
    if record is not None:
        roll_forward(fs, root, record)
    fs.delete_file(record_path(fs, root) + ".tmp")
    staging = fs.join(root, STAGING_DIR)
    if fs.is_dir(staging):
        for e in fs.list(staging):
            if fs.name(e.path) != keep:
                fs.delete_dir(e.path) if e.is_dir else fs.delete_file(e.path)
        if not fs.list(staging):
            fs.delete_dir(staging)
