"""Writing a DataFrame as Kafka partition directories.

Two phases, so that a failed or aborted job leaves nothing half-written where
readers look:

1. Each task encodes its rows, per topic-partition, into batches of the
   requested magic and codec and appends them to a staging file under
   ``PATH/_kcodec_staging/<job>/`` (offsets relative to the file's start, or
   kept from the ``offset`` column). Names starting with ``_`` are not
   partition directories, so readers (kcodec's and Kafka's) ignore them.
2. On commit, the driver takes each topic-partition's staging files in task
   order, gives them their final offsets (continuing after the partition's
   last offset in ``append`` mode, from 0 in ``overwrite`` mode) and writes
   real segments with kcodec's :class:`~kcodec.log.writer.SegmentWriter`
   (``.log``, ``.index``, ``.timeindex``; rolled at ``segmentBytes``) into a
   scratch directory, then moves them into place: a new partition directory
   with one rename, new segments of an existing one index files first and
   ``.log`` last (a visible ``.log`` is a whole segment). ``overwrite``
   renames the old partition directories to ``<name>.<job>-delete`` (Kafka's
   own convention for directories being deleted) before the new ones go in,
   and then removes them. On abort the staging directory is removed.

Moving offsets: a v2 batch's base offset and a v0/v1 entry's offset lie
outside their CRCs, so rebasing patches 8 bytes; only a compressed v0 wrapper
(absolute inner offsets inside the compressed, CRC-covered value) is
re-encoded.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import uuid
from dataclasses import dataclass, field

from kcodec.errors import EncodeError
from kcodec.log.files import parse_partition_dir, parse_segment_name
from kcodec.log.fs import Storage, resolve, storage_options
from kcodec.log.index import DEFAULT_INDEX_INTERVAL_BYTES
from kcodec.log.partition import Partition
from kcodec.log.writer import DEFAULT_SEGMENT_BYTES, SegmentWriter
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.reader import read_batches
from kcodec.spark.options import bool_option, choice_option, int_option

__all__ = ["WriteOptions", "Chunk", "STAGING_DIR", "check_input_schema", "write_task", "commit_job", "abort_job"]

STAGING_DIR = "_kcodec_staging"
_I64 = struct.Struct(">q")
_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


@dataclass(frozen=True)
class WriteOptions:
    path: str
    magic: int = 2
    compression: str = "none"
    compression_level: int | None = None
    records_per_batch: int = 1000
    batch_bytes: int = 1 << 20  # key + value + header bytes of a batch before compression
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    topic: str | None = None
    partition: int | None = None
    keep_offsets: bool = False
    storage: Storage = ()  # object-store endpoint and credentials (kcodec.log.fs.STORAGE_OPTIONS)

    @classmethod
    def from_options(cls, options) -> WriteOptions:
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        path = opts.get("path")
        if not path:
            raise ValueError("kafka-segments needs a path: df.write.format('kafka-segments').save(PATH)")
        magic = int_option(opts, "magic", 2, 0)
        if magic not in (0, 1, 2):
            raise ValueError(f"option magic must be 0, 1 or 2, not {magic}")
        compression = choice_option(opts, "compression", "none", _CODECS)
        if compression == "zstd" and magic < 2:
            raise ValueError(f"zstd needs magic 2 (Kafka refuses it for magic {magic})")
        return cls(
            path=str(path),
            magic=magic,
            compression=compression,
            compression_level=int_option(opts, "compressionLevel", None),
            records_per_batch=int_option(opts, "recordsPerBatch", 1000, 1),
            batch_bytes=int_option(opts, "batchBytes", 1 << 20, 1),
            segment_bytes=int_option(opts, "segmentBytes", DEFAULT_SEGMENT_BYTES, 1),
            index_interval_bytes=int_option(opts, "indexIntervalBytes", DEFAULT_INDEX_INTERVAL_BYTES, 0),
            topic=opts.get("topic") or None,
            partition=int_option(opts, "partition", None, 0),
            keep_offsets=bool_option(opts, "keepOffsets", False),
            storage=storage_options(opts),
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
        raise ValueError("kafka-segments: writing needs a 'topic' column or the topic option")
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
    return fs.join(root, STAGING_DIR, job)


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


# ----------------------------------------------------------------------------- tasks


@dataclass
class _Stage:
    topic: str
    partition: int
    path: str
    out: object
    pending: list = field(default_factory=list)
    pending_bytes: int = 0
    next_rel: int = 0
    records: int = 0
    first: int | None = None
    last: int | None = None


def _bytes(v):
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    return bytes(v)


def write_task(batches, opts: WriteOptions, job: str, task: int, attempt: int) -> list[Chunk]:
    """Stage one task's rows (an iterator of pyarrow RecordBatches)."""

    fs, _ = resolve(opts.path, opts.storage)
    root = staging_root(opts, job)
    stages: dict[tuple[str, int], _Stage] = {}

    def stage_for(topic: str, partition: int) -> _Stage:
        st = stages.get((topic, partition))
        if st is None:
            d = fs.join(root, f"{topic}-{partition}")
            fs.makedirs(d)
            p = fs.join(d, f"task-{task:05d}-{attempt}.bin")
            st = stages[(topic, partition)] = _Stage(topic, partition, p, fs.open_output(p))
        return st

    def flush(st: _Stage) -> None:
        if not st.pending:
            return
        if opts.keep_offsets:
            data = encode_batch(
                st.pending,
                magic=opts.magic,
                compression=opts.compression,
                compression_level=opts.compression_level,
                allow_lossy=True,
            )
        else:
            data = encode_batch(
                st.pending,
                magic=opts.magic,
                compression=opts.compression,
                compression_level=opts.compression_level,
                base_offset=st.next_rel,
                allow_lossy=True,
            )
            st.next_rel += len(st.pending)
        st.out.write(data)
        st.records += len(st.pending)
        st.pending, st.pending_bytes = [], 0

    try:
        for rb in batches:
            n = rb.num_rows
            if not n:
                continue
            keys, values = _column(rb, "key"), _column(rb, "value")
            topics = [opts.topic] * n if opts.topic is not None else _column(rb, "topic")
            parts = [opts.partition] * n if opts.partition is not None else _column(rb, "partition", 0)
            tss = _column(rb, "timestamp")
            headers = _column(rb, "headers")
            offsets = _column(rb, "offset") if opts.keep_offsets else [None] * n
            control = _column(rb, "isControl", False)
            for i in range(n):
                if control[i]:
                    continue  # control records are written by Kafka's coordinator, not as data
                topic, partition = topics[i], parts[i]
                if topic is None or partition is None:
                    raise EncodeError(f"row {i}: topic and partition must not be null")
                if opts.keep_offsets and offsets[i] is None:
                    raise EncodeError(f"row {i}: keepOffsets needs an offset in every row")
                ts = tss[i]
                ts = -1 if ts is None else ts // 1000  # us -> ms, -1000 us (Kafka's -1) -> -1
                hs = headers[i]
                hs = () if not hs else tuple((h["key"], _bytes(h["value"])) for h in hs)
                k, v = _bytes(keys[i]), _bytes(values[i])
                st = stage_for(topic, int(partition))
                st.pending.append(NewRecord(k, v, hs, ts, offsets[i]))
                if opts.keep_offsets:
                    st.first = offsets[i] if st.first is None else st.first
                    st.last = offsets[i]
                st.pending_bytes += (
                    (len(k) if k else 0) + (len(v) if v else 0) + sum(len(hk) + (len(hv) if hv else 0) for hk, hv in hs)
                )
                if len(st.pending) >= opts.records_per_batch or st.pending_bytes >= opts.batch_bytes:
                    flush(st)
        for st in stages.values():
            flush(st)
    finally:
        for st in stages.values():
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
        for st in stages.values()
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


def _segment_files(directory: str) -> list[str]:
    """Files of a finished local partition directory, per segment index files first, ``.log`` last."""

    def order(name: str):
        try:
            base, kind = parse_segment_name(name)
        except ValueError:
            return (1 << 64, 1, name)
        return (base, kind == "log", name)

    return sorted(os.listdir(directory), key=order)


def _publish_into_existing(fs, local_dir: str, target: str) -> None:
    for name in _segment_files(local_dir):
        dst = fs.join(target, name)
        if name.endswith(".log") and fs.exists(dst):
            if fs.size(dst) != 0:
                raise FileExistsError(f"kafka-segments: {dst} already exists")
        src = os.path.join(local_dir, name)
        if fs.local:
            os.replace(src, dst)
        else:
            with open(src, "rb") as f, fs.open_output(dst) as out:
                shutil.copyfileobj(f, out, 1 << 22)
    shutil.rmtree(local_dir, ignore_errors=True)


def commit_job(chunks: list[Chunk], opts: WriteOptions, job: str, overwrite: bool) -> dict[tuple[str, int], int]:
    """Turn the staged chunks into partition directories; returns records written per topic-partition."""
    fs, root = resolve(opts.path, opts.storage)
    staging = staging_root(opts, job)
    by_tp: dict[tuple[str, int], list[Chunk]] = {}
    for c in chunks:
        by_tp.setdefault((c.topic, c.partition), []).append(c)
    scratch = fs.join(staging, "final") if fs.local else tempfile.mkdtemp(prefix="kcodec-spark-")
    if fs.local:
        os.makedirs(scratch, exist_ok=True)
    written: dict[tuple[str, int], int] = {}
    try:
        fs.makedirs(root)
        built: list[tuple[str, str]] = []  # (local dir, target dir)
        for (topic, partition), cs in sorted(by_tp.items()):
            cs.sort(key=lambda c: c.task)
            target = fs.join(root, f"{topic}-{partition}")
            existing = 0 if overwrite else Partition(target, fs).next_offset()
            if opts.keep_offsets:
                base = cs[0].first_offset
                if base < existing:
                    raise EncodeError(
                        f"kafka-segments: {topic}-{partition} already holds offsets up to "
                        f"{existing - 1}; kept offsets start at {base}"
                    )
            else:
                base = existing
            local_dir = os.path.join(scratch, f"{topic}-{partition}")
            _write_partition(fs, cs, local_dir, base, opts)
            built.append((local_dir, target))
            written[(topic, partition)] = sum(c.records for c in cs)
        doomed = []
        if overwrite and fs.is_dir(root):
            for e in fs.list(root):
                name = fs.name(e.path)
                if e.is_dir and not name.startswith((".", "_")) and not name.endswith("-delete"):
                    try:
                        parse_partition_dir(name)
                    except ValueError:
                        continue
                    gone = fs.join(root, f"{name}.{job}-delete")
                    fs.move(e.path, gone)
                    doomed.append(gone)
        for local_dir, target in built:
            if not fs.exists(target):
                fs.upload_dir(local_dir, target)
            else:
                _publish_into_existing(fs, local_dir, target)
        for d in doomed:
            fs.delete_dir(d)
    finally:
        if not fs.local:
            shutil.rmtree(scratch, ignore_errors=True)
        abort_job(opts, job)
    return written


def abort_job(opts: WriteOptions, job: str) -> None:
    """Remove the job's staging directory (and the staging root when it is left empty)."""
    fs, root = resolve(opts.path, opts.storage)
    fs.delete_dir(staging_root(opts, job))
    parent = fs.join(root, STAGING_DIR)
    try:
        if fs.is_dir(parent) and not fs.list(parent):
            fs.delete_dir(parent)
    except OSError:
        pass


def _column(rb, name: str, default=None) -> list:
    """One column of an Arrow record batch as Python values (timestamps as microseconds), or
    ``default`` for every row when the DataFrame has no such column."""
    import pyarrow as pa

    if name not in rb.schema.names:
        return [default] * rb.num_rows
    c = rb.column(name)
    if name == "timestamp":
        c = c.cast(pa.timestamp("us", tz=c.type.tz)).cast(pa.int64())  # microseconds
    return c.to_pylist()
