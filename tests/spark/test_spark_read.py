"""Reading segments with the kafka-segments data source: the same rows as
kcodec's plain Python reader, for the shared vectors and the sample data,
split or not, with every read option."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kcodec.log.index import read_txn_index
from kcodec.log.partition import Partition, list_partitions
from kcodec.records.reader import read_batches
from tests.helpers.spark_expected import expected_rows, partition_batches, record_row, sort_key, spark_rows

from .conftest import VECTORS

FORMAT = "kafka-segments"
KAFKA_SOURCE = [
    ("key", "binary"),
    ("value", "binary"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("timestamp", "timestamp"),
    ("timestampType", "int"),
    ("headers", "array<struct<key:string,value:binary>>"),
]


def read(spark, path, **options):
    reader = spark.read.format(FORMAT)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(str(path))


# ----------------------------------------------------------------------------- schema


def test_schema_starts_with_spark_kafka_source_columns(spark, samples):
    df = read(spark, samples)
    got = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    assert got[: len(KAFKA_SOURCE)] == KAFKA_SOURCE
    assert [n for n, _ in got[len(KAFKA_SOURCE) :]] == [
        "magic",
        "baseOffset",
        "producerId",
        "producerEpoch",
        "baseSequence",
        "isTransactional",
        "isControl",
        "partitionLeaderEpoch",
        "compression",
        "batchPosition",
        "segment",
        "crcValid",
        "lastOffset",
        "deleteHorizonMs",
        "crc",
        "storedTimestampMs",
    ]
    assert all(f.nullable for f in df.schema.fields)


@pytest.mark.parametrize("view,sizes", [("records", False), ("batches", False), ("batches", True)])
def test_arrow_schema_is_the_one_pyspark_expects(spark, samples, view, sizes):
    """The hand-written Arrow schema equals what the installed pyspark derives from the Spark schema."""
    types = pytest.importorskip("pyspark.sql.pandas.types")
    from kcodec.spark.arrow import arrow_schema, columns_for

    schema = read(spark, samples, view=view, sizes=str(sizes).lower()).schema
    ours = arrow_schema([(c, True) for c in columns_for(view, sizes)])
    assert ours.equals(types.to_arrow_schema(schema, timezone="UTC")), (
        ours,
        types.to_arrow_schema(schema, timezone="UTC"),
    )


def test_user_schema_picks_columns(spark, samples):
    df = spark.read.format(FORMAT).schema("offset bigint, key binary, topic string").load(str(samples))
    rows = df.collect()
    assert len(rows) == len(expected_rows(samples))
    assert set(rows[0].asDict()) == {"offset", "key", "topic"}
    with pytest.raises(Exception, match="no column 'nope'"):
        spark.read.format(FORMAT).schema("nope int").load(str(samples)).collect()


# ----------------------------------------------------------------------------- same rows as the Python reader


def test_sample_data_reads_as_the_python_reader(spark, samples):
    df = read(spark, samples)
    got = sorted(spark_rows(df), key=sort_key)
    want = sorted(expected_rows(samples), key=sort_key)
    assert len(got) == len(want) > 1000
    assert got == want
    # one input partition per segment
    segments = sum(len(p.segments) for p in list_partitions(samples))
    assert df.rdd.getNumPartitions() == segments


def test_split_segments_read_the_same(spark, samples):
    """Segments cut at .index positions into many input partitions give the same rows."""
    df = read(spark, samples, splitBytes=2048, includeControlRecords="true")
    segments = sum(len(p.segments) for p in list_partitions(samples))
    assert df.rdd.getNumPartitions() > 2 * segments
    got = sorted(spark_rows(df), key=sort_key)
    assert got == sorted(expected_rows(samples, include_control=True), key=sort_key)


def test_min_partitions_splits_finer(samples, monkeypatch):
    from kcodec.spark import planning
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    monkeypatch.setattr(planning, "_MIN_SPLIT_BYTES", 1024)  # the samples' segments are 12 KiB
    parts = discover(str(samples))
    few = plan(parts, ReadOptions(str(samples)))
    many = plan(parts, ReadOptions(str(samples), min_partitions=200))
    assert len(many) > len(few)


def _vector_dir(tmp_path: Path) -> tuple[Path, list[str]]:
    """Every shared vector that is a valid segment, as partition directory <name>-0."""
    names = []
    for meta_path in sorted(VECTORS.glob("*.json")):
        meta = json.loads(meta_path.read_text())
        if meta["expected"] != "ok" or meta.get("optional"):
            continue
        data = (VECTORS / meta["file"]).read_bytes()
        try:
            reader = read_batches(data, strict=True)
            list(reader)
        except Exception:
            continue  # not a whole, valid segment
        d = tmp_path / f"{meta['name']}-0"
        d.mkdir()
        (d / "00000000000000000000.log").write_bytes(data)
        names.append(meta["name"])
    return tmp_path, names


def test_every_valid_vector_reads_as_the_python_reader(spark, tmp_path):
    root, names = _vector_dir(tmp_path)
    assert len(names) >= 25
    df = read(spark, root, includeControlRecords="true")
    got = sorted(spark_rows(df), key=sort_key)
    want = sorted(expected_rows(root, include_control=True), key=sort_key)
    assert got == want
    assert {r[2] for r in got} == {
        n for n in names if any(True for b, _ in partition_batches(root / f"{n}-0") for _ in b.records)
    }
    # the records agree with the vectors' own JSON too
    for name in names:
        meta = json.loads((VECTORS / f"{name}.json").read_text())
        if "records" not in meta:
            continue
        mine = [r for r in got if r[2] == name and not r[14]]
        assert [(r[4], None if r[1] is None else r[1].hex()) for r in mine] == [
            (m["offset"], m["value"]) for m in meta["records"]
        ], name


def test_paths_files_globs_and_uris(spark, samples):
    orders0 = samples / "orders-0"
    want = sorted(expected_rows(samples, keep=lambda b, r, t, p: t == "orders"), key=sort_key)
    got = sorted(spark_rows(read(spark, f"{samples}/orders-*")), key=sort_key)
    assert got == want
    got = sorted(spark_rows(read(spark, f"file://{samples}/orders-*")), key=sort_key)
    assert got == want
    seg = sorted(orders0.glob("*.log"))[-1]
    rows = spark_rows(read(spark, seg))
    assert rows and all(r[18] == str(seg) and r[2] == "orders" and r[3] == 0 for r in rows)
    rows = read(spark, orders0, topic="renamed", partition=7).select("topic", "partition").distinct().collect()
    assert [tuple(r) for r in rows] == [("renamed", 7)]
    with pytest.raises(Exception, match="no such file"):
        read(spark, samples / "nope").collect()


# ----------------------------------------------------------------------------- options


def test_read_committed_drops_aborted_transactions(spark, samples, tmp_path):
    part = samples / "orders-0"
    txns = [t for seg in Partition(part).segments if seg.txn_index.exists() for t in read_txn_index(seg.txn_index)]
    assert len(txns) == 1
    t = txns[0]

    def committed(batch, r, topic, partition):
        return not (batch.producer_id == t.producer_id and t.first_offset <= r.offset <= t.last_offset)

    want = sorted(expected_rows(samples, keep=committed), key=sort_key)
    uncommitted = expected_rows(samples)
    assert len(uncommitted) - len(want) == 20  # the aborted transaction's two batches of 10
    got = sorted(spark_rows(read(spark, samples, isolationLevel="read_committed")), key=sort_key)
    assert got == want
    assert any(r[13] for r in got)  # the committed transaction's records stay
    # without index files the aborted transactions come from the ABORT markers
    bare = tmp_path / "orders-0"
    shutil.copytree(part, bare)
    for f in bare.iterdir():
        if f.suffix != ".log":
            f.unlink()
    got = sorted(spark_rows(read(spark, bare, isolationLevel="read_committed")), key=sort_key)
    assert [r[:18] for r in got] == [r[:18] for r in want if r[2] == "orders" and r[3] == 0]
    got = sorted(spark_rows(read(spark, part, isolationLevel="read_committed", txnIndex="derive")), key=sort_key)
    assert got == [r for r in want if r[2] == "orders" and r[3] == 0]


def test_control_records_only_when_asked(spark, samples):
    rows = read(spark, samples / "orders-0", includeControlRecords="true").where("isControl").collect()
    assert len(rows) == 2 and all(r.isTransactional and r.producerId == 7001 for r in rows)
    assert read(spark, samples / "orders-0").where("isControl").count() == 0


def test_offset_ranges(spark, samples):
    orders1 = samples / "orders-1"  # three segments, bases 0, 200, 400
    got = [r.offset for r in read(spark, orders1, startingOffset=230, endingOffset=431).select("offset").collect()]
    assert sorted(got) == list(range(230, 431))
    got = [r.offset for r in read(spark, orders1, startingOffset=480).select("offset").collect()]
    assert sorted(got) == list(range(480, 500))
    assert read(spark, orders1, startingOffset=600).count() == 0
    assert read(spark, orders1, startingOffset=10, endingOffset=10).count() == 0


def test_offset_range_planning_reads_no_skipped_bytes(samples):
    """Segments before the start and after the end are not planned; the start
    segment's split begins at the .index position, not at 0."""
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    path = str(samples / "orders-1")
    splits = plan(discover(path), ReadOptions(path, starting_offset=330, ending_offset=380))
    assert len(splits) == 1
    s = splits[0]
    assert s.log.endswith("00000000000000000200.log") and s.start > 0
    batches = list(read_batches(s.log, start=s.start, end=s.end))
    assert batches[0].last_offset <= 330  # the .index entry at or below the start: no earlier batch is read
    assert any(b.base_offset <= 330 <= b.last_offset for b in batches)
    assert s.end is None or batches[-1].last_offset >= 379


def test_starting_timestamp(spark, samples):
    for part in list_partitions(samples):
        batches = [b for b, _ in partition_batches(part.path) if not b.is_control]
        stamps = sorted(r.timestamp for b in batches for r in b.records)
        if stamps[-1] < 0:
            continue  # v0: no timestamps
        target = stamps[len(stamps) // 2] + 1
        # Kafka's ListOffsets: the first batch whose max timestamp reaches the target, and in it the first
        # record that does; everything from that offset on
        first = next(b for b in batches if b.max_timestamp >= target)
        start = next(r.offset for r in first.records if r.timestamp >= target)
        want = [r.offset for b in batches for r in b.records if r.offset >= start]
        got = sorted(r.offset for r in read(spark, part.path, startingTimestamp=target).select("offset").collect())
        assert got == want, part.path
    # no record at or after it: Spark's startingOffsetsByTimestampStrategy (error by default; latest: nothing)
    late = read(
        spark, samples / "orders-1", startingTimestamp=4_000_000_000_000, startingOffsetsByTimestampStrategy="latest"
    )
    assert late.count() == 0
    iso = read(spark, samples / "orders-1", startingTimestamp="2025-01-01T00:01:00Z").count()
    assert 0 < iso < 500


def test_bad_options_are_refused(spark, samples):
    with pytest.raises(Exception, match="isolationLevel"):
        read(spark, samples, isolationLevel="serializable").collect()
    with pytest.raises(Exception, match="onCorrupt"):
        read(spark, samples, onCorrupt="ignore").collect()


# ----------------------------------------------------------------------------- corrupt segments


def _corrupt_copy(samples: Path, tmp_path: Path) -> tuple[Path, int, int]:
    """orders-1 with one bit of the third batch's stored CRC flipped (first segment): (dir, position, size)."""
    part = shutil.copytree(samples / "orders-1", tmp_path / "orders-1")
    log = sorted(part.glob("*.log"))[0]
    batches = list(read_batches(log))
    victim = batches[2]
    data = bytearray(log.read_bytes())
    data[victim.position + 18] ^= 0x01  # the crc field: bytes 17..20
    log.write_bytes(bytes(data))
    return part, victim.position, victim.size


def test_corrupt_batch_fails_by_default(spark, samples, tmp_path):
    part, position, _ = _corrupt_copy(samples, tmp_path)
    with pytest.raises(Exception, match=r"00000000000000000000\.log.*(crc|CRC|corrupt)"):
        read(spark, part).collect()
    # without CRC checks the batch decodes and says its CRC is bad
    bad = read(spark, part, verifyCrc="false").where("not crcValid").select("batchPosition").distinct().collect()
    assert [r.batchPosition for r in bad] == [position]


def test_corrupt_batch_skipped_and_reported(spark, samples, tmp_path):
    part, position, size = _corrupt_copy(samples, tmp_path)
    report = tmp_path / "report"
    df = read(spark, part, onCorrupt="skip", corruptReportPath=report)
    got = sorted(spark_rows(df), key=sort_key)
    want = sorted(expected_rows(samples, keep=lambda b, r, t, p: t == "orders" and p == 1), key=sort_key)
    lost = [r for r in want if r[17] == position and r[18].endswith("00000000000000000000.log")]
    assert len(lost) == 50
    assert [r[:18] for r in got] == [r[:18] for r in want if r not in lost]
    items = [json.loads(line) for f in report.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert items and {(i["position"], i["bytes"], i["kind"]) for i in items} == {(position, size, "crc")}
    assert items[0]["segment"].endswith("00000000000000000000.log") and items[0]["topic"] == "orders"


def test_broken_framing_and_truncation(spark, samples, tmp_path):
    part = shutil.copytree(samples / "orders-1", tmp_path / "orders-1")
    first, last = sorted(part.glob("*.log"))[0], sorted(part.glob("*.log"))[-1]
    batches = list(read_batches(first))
    data = bytearray(first.read_bytes())
    data[batches[3].position + 8 : batches[3].position + 12] = (5).to_bytes(4, "big")  # an impossible length
    first.write_bytes(bytes(data))
    tail = last.read_bytes()
    last.write_bytes(tail[:-7])  # the last batch cut short
    with pytest.raises(Exception):  # noqa: B017 - Spark wraps the worker's error in its own classes
        read(spark, part).collect()
    report = tmp_path / "report"
    rows = read(spark, part, onCorrupt="skip", corruptReportPath=report).select("batchPosition", "segment").collect()
    kept_first = {r.batchPosition for r in rows if r.segment == str(first)}
    assert kept_first == {b.position for b in batches[:3]}
    items = [json.loads(line) for f in report.glob("*.jsonl") for line in f.read_text().splitlines()]
    kinds = {(Path(i["segment"]).name, i["kind"]) for i in items}
    assert (first.name, "length") in kinds and (last.name, "truncated") in kinds
    framing = next(i for i in items if i["kind"] == "length")
    assert framing["position"] == batches[3].position and framing["bytes"] is None


# ----------------------------------------------------------------------------- the batches view


def test_batches_view(spark, samples):
    from kcodec.spark.cost_table import size_as

    df = read(spark, samples / "orders-0", view="batches", sizes="true")
    rows = sorted(df.collect(), key=lambda r: (r.segment, r.position))
    want = list(partition_batches(samples / "orders-0"))
    assert len(rows) == len(want)
    for row, (b, seg) in zip(rows, want):
        assert (
            row.segment,
            row.position,
            row.size,
            row.magic,
            row.baseOffset,
            row.lastOffset,
            row.records,
            row.compression,
            row.compressedBytes,
            row.uncompressedBytes,
            row.crcValid,
            row.isControl,
        ) == (
            seg,
            b.position,
            b.size,
            b.magic,
            b.base_offset,
            b.last_offset,
            len(b.records),
            b.compression,
            b.stored_records_size,
            b.records_size,
            b.crc_valid,
            b.is_control,
        )
        assert row.sizeAs == size_as(b)
        if not b.is_control:
            assert row.sizeAs[f"v2/{b.compression}"] == b.size  # sizes agree with the bytes on disk


def test_record_row_helper_matches_columns():
    """The expected-row helper follows the records view's column order."""
    from kcodec.spark.arrow import RECORD_COLUMNS
    from tests.helpers.spark_expected import COLUMNS

    assert tuple(c.name for c in RECORD_COLUMNS) == COLUMNS
    assert record_row.__code__.co_argcount == 5


# ----------------------------------------------------------------------------- values Spark's types do not hold


def _kafka_valid_oddities(directory: Path) -> None:
    """t-0 holding what Kafka accepts but Spark's columns do not all hold: a header
    key that is not UTF-8, a timestamp past Spark's, an offset past int64."""
    import struct

    from kcodec.records.encode import NewRecord, encode_batch
    from kcodec.runtime.crc import crc32c

    first = bytearray(encode_batch([NewRecord(b"k", b"v0", (), 1000), NewRecord(b"k", b"v1", (("XX", b"h"),), 1000)]))
    i = first.index(b"XX")
    first[i : i + 2] = b"\xc3\x28"  # not UTF-8
    first[17:21] = struct.pack(">I", crc32c(bytes(first[21:])))
    late = encode_batch([NewRecord(b"k", b"v2", (), 2**62), NewRecord(b"k", b"v3", (), 5)], base_offset=2)
    # the encoder refuses offsets past int64, so the base offset (outside the CRC) is written in afterwards
    last = bytearray(encode_batch([NewRecord(b"k", b"v4", (), 7), NewRecord(b"k", b"v5", (), 7)], base_offset=4))
    last[0:8] = struct.pack(">q", 2**63 - 1)
    (directory / "t-0").mkdir(parents=True)
    (directory / "t-0" / "00000000000000000000.log").write_bytes(bytes(first) + late + bytes(last))


def test_values_past_spark_types_are_skipped_or_named(spark, tmp_path):
    _kafka_valid_oddities(tmp_path)
    part = tmp_path / "t-0"
    rows = read(spark, part, onCorrupt="skip").select("offset", "value", "headers").collect()
    got = sorted((r.offset, bytes(r.value), r.headers and [(h.key, bytes(h.value)) for h in r.headers]) for r in rows)
    assert got == [
        (0, b"v0", None),
        (1, b"v1", [("\ufffd(", b"h")]),  # as Kafka's Java client decodes the key
        (3, b"v3", None),
    ]  # the last batch's offsets run past int64: the decoder refuses the whole batch as corrupt, skip reports it
    batches = read(spark, part, onCorrupt="skip", view="batches").select("baseOffset").collect()
    assert sorted(r.baseOffset for r in batches) == [0]  # rows whose max timestamp / last offset do not fit
    for view, field in (("records", "timestamp 4611686018427387904 ms"), ("batches", "timestamp")):
        with pytest.raises(Exception, match=f"{field}.*batch at offset 2"):
            read(spark, part, view=view).collect()
