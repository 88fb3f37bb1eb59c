"""Writing a DataFrame as Kafka partition directories.

Readers see a job's result appear as one step (or not at all):

1. Each task encodes its rows, per topic-partition, into batches of the
   requested magic and codec and appends them to a staging file under
   ``PATH/_kcodec_staging/<job>/`` (offsets relative to the file's start, or
   kept from the ``offset`` column). Names starting with ``_`` are not
   partition directories, so readers (kcodec's and Kafka's) ignore them.
2. On commit, the driver (holding a lock on ``PATH``) first
   finishes any commit a killed job left half-published, then takes each
   topic-partition's staging files in task order, gives them their final
   offsets (continuing after the partition's last offset in ``append`` mode,
   from 0 in ``overwrite`` mode) and writes real segments with kcodec's
   :class:`~kcodec.log.writer.SegmentWriter` (``.log``, ``.index``,
   ``.timeindex``; rolled at ``segmentBytes``) into
   ``PATH/_kcodec_staging/<job>/final/<topic>-<n>/``.
3. The commit point is one rename: the commit record ``PATH/_kcodec_commit``
   appears, naming the job, the mode and its partitions. Readers (kcodec's
   :class:`~kcodec.log.partition.Partition` and this data source) that find it
   read the new state whatever the publishing has reached; without it they
   read the old one. Publishing then switches each staged directory into
   place (in one step on a local Linux filesystem, also for readers that do
   not know the record), keeps replaced directories in the job's staging
   until the record is removed, then removes the staging directory. A job
   killed before the record leaves only staging, which the next writer deletes
   (roll back); one killed after it is published by the next writer (roll
   forward), so the layout ends as ordinary ``<topic>-<n>/<20 digits>.log``
   directories. The protocol and its steps are in :mod:`kcodec.log.commit`. On
   abort the staging directory is removed. One job writes a path at a time: a
   job starting while another one's driver runs fails naming it.

Topics and partitions from options and rows become directory names only
through :func:`kcodec.log.names.partition_dir_name` (Kafka's rules).

Moving offsets: a v2 batch's base offset and a v0/v1 entry's offset lie
outside their CRCs, so rebasing patches 8 bytes; only a compressed v0 wrapper
(absolute inner offsets inside the compressed, CRC-covered value) is
re-encoded.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import struct
import tempfile
import uuid
from dataclasses import dataclass

from kcodec.errors import EncodeError, PathExistsError
from kcodec.log.commit import (
    CommitRecord,
    claim,
    commit_lock,
    identities,
    job_dir,
    read_record,
    recover,
    release,
    roll_forward,
    staged_dir,
    write_record,
)
from kcodec.log.fs import Storage, resolve, storage_options
from kcodec.log.names import (
    COMMIT_RECORD,
    STAGING_DIR,
    BadNameError,
    check_partition,
    check_topic,
    partition_dir_name,
)
from kcodec.log.partition import Partition
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.reader import read_batches
from kcodec.spark.options import SAVE_MODE_OPTION, OptionError, check_write_names, default, value
from kcodec.spark.sink import Router, check_counts, partition_counts, producer_settings
from kcodec.spark.write_rows import Stage, TaskStages

__all__ = [
    "WriteOptions",
    "Chunk",
    "check_input_schema",
    "with_partition_counts",
    "write_task",
    "commit_job",
    "abort_job",
    "recover_path",
    "start_job",
]

_I64 = struct.Struct(">q")


@dataclass(frozen=True)
class WriteOptions:
    path: str
    magic: int = default("magic")
    compression: str = default("compression")
    compression_level: int | None = default("compressionLevel")
    records_per_batch: int = default("recordsPerBatch")
    batch_bytes: int = default("batchBytes")  # key + value + header bytes of a batch before compression
    segment_bytes: int = default("segmentBytes")
    index_interval_bytes: int = default("indexIntervalBytes")
    topic: str | None = default("topic")
    partition: int | None = default("partition")
    keep_offsets: bool = default("keepOffsets")
    storage: Storage = ()  # object-store endpoint and credentials (kcodec.log.fs.STORAGE_OPTIONS)
    # Spark's Kafka sink (kcodec.spark.sink): the producer's batch.size rule, the default partitioner
    batch_limit: int | None = None
    ignore_keys: bool = default("kafka.partitioner.ignore.keys")
    num_partitions: int | None = default("numPartitions")
    partition_counts: tuple[tuple[str, int], ...] = ()  # from the target's directories, at save()
    save_mode: str = default(
        SAVE_MODE_OPTION
    )  # Spark's save mode (kcodec.spark.savemode): errorifexists, ignore, append, overwrite

    @classmethod
    def from_options(cls, options) -> WriteOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        check_write_names(opts)
        path = opts.get("path")
        if not path:
            raise ValueError("kafka-segments needs a path: df.write.format('kafka-segments').save(PATH)")
        magic = value(opts, "magic")
        if magic not in (0, 1, 2):
            raise ValueError(f"option magic must be 0, 1 or 2, not {magic}")
        producer = producer_settings(opts)
        compression = producer["compression"]
        if compression == "zstd" and magic < 2:
            raise ValueError(f"zstd needs magic 2 (Kafka refuses it for magic {magic})")
        topic, partition = value(opts, "topic"), value(opts, "partition")
        if topic is not None:
            check_topic(topic)
        if partition is not None:
            check_partition(partition, producer["num_partitions"], topic)
        return cls(
            path=str(path),
            magic=magic,
            compression=compression,
            compression_level=producer["compression_level"],
            records_per_batch=producer["records_per_batch"],
            batch_bytes=producer["batch_bytes"],
            segment_bytes=value(opts, "segmentBytes"),
            index_interval_bytes=value(opts, "indexIntervalBytes"),
            topic=topic,
            partition=partition,
            keep_offsets=value(opts, "keepOffsets"),
            storage=storage_options(opts),
            batch_limit=producer["batch_limit"],
            ignore_keys=producer["ignore_keys"],
            num_partitions=producer["num_partitions"],
            save_mode=value(opts, SAVE_MODE_OPTION),
        )


#: Input columns the writer reads, with the Spark types it accepts (others are ignored).
ACCEPTED = {
    "key": ("binary", "string"),
    "value": ("binary", "string"),
    "topic": ("string",),
    "partition": ("int", "bigint", "smallint", "tinyint"),
    "timestamp": ("timestamp", "timestamp_ntz"),
    "headers": ("array<struct<key:string,value:binary>>", "array<struct<key:string,value:string>>"),
    "offset": ("bigint", "int"),
    "isControl": ("boolean",),
}


def check_input_schema(fields: list[tuple[str, str]], opts: WriteOptions) -> tuple[str, ...]:
    """The accepted columns present, after checking types and what is required."""
    present = {}
    for name, spark_type in fields:
        if name in ACCEPTED:
            t = spark_type.replace(" ", "")
            if t not in ACCEPTED[name]:
                raise ValueError(
                    f"kafka-segments: column {name!r} must be {' or '.join(ACCEPTED[name])}, not {spark_type}"
                )
            present[name] = t
    if "value" not in present:
        raise ValueError("kafka-segments: writing needs a 'value' column (binary or string)")
    if opts.topic is None and "topic" not in present:
        # Spark's KafkaWriter: "topic option required when no 'topic' attribute is present"
        raise ValueError(
            "kafka-segments: no topic: give the topic option (it overrides a topic column, as in Spark) "
            "or a 'topic' column"
        )
    if opts.partition is None and "partition" not in present and opts.num_partitions is None:
        counts = dict(opts.partition_counts)
        if not counts or (opts.topic is not None and opts.topic not in counts):
            raise OptionError(
                "kafka-segments: rows name no partition, so Kafka's default partitioner places them and needs "
                f"the partition count: give the option numPartitions (or a partition column or option); {opts.path} "
                f"has no {opts.topic or '<topic>'}-<n> directories to count"
            )
    if opts.keep_offsets and "offset" not in present:
        raise ValueError("kafka-segments: keepOffsets needs an 'offset' column")
    return tuple(present)


@dataclass
class Chunk:
    """What one task staged for one topic-partition."""

    topic: str
    partition: int
    task: int
    path: str  # the staging file
    records: int
    offsets: int  # offsets it spans, relative (assigned offsets: == records)
    first_offset: int | None = None  # kept offsets only
    last_offset: int | None = None


def staging_root(opts: WriteOptions, job: str) -> str:
    fs, root = resolve(opts.path, opts.storage)
    return job_dir(fs, root, job)


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


# ----------------------------------------------------------------------------- tasks


def _refuse_reading_target(segments: list, target: str) -> None:
    """``overwrite`` of the path the job reads is refused. The Python data source
    API shows a writer neither the plan nor ``df.inputFiles()``, but rows read by
    this source carry their ``segment`` column: a row from a segment under the
    target means the job reads what it would replace. (When that column was
    dropped the job is not refused, and stays safe: tasks read everything before
    the commit publishes, and the commit leaves the old state whole until its
    single commit point.)"""
    for segment in set(segments):
        if segment is None:
            continue
        fs, path = resolve(str(segment))
        if fs.local:
            path = os.path.realpath(path)
        if path == target or path.startswith(target.rstrip("/") + "/"):
            raise EncodeError(
                f"kafka-segments: overwrite of {target} refused: the job reads it (segment {segment}); "
                "write elsewhere and swap, or use append"
            )


def write_task(batches, opts: WriteOptions, job: str, task: int, attempt: int, overwrite: bool = False) -> list[Chunk]:
    """Stage one task's rows (an iterator of pyarrow RecordBatches), column-wise
    (:mod:`kcodec.spark.write_rows`)."""
    import pyarrow.compute as pc

    fs, target = resolve(opts.path, opts.storage)
    if fs.local:
        target = os.path.realpath(target)
    root = staging_root(opts, job)
    router = Router(task, dict(opts.partition_counts), opts.num_partitions, opts.ignore_keys, opts.path)

    def open_stage(topic: str, partition: int) -> Stage:
        try:
            name = partition_dir_name(topic, partition, opts.num_partitions)
        except BadNameError as exc:
            raise BadNameError(f"kafka-segments: a row of {opts.path} cannot be written: {exc.message}") from None
        d = fs.join(root, name)
        fs.makedirs(d)
        p = fs.join(d, f"task-{task:05d}-{attempt}.bin")
        return Stage(topic, partition, p, fs.open_output(p))

    stages = TaskStages(opts, router, open_stage)
    try:
        for rb in batches:
            if not rb.num_rows:
                continue
            if overwrite and "segment" in rb.schema.names:
                _refuse_reading_target(pc.unique(rb.column("segment")).to_pylist(), target)
            stages.add(rb)
        stages.finish()
    finally:
        for st in stages.stages.values():
            st.out.close()
    return [
        Chunk(
            st.topic,
            st.partition,
            task,
            st.path,
            st.records,
            st.records if not opts.keep_offsets else 0,
            st.first,
            st.last,
        )
        for st in stages.stages.values()
        if st.records
    ]


# ----------------------------------------------------------------------------- commit


def _rebase(raw: bytes, delta: int, opts: WriteOptions) -> bytes:
    if not delta:
        return raw
    magic = raw[16]
    if magic == 0 and raw[21] & 0x07:  # a compressed v0 wrapper: inner offsets are absolute
        batch = next(iter(read_batches(raw, verify_crc=True)))
        return encode_batch(
            [NewRecord(r.key, r.value, (), -1, r.offset + delta) for r in batch.records],
            magic=0,
            compression=batch.compression,
            compression_level=opts.compression_level,
            allow_lossy=True,
        )
    return _I64.pack(_I64.unpack_from(raw, 0)[0] + delta) + raw[8:]


def _write_partition(fs, chunks: list[Chunk], directory: str, base: int, opts: WriteOptions) -> None:
    """Write the chunks of one topic-partition, in order, as segments in a local ``directory``."""
    with SegmentWriter(
        directory, base_offset=base, segment_bytes=opts.segment_bytes, index_interval_bytes=opts.index_interval_bytes
    ) as w:
        delta = 0 if opts.keep_offsets else base
        for chunk in chunks:
            source = chunk.path if fs.local else fs.read_bytes(chunk.path)
            buf, size = [], 0
            for _, raw in read_batches(source, strict=True).entries():
                raw = _rebase(raw, delta, opts)
                buf.append(raw)
                size += len(raw)
                if size >= 8 << 20:
                    w.append(b"".join(buf))
                    buf, size = [], 0
            if buf:
                w.append(b"".join(buf))
            delta += chunk.offsets


def commit_job(chunks: list[Chunk], opts: WriteOptions, job: str, overwrite: bool) -> dict[tuple[str, int], int]:
    """Turn the staged chunks into partition directories, published as one step
    (:mod:`kcodec.log.commit`); returns records written per topic-partition."""
    fs, root = resolve(opts.path, opts.storage)
    try:
        return _commit(fs, root, chunks, opts, job, overwrite)
    finally:
        release(fs, root, job)  # the job is over (an abort after a failure needs no lock of its own)


def _commit(fs, root: str, chunks: list[Chunk], opts: WriteOptions, job: str, overwrite: bool):
    by_tp: dict[tuple[str, int], list[Chunk]] = {}
    for c in chunks:
        by_tp.setdefault((c.topic, c.partition), []).append(c)
    written: dict[tuple[str, int], int] = {}
    fs.makedirs(root)
    with commit_lock(fs, root):
        recover(fs, root, keep=job)  # an earlier job's interrupted commit first: the offsets continue after it
        if opts.save_mode in ("errorifexists", "ignore") and _holds_data(fs, root):
            # data appeared at the path while the job ran (kcodec.spark.savemode checked before it started)
            fs.delete_dir(staging_root(opts, job))
            _remove_empty_staging_root(fs, root)
            if opts.save_mode == "ignore":
                return {}
            raise PathExistsError(
                f"kafka-segments: {opts.path} gained data while the job ran (save mode ErrorIfExists); "
                "nothing was written"
            )
        scratch = None if fs.local else tempfile.mkdtemp(prefix="kcodec-spark-")
        try:
            names = []
            for (topic, partition), cs in sorted(by_tp.items()):
                cs.sort(key=lambda c: c.task)
                name = partition_dir_name(topic, partition, opts.num_partitions)
                existing = 0 if overwrite else Partition(fs.join(root, name), fs).next_offset()
                if opts.keep_offsets:
                    base = cs[0].first_offset
                    assert base is not None  # a task staging kept offsets records each chunk's first
                    if base < existing:
                        raise EncodeError(
                            f"kafka-segments: {topic}-{partition} already holds offsets up to "
                            f"{existing - 1}; kept offsets start at {base}"
                        )
                else:
                    base = existing
                staged = staged_dir(fs, root, job, name)
                if fs.local:
                    _write_partition(fs, cs, staged, base, opts)
                else:
                    assert scratch is not None  # made above for a remote target
                    local_dir = os.path.join(scratch, name)
                    _write_partition(fs, cs, local_dir, base, opts)
                    fs.makedirs(fs.parent(staged))
                    fs.upload_dir(local_dir, staged)
                names.append(name)
                written[(topic, partition)] = sum(c.records for c in cs)
            for c in chunks:  # the staged task files are spent; only the built segments stay
                fs.delete_file(c.path)
        except Exception:
            abort_job(opts, job)  # roll back: nothing readers see has changed
            raise
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        record = CommitRecord(job, overwrite, tuple(names), identities(fs, root, job, names))
        write_record(
            fs, root, record
        )  # the commit point; failing before it leaves staging for abort or the next writer
        roll_forward(fs, root, record)
    _remove_empty_staging_root(fs, root)
    return written


_OWN = frozenset({COMMIT_RECORD, COMMIT_RECORD + ".tmp", STAGING_DIR})


def _holds_data(fs, root: str) -> bool:
    """Anything at ``root`` but kcodec's own staging and commit record (by exact name: a topic may
    start with ``_kcodec``)."""
    return any(fs.name(e.path) not in _OWN for e in fs.list(root))


def with_partition_counts(opts: WriteOptions, overwrite: bool = False) -> WriteOptions:
    """At save(), on the driver: the partition count of each topic already under the target, for
    Kafka's default partitioner (kcodec.spark.sink); not needed when the partition option is given."""
    if opts.partition is not None:
        return opts
    fs, root = resolve(opts.path, opts.storage)
    counts = partition_counts(fs, root)
    if not overwrite:  # overwrite replaces the topics: their old counts bind nothing
        check_counts(counts, opts.num_partitions, opts.path)
    return dataclasses.replace(opts, partition_counts=tuple(sorted(counts.items())))


def abort_job(opts: WriteOptions, job: str) -> None:
    """Remove the job's staging directory (and the staging root when it is left
    empty); a job whose commit record is written is decided and rolls forward instead."""
    fs, root = resolve(opts.path, opts.storage)
    try:
        record = read_record(fs, root) if fs.is_dir(root) else None
        if record is not None and record.job == job:
            with commit_lock(fs, root):
                recover(fs, root, keep=None)
            return
        fs.delete_dir(staging_root(opts, job))
        _remove_empty_staging_root(fs, root)
    finally:
        release(fs, root, job)


def recover_path(opts: WriteOptions, keep: str | None = None) -> None:
    """Before a job writes ``opts.path``: finish a commit a killed job left
    half-published there and remove what crashed jobs staged (see :mod:`kcodec.log.commit`)."""
    fs, root = resolve(opts.path, opts.storage)
    if not fs.is_dir(root):
        return
    with commit_lock(fs, root):
        recover(fs, root, keep=keep)


def start_job(opts: WriteOptions, job: str) -> None:
    """On the driver, before job ``job``'s tasks stage anything: :func:`recover_path`, then the job
    claims the path (:func:`kcodec.log.commit.claim`): another job still writing it fails this one,
    naming it."""
    fs, root = resolve(opts.path, opts.storage)
    if not fs.is_dir(root):
        fs.makedirs(root)
    with commit_lock(fs, root):
        recover(fs, root, keep=job)
        claim(fs, root, job)


def _remove_empty_staging_root(fs, root: str) -> None:
    parent = fs.join(root, STAGING_DIR)
    try:
        if fs.is_dir(parent) and not fs.list(parent):
            fs.delete_dir(parent)
    except OSError:
        pass
