"""write_task (column-wise, kernel-encoded) stages the same bytes as the writer's earlier row loop,
kept here as the reference: NewRecord per row, Router and the sink's size rules, encode_batch per
batch. Options cover topic/partition options and columns, Kafka's default partitioner (keyed and
sticky keyless rows), records/bytes/kafka.batch.size cuts, kept offsets, control rows, magic 0/1/2
and codecs; rows come in several (some sliced) Arrow batches."""

from __future__ import annotations

import os
import random

import pytest

pa = pytest.importorskip("pyarrow")

from kcodec.errors import EncodeError  # noqa: E402
from kcodec.records.encode import NewRecord, encode_batch  # noqa: E402
from kcodec.records.framing import V2_OVERHEAD  # noqa: E402
from kcodec.records.sizing import v2_fixed_size_of, v2_record_size  # noqa: E402
from kcodec.spark.sink import Router  # noqa: E402
from kcodec.spark.write import WriteOptions, write_task  # noqa: E402

HEADERS = {
    "binary": pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
    "string": pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())])),
}


def reference(batches, opts: WriteOptions, task: int) -> dict[tuple[str, int], bytes]:
    """The writer's row loop before it went column-wise (what each topic-partition's staging file holds)."""
    files: dict[tuple[str, int], list[bytes]] = {}
    stages: dict[tuple[str, int], dict] = {}
    router = Router(task, dict(opts.partition_counts), opts.num_partitions, opts.ignore_keys, opts.path)

    def stage_for(topic, partition):
        key = (topic, partition)
        if key not in stages:
            stages[key] = {"tp": key, "pending": [], "bytes": 0, "next": 0, "v2": 0, "first_ts": -1}
            files[key] = []
        return stages[key]

    def flush(st):
        if not st["pending"]:
            return
        base = None if opts.keep_offsets else st["next"]
        files[st["tp"]].append(
            encode_batch(
                st["pending"],
                magic=opts.magic,
                compression=opts.compression,
                compression_level=opts.compression_level,
                base_offset=base,
                allow_lossy=True,
            )
        )
        st["next"] += len(st["pending"])
        st["pending"], st["bytes"] = [], 0

    def size(st, k, v, hs, ts):
        return v2_record_size(
            len(st["pending"]), ts - st["first_ts"] if st["pending"] else 0, v2_fixed_size_of(k, v, hs)
        )

    def col(rb, name, default=None):
        if name not in rb.schema.names:
            return [default] * rb.num_rows
        c = rb.column(name)
        if name == "timestamp":
            c = c.cast(pa.timestamp("us", tz=c.type.tz)).cast(pa.int64())
        return c.to_pylist()

    def b(x):
        return x.encode() if isinstance(x, str) else x

    for rb in batches:
        n = rb.num_rows
        keys, values, tss, headers, control = (
            col(rb, "key"),
            col(rb, "value"),
            col(rb, "timestamp"),
            col(rb, "headers"),
            col(rb, "isControl", False),
        )
        topics = [opts.topic] * n if opts.topic is not None else col(rb, "topic")
        parts = [opts.partition] * n if opts.partition is not None else col(rb, "partition")
        offsets = col(rb, "offset") if opts.keep_offsets else [None] * n
        for i in range(n):
            if control[i]:
                continue
            topic, partition = topics[i], parts[i]
            if topic is None:
                raise EncodeError(f"row {i}: null topic; the topic option sets one for every row (as in Spark)")
            if opts.keep_offsets and offsets[i] is None:
                raise EncodeError(f"row {i}: keepOffsets needs an offset in every row")
            ts = -1 if tss[i] is None else tss[i] // 1000
            hs = () if not headers[i] else tuple((h["key"], b(h["value"])) for h in headers[i])
            k, v = b(keys[i]), b(values[i])
            sticky = partition is None and (k is None or opts.ignore_keys)
            st = stage_for(topic, int(partition) if partition is not None else router.partition(topic, k))
            if opts.batch_limit is not None:
                while st["pending"] and V2_OVERHEAD + st["v2"] + size(st, k, v, hs, ts) > opts.batch_limit:
                    flush(st)
                    if sticky:
                        router.batch_closed(topic, st["tp"][1])
                        st = stage_for(topic, router.partition(topic, k))
                if not st["pending"]:
                    st["v2"], st["first_ts"] = 0, ts
                st["v2"] += size(st, k, v, hs, ts)
            st["pending"].append(NewRecord(k, v, hs, ts, offsets[i]))
            st["bytes"] += len(k or b"") + len(v or b"") + sum(len(hk) + len(hv or b"") for hk, hv in hs)
            if len(st["pending"]) >= opts.records_per_batch or st["bytes"] >= opts.batch_bytes:
                flush(st)
                if sticky:
                    router.batch_closed(topic, st["tp"][1])
    for st in stages.values():
        flush(st)
    return {tp: b"".join(parts) for tp, parts in files.items() if parts}


def make_batches(
    seed: int, n: int, *, text=False, topics=None, partitions=None, keyless=0.0, control=0.0, offsets=False
):
    rng = random.Random(seed)
    kind = "string" if text else "binary"
    cols: dict[str, list] = {"key": [], "value": [], "timestamp": [], "headers": []}
    for _ in range(n):
        blob = rng.randbytes(rng.randrange(0, 300)).hex()[: rng.randrange(0, 200)]
        key = None if rng.random() < keyless else f"key-{rng.randrange(50)}"
        cols["key"].append(key if text or key is None else key.encode())
        cols["value"].append(None if rng.random() < 0.05 else (blob if text else blob.encode()))
        cols["timestamp"].append(None if rng.random() < 0.05 else 1_700_000_000_000_000 + rng.randrange(-5, 10**7))
        hs = None
        if rng.random() < 0.6:
            hs = [
                {
                    "key": rng.choice(["h", "é-ключ", ""]),
                    "value": None if rng.random() < 0.2 else "x" * rng.randrange(9),
                }
                for _ in range(rng.randrange(3))
            ]
            if not text:
                hs = [{"key": h["key"], "value": None if h["value"] is None else h["value"].encode()} for h in hs]
        cols["headers"].append(hs)
    arrays = {
        "key": pa.array(cols["key"], pa.string() if text else pa.binary()),
        "value": pa.array(cols["value"], pa.string() if text else pa.binary()),
        "timestamp": pa.array(cols["timestamp"], pa.timestamp("us", tz="UTC")),
        "headers": pa.array(cols["headers"], HEADERS[kind]),
    }
    if topics:
        arrays["topic"] = pa.array([rng.choice(topics) for _ in range(n)], pa.string())
    if partitions is not None:
        arrays["partition"] = pa.array(
            [None if rng.random() < partitions else rng.randrange(3) for _ in range(n)], pa.int32()
        )
    if control:
        arrays["isControl"] = pa.array([rng.random() < control for _ in range(n)])
    if offsets:
        at, kept = 100, []
        for _ in range(n):
            at += rng.randrange(1, 5)
            kept.append(at)
        arrays["offset"] = pa.array(kept, pa.int64())
    whole = pa.record_batch(list(arrays.values()), names=list(arrays))
    out, at = [], 0
    while at < n:  # uneven Arrow batches, slices of one big batch
        size = rng.randrange(1, max(2, n // 3))
        out.append(whole.slice(at, size))
        at += size
    return out


CASES = {
    "topic and partition options": ({"topic": "t", "partition": "2", "recordsPerBatch": "17"}, {}),
    "batchBytes": ({"topic": "t", "partition": "0", "batchBytes": "900"}, {"text": True}),
    "keyed rows, default partitioner": ({"topic": "t", "numPartitions": "5", "recordsPerBatch": "9"}, {}),
    "sticky keyless rows": ({"topic": "t", "numPartitions": "3", "recordsPerBatch": "6"}, {"keyless": 0.5}),
    "ignore keys": ({"topic": "t", "numPartitions": "4", "kafka.partitioner.ignore.keys": "true"}, {"text": True}),
    "kafka.batch.size": ({"topic": "t", "numPartitions": "3", "kafka.batch.size": "2000"}, {"keyless": 0.3}),
    "batch.size 0": ({"topic": "t", "partition": "1", "kafka.batch.size": "0"}, {}),
    "topic and partition columns": (
        {"numPartitions": "3", "recordsPerBatch": "8"},
        {"topics": ["a", "b", "c"], "partitions": 0.3, "keyless": 0.3},
    ),
    "topic column, partitions given": ({"recordsPerBatch": "11"}, {"topics": ["a", "b"], "partitions": 0.0}),
    "control rows skipped": ({"topic": "t", "partition": "0", "recordsPerBatch": "5"}, {"control": 0.3}),
    "kept offsets": (
        {"topic": "t", "partition": "0", "keepOffsets": "true", "recordsPerBatch": "13"},
        {"offsets": True},
    ),
    "lz4": ({"topic": "t", "partition": "0", "compression": "lz4"}, {}),
    "magic 1 gzip": ({"topic": "t", "numPartitions": "2", "magic": "1", "compression": "gzip"}, {"keyless": 0.4}),
    "magic 0": ({"topic": "t", "partition": "0", "magic": "0", "recordsPerBatch": "7"}, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("task", [0, 1])
@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "python"])
def test_staged_bytes_equal_the_row_loop(case, task, compiled, tmp_path, monkeypatch):
    if not compiled:  # without the compiled kernel: Python sizes, cuts, partitions and encode_batch
        from kcodec.records import arrow_encode
        from kcodec.spark import write_rows

        monkeypatch.setattr(arrow_encode, "kernel", lambda: None)
        monkeypatch.setattr(write_rows, "kernel", lambda: None)
    options, shape = CASES[case]
    opts = WriteOptions.from_options({"path": str(tmp_path / "out"), **options})
    batches = make_batches(len(case) * 31 + task, 400, **shape)
    chunks = write_task(iter(batches), opts, "job", task, 0)
    got = {}
    for c in chunks:
        with open(c.path, "rb") as f:
            got[(c.topic, c.partition)] = f.read()
        assert os.path.basename(c.path) == f"task-{task:05d}-0.bin"
    want = reference(batches, opts, task)
    assert got.keys() == want.keys()
    for tp in want:
        assert got[tp] == want[tp], tp
    if opts.keep_offsets:
        (only,) = chunks
        offsets = pa.concat_arrays([b.column("offset") for b in batches]).to_pylist()
        assert (only.first_offset, only.last_offset) == (offsets[0], offsets[-1])


def test_errors_name_the_row_as_before(tmp_path):
    opts = WriteOptions.from_options({"path": str(tmp_path / "a"), "partition": "0"})
    rb = pa.record_batch(
        [pa.array([b"a", b"b", b"c"]), pa.array(["t", None, "t"]), pa.array([False, False, True])],
        names=["value", "topic", "isControl"],
    )
    with pytest.raises(EncodeError, match="row 1: null topic"):
        write_task(iter([rb]), opts, "j", 0, 0)
    control_only = pa.record_batch(
        [pa.array([b"a", b"b"]), pa.array(["t", None]), pa.array([False, True])], names=["value", "topic", "isControl"]
    )
    assert [c.records for c in write_task(iter([control_only]), opts, "j2", 0, 0)] == [1]
    keep = WriteOptions.from_options({"path": str(tmp_path / "b"), "topic": "t", "partition": "0", "keepOffsets": "1"})
    rb = pa.record_batch([pa.array([b"a", b"b"]), pa.array([3, None], pa.int64())], names=["value", "offset"])
    with pytest.raises(EncodeError, match="row 1: keepOffsets needs an offset"):
        write_task(iter([rb]), keep, "j3", 0, 0)


@pytest.mark.parametrize(
    "column,record",
    [
        (pa.array([[{"key": None, "value": b"x"}]], HEADERS["binary"]), NewRecord(None, b"v", ((None, b"x"),))),
        (pa.array([-5_000], pa.timestamp("us", tz="UTC")), NewRecord(None, b"v", (), -5)),
    ],
)
def test_damaged_rows_give_encode_batchs_error(column, record, tmp_path):
    """The error encode_batch gives the same record (the row loop crashed with a TypeError on a
    null header key before encoding)."""
    opts = WriteOptions.from_options({"path": str(tmp_path / "o"), "topic": "t", "partition": "0"})
    name = "headers" if pa.types.is_list(column.type) else "timestamp"
    rb = pa.record_batch([pa.array([b"v"]), column], names=["value", name])
    with pytest.raises(EncodeError) as want:
        encode_batch([record], base_offset=0)
    with pytest.raises(EncodeError) as got:
        write_task(iter([rb]), opts, "bad", 0, 0)
    assert str(got.value) == str(want.value)


def test_null_timestamp_is_minus_one(tmp_path):
    opts = WriteOptions.from_options({"path": str(tmp_path / "o"), "topic": "t", "partition": "0"})
    rb = pa.record_batch(
        [pa.array([b"v"]), pa.array([None], pa.timestamp("us", tz="UTC"))], names=["value", "timestamp"]
    )
    (chunk,) = write_task(iter([rb]), opts, "ok", 0, 0)
    with open(chunk.path, "rb") as f:
        assert f.read() == encode_batch([NewRecord(None, b"v", (), -1)], base_offset=0)


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "python"])
def test_a_batch_of_control_rows_stages_nothing(compiled, tmp_path, monkeypatch):
    if not compiled:
        from kcodec.records import arrow_encode
        from kcodec.spark import write_rows

        monkeypatch.setattr(arrow_encode, "kernel", lambda: None)
        monkeypatch.setattr(write_rows, "kernel", lambda: None)
    opts = WriteOptions.from_options({"path": str(tmp_path / "o"), "topic": "t", "partition": "0"})
    rb = pa.record_batch([pa.array([b"v", b"w"]), pa.array([True, True])], names=["value", "isControl"])
    assert write_task(iter([rb]), opts, "j", 0, 0) == []
    assert not (tmp_path / "o" / "_kcodec_staging" / "j" / "t-0").exists()
    null_key = pa.array([[{"key": None, "value": b"x"}]], HEADERS["binary"])
    rb = pa.record_batch([pa.array([b"v"]), null_key], names=["value", "headers"])
    with pytest.raises(EncodeError, match="null header key"):
        write_task(iter([rb]), opts, "k", 0, 0)


def test_control_rows_are_not_routed(tmp_path):
    """A control row is skipped before the partitioner: its topic (null here, or one with no
    partition count) asks nothing of it."""
    opts = WriteOptions.from_options({"path": str(tmp_path / "o"), "numPartitions": "2"})
    rb = pa.record_batch(
        [
            pa.array([b"k1", b"k2", None]),
            pa.array([b"v", b"w", b"x"]),
            pa.array(["t", None, "t"]),
            pa.array([False, True, False]),
        ],
        names=["key", "value", "topic", "isControl"],
    )
    chunks = write_task(iter([rb]), opts, "j", 0, 0)
    want = reference([rb], opts, 0)
    assert {(c.topic, c.partition): open(c.path, "rb").read() for c in chunks} == want
