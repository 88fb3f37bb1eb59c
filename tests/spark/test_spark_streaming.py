"""``spark.readStream.format("kafka-segments")``: a real local Spark session tails partition
directories that the tests grow between micro-batches as a broker does (batches appended to
the active segment in place, a batch half written then completed, segment rolls, new
partitions, transactions, retention), and checks every offset arrives once, in order, through
checkpointed restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.spark.options import OptionError
from kcodec.spark.planning import DataLossError
from kcodec.spark.stream import KafkaSegmentsStreamReader, rate_limit

FORMAT = "kafka-segments"
_PREALLOCATED_INDEX_BYTES = 64 * 1024  # zero entries past the real ones, as Kafka preallocates an active index


def _batch(first: int, n: int, **producer) -> bytes:
    recs = [{"key": b"k", "value": b"v%d" % o, "timestamp": 1_700_000_000_000 + o} for o in range(first, first + n)]
    return encode_batch(recs, base_offset=first, **producer)


class LiveLog:
    """A partition directory grown as a broker grows it: sealed segments written with kcodec's
    SegmentWriter (a roll), and batches appended in place to the last (active) segment, whose
    ``.index`` is padded with zero entries as Kafka preallocates it."""

    def __init__(self, root: Path, topic: str, partition: int):
        self.dir = root / f"{topic}-{partition}"
        self.next = 0

    def roll(self, *sizes: int) -> None:
        """A new segment holding batches of ``sizes`` records."""
        with SegmentWriter(self.dir, base_offset=None, index_interval_bytes=0) as w:  # an entry per batch
            for n in sizes:
                w.append(_batch(self.next, n))
                self.next += n
        index = sorted(self.dir.glob("*.index"))[-1]
        with open(index, "ab") as f:
            f.write(bytes(_PREALLOCATED_INDEX_BYTES))

    @property
    def active(self) -> Path:
        return sorted(self.dir.glob("*.log"))[-1]

    def append(self, data: bytes) -> None:
        with open(self.active, "ab") as f:
            f.write(data)

    def records(self, n: int, **producer) -> None:
        self.append(_batch(self.next, n, **producer))
        self.next += n

    def marker(self, kind: str, producer_id: int) -> None:
        self.append(encode_control_batch(kind, producer_id=producer_id, producer_epoch=0, offset=self.next))
        self.next += 1


class Collector:
    """A foreachBatch sink: each micro-batch's (partition, offset, value) rows, in arrival order."""

    def __init__(self):
        self.batches: list[list[tuple]] = []

    def __call__(self, df, batch_id: int) -> None:
        rows = df.select("topic", "partition", "offset", "value").collect()
        self.batches.append([(r.topic, r.partition, r.offset, bytes(r.value)) for r in rows])

    def offsets(self, topic: str = "orders", partition: int = 0, since: int = 0) -> list[int]:
        """Offsets of one partition in arrival order, from micro-batch ``since`` on."""
        return [o for b in self.batches[since:] for t, p, o, _ in sorted(b) if (t, p) == (topic, partition)]

    def sizes(self) -> list[int]:
        return [len(b) for b in self.batches if b]


def start(spark, path, sink, checkpoint, trigger=None, **options):
    reader = spark.readStream.format(FORMAT)
    for k, v in options.items():
        reader = reader.option(k, v if isinstance(v, str) else json.dumps(v) if isinstance(v, dict) else str(v))
    writer = reader.load(str(path)).writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
    if trigger == "availableNow":
        writer = writer.trigger(availableNow=True)
    return writer.start()


def run_available_now(spark, path, sink, checkpoint, **options) -> None:
    query = start(spark, path, sink, checkpoint, "availableNow", **options)
    try:
        query.awaitTermination(300)
        assert not query.isActive, "an AvailableNow query did not finish"
    finally:
        query.stop()


# ----------------------------------------------------------------------------- tailing a live directory


def test_tails_a_live_directory_exactly_once_through_a_restart(spark, tmp_path):
    root, checkpoint = tmp_path / "logs", tmp_path / "checkpoint"
    orders = LiveLog(root, "orders", 0)
    orders.roll(5, 5, 5, 5)  # 0..19
    sink = Collector()
    query = start(spark, root, sink, checkpoint, startingOffsets="earliest")
    try:
        query.processAllAvailable()
        assert orders.next == 20 and sink.offsets() == list(range(20))

        # appended in place to the active segment, then half a batch: only the whole batches are read
        orders.records(10)  # 20..29
        torn = _batch(30, 5)
        orders.append(torn[: len(torn) // 2])
        query.processAllAvailable()
        assert sink.offsets() == list(range(30))
        orders.append(torn[len(torn) // 2 :])  # the batch completes: read from where the read stopped
        orders.next = 35
        query.processAllAvailable()
        assert sink.offsets() == list(range(35))

        # a segment roll, a new partition (read from its earliest offset), and files a broker
        # leaves while deleting or compacting: ignored
        orders.roll(5, 5)  # 35..44
        clicks = LiveLog(root, "clicks", 3)
        clicks.roll(4)  # 0..3
        for suffix in (".log.deleted", ".log.cleaned", ".log.swap"):
            (orders.dir / f"{0:020d}{suffix}").write_bytes(b"\xff" * 100)
        query.processAllAvailable()
        assert sink.offsets() == list(range(45))
        assert sink.offsets("clicks", 3) == list(range(4))
    finally:
        query.stop()

    # a restart from the checkpoint reads only what came after
    orders.records(5)  # 45..49
    done = len(sink.batches)
    query = start(spark, root, sink, checkpoint, startingOffsets="earliest")
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink.offsets(since=done) == list(range(45, 50))
    assert sink.offsets() == list(range(50))  # every offset once, in order
    values = {(p, o): v for b in sink.batches for _, p, o, v in b}
    assert all(values[(0, o)] == b"v%d" % o for o in range(50))


def test_starting_offsets_latest_and_json(spark, tmp_path):
    root = tmp_path / "logs"
    orders = LiveLog(root, "orders", 0)
    orders.roll(10)
    # latest (Spark's default for a stream): only what comes after the start
    sink = Collector()
    query = start(spark, root, sink, tmp_path / "c1")
    try:
        query.processAllAvailable()
        orders.records(3)  # 10..12
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink.offsets() == [10, 11, 12]
    # a specific offset per partition
    sink = Collector()
    run_available_now(spark, root, sink, tmp_path / "c2", startingOffsets={"orders": {"0": 7}})
    assert sink.offsets() == list(range(7, 13))
    # a starting timestamp (records here are stamped 1_700_000_000_000 + offset)
    sink = Collector()
    run_available_now(spark, root, sink, tmp_path / "c3", startingTimestamp=1_700_000_000_011)
    assert sink.offsets() == [11, 12]


def test_max_offsets_per_trigger_splits_across_partitions_as_spark(spark, tmp_path):
    root = tmp_path / "logs"
    LiveLog(root, "orders", 0).roll(*[3] * 10)  # 30 offsets
    LiveLog(root, "orders", 1).roll(*[2] * 5)  # 10 offsets
    sink = Collector()
    run_available_now(spark, root, sink, tmp_path / "c", startingOffsets="earliest", maxOffsetsPerTrigger=10)
    # Spark's shares of 10 per trigger, 30:10 to read: 7 + 2, then 7 + 2 (23:8), 7 + 2 (16:6),
    # 6 + 3 (9:4), and the last 3 + 1, which is less than the limit
    assert sink.sizes() == [9, 9, 9, 9, 4]
    assert sink.offsets("orders", 0) == list(range(30)) and sink.offsets("orders", 1) == list(range(10))
    assert [len([r for r in b if r[1] == 0]) for b in sink.batches if b] == [7, 7, 7, 6, 3]


def test_rate_limit_does_not_starve_a_small_partition():
    a, b = ("t", 0), ("t", 1)
    assert rate_limit(10, {a: 0, b: 0}, {a: 1000, b: 1}) == {a: 9, b: 1}  # 9.99 rounds down, 0.0099 up
    assert rate_limit(10, {a: 0, b: 5}, {a: 4, b: 5}) == {a: 4, b: 5}  # less than the limit: all of it


def test_read_committed_holds_back_at_the_first_open_transaction(spark, tmp_path):
    root, checkpoint = tmp_path / "logs", tmp_path / "c"
    orders = LiveLog(root, "orders", 0)
    orders.roll(5)  # 0..4
    orders.records(3, producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)  # 5..7, open
    orders.records(2)  # 8..9: after the open transaction's first offset, held back with it
    sink = Collector()
    query = start(
        spark, root, sink, checkpoint, startingOffsets="earliest", **{"kafka.isolation.level": "read_committed"}
    )
    try:
        query.processAllAvailable()
        assert sink.offsets() == list(range(5))
        orders.marker("commit", 7)  # 10
        orders.records(2, producer_id=8, producer_epoch=0, base_sequence=0, transactional=True)  # 11..12
        orders.marker("abort", 8)  # 13: no .txnindex entry is written for it in the active segment
        orders.records(2)  # 14..15
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink.offsets() == [*range(10), 14, 15]  # markers and the aborted records dropped


def test_fail_on_data_loss_when_retention_deleted_unread_offsets(spark, tmp_path):
    root, checkpoint = tmp_path / "logs", tmp_path / "c"
    orders = LiveLog(root, "orders", 0)
    orders.roll(5)  # 0..4
    sink = Collector()
    run_available_now(spark, root, sink, checkpoint, startingOffsets="earliest")
    assert sink.offsets() == list(range(5))
    orders.roll(5)  # 5..9: never read
    orders.roll(5)  # 10..14
    first, second, _ = sorted(orders.dir.glob("*.log"))
    first.rename(first.with_name(first.name + ".deleted"))  # Kafka's retention renames, then removes
    second.unlink()
    with pytest.raises(
        Exception, match=r"offsets 5\.\.9 of orders-0 were deleted \(retention\?\) before they were read"
    ):
        run_available_now(spark, root, Collector(), checkpoint, startingOffsets="earliest")
    # failOnDataLoss=false: on from the log's new start
    sink = Collector()
    run_available_now(spark, root, sink, checkpoint, startingOffsets="earliest", failOnDataLoss="false")
    assert sink.offsets() == list(range(10, 15))


# ----------------------------------------------------------------------------- errors


def test_stream_options_refused_with_one_clear_message(spark, tmp_path):
    root = tmp_path / "logs"
    LiveLog(root, "orders", 0).roll(3)
    with pytest.raises(Exception, match="kafka-segments needs a path"):
        spark.readStream.format(FORMAT).load()
    with pytest.raises(Exception, match="unknown option 'maxoffsetpertrigger'; did you mean maxOffsetsPerTrigger"):
        spark.readStream.format(FORMAT).option("maxOffsetPerTrigger", 5).load(str(root))
    # a stream's own refusals come from the driver's check too: one line, no worker traceback
    with pytest.raises(OptionError, match="option endingOffsets is for batch reads") as info:
        spark.readStream.format(FORMAT).option("endingOffsets", "latest").load(str(root))
    assert "\n" not in str(info.value)
    for options, message in (
        ({"endingOffsets": "latest"}, "option endingOffsets is for batch reads: a stream has no end"),
        ({"minOffsetsPerTrigger": "5"}, "option minOffsetsPerTrigger is not supported by streams"),
        ({"view": "batches"}, "a stream reads records"),
    ):
        with pytest.raises(Exception, match=message):
            run_available_now(spark, root, Collector(), tmp_path / "c" / str(len(message)), **options)
    # startingOffsets=latest is a stream's: a batch read still refuses it
    with pytest.raises(Exception, match="startingOffsets can't be latest for batch queries"):
        spark.read.format(FORMAT).option("startingOffsets", "latest").load(str(root)).collect()


# ----------------------------------------------------------------------------- the reader without Spark's engine


def test_available_now_stops_at_the_offsets_of_its_start(tmp_path):
    """Spark calls prepareForTriggerAvailableNow once, then latestOffset until it returns its start."""
    root = tmp_path / "logs"
    orders = LiveLog(root, "orders", 0)
    orders.roll(5, 5)
    from pyspark.sql.types import StructType

    reader = KafkaSegmentsStreamReader({"path": str(root), "startingOffsets": "earliest"}, StructType())
    start = reader.initialOffset()
    assert start == {"orders": {"0": 0}}
    reader.prepareForTriggerAvailableNow()
    orders.records(5)  # after the trigger's start: not read by it
    assert reader.latestOffset(start, ReadAllAvailable()) == {"orders": {"0": 10}}
    assert reader.latestOffset(start, ReadMaxRows(4)) == {"orders": {"0": 4}}
    assert reader.reportLatestOffset() == {"orders": {"0": 15}}
    fresh = KafkaSegmentsStreamReader({"path": str(root)}, StructType())
    assert fresh.latestOffset(start, ReadAllAvailable()) == {"orders": {"0": 15}}


def _offsets(reader, parts) -> list[int]:
    return [o for p in parts for rb in reader.read(p) for o in rb.to_pydict()["offset"]]


def test_a_segment_deleted_after_planning(spark, tmp_path):
    """Kafka's retention renames a segment to .deleted and removes it later: a micro-batch planned
    before the rename reads the renamed file; once it is gone, that is data loss."""
    root = tmp_path / "logs"
    orders = LiveLog(root, "orders", 0)
    orders.roll(5)
    orders.roll(5)
    schema = spark.readStream.format(FORMAT).load(str(root)).schema
    reader = KafkaSegmentsStreamReader({"path": str(root), "startingOffsets": "earliest"}, schema)
    start = reader.initialOffset()
    parts = reader.partitions(start, reader.latestOffset(start, ReadAllAvailable()))
    first = sorted(orders.dir.glob("*.log"))[0]
    deleted = first.with_name(first.name + ".deleted")
    first.rename(deleted)
    assert _offsets(reader, parts) == list(range(10))
    deleted.unlink()
    with pytest.raises(DataLossError, match=r"was deleted before offsets 0\.\. of it were read"):
        _offsets(reader, parts)
    lenient = KafkaSegmentsStreamReader({"path": str(root), "failOnDataLoss": "false"}, schema)
    assert _offsets(lenient, parts) == list(range(5, 10))


def test_initial_offsets(tmp_path):
    """Where a query with no checkpoint starts: Spark's default for a stream is latest."""
    from pyspark.sql.types import StructType

    root = tmp_path / "logs"
    LiveLog(root, "orders", 0).roll(5, 5)
    for options, expected in (
        ({}, 10),
        ({"startingOffsets": "earliest"}, 0),
        ({"startingOffsets": '{"orders":{"0":-2}}'}, 0),
        ({"startingOffsets": '{"orders":{"0":-1}}'}, 10),
        ({"startingOffsets": '{"orders":{"0":4}}'}, 4),
        ({"startingOffset": "3"}, 3),  # kcodec's own, for every partition
    ):
        reader = KafkaSegmentsStreamReader({"path": str(root), **options}, StructType())
        assert reader.initialOffset() == {"orders": {"0": expected}}, options
