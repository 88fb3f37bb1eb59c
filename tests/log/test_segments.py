"""Partition directories (kcodec.log): Kafka's file names, index files, index
rebuilding and checking, seeking reads and the atomic segment writer."""

from __future__ import annotations

import ast
import struct
from pathlib import Path

import pytest

from kcodec.errors import BadLengthError, CorruptError, CrcMismatchError, EncodeError, KcodecError, TruncatedError
from kcodec.generated import codec
from kcodec.log import files
from kcodec.log.fs import ArrowFS, LocalFS
from kcodec.log.index import (
    AbortedTxn,
    OffsetPosition,
    TimestampOffset,
    build_indexes,
    build_txn_index,
    encode_offset_index,
    encode_time_index,
    encode_txn_index,
    read_offset_index,
    read_time_index,
    read_txn_index,
)
from kcodec.log.index_check import check_indexes
from kcodec.log.names import parse_partition_dir, parse_segment_name, segment_name
from kcodec.log.partition import Partition, aborted_transactions, list_partitions
from kcodec.log.writer import SegmentWriter, write_atomically
from kcodec.records.reader import read_batches

# ----------------------------------------------------------------------------- entry helpers


def v2_batch(
    base_offset: int,
    timestamps=(1000,),
    *,
    value: bytes = b"v" * 20,
    producer_id: int = -1,
    producer_epoch: int = -1,
    transactional: bool = False,
) -> bytes:
    """A v2 batch with one record per timestamp (offsets base, base+1, ...)."""
    base_ts = timestamps[0]
    return codec("record_batch", 2).build(
        dict(
            base_offset=base_offset,
            partition_leader_epoch=0,
            attributes=dict(
                compression="none",
                timestamp_type="create_time",
                transactional=transactional,
                control=False,
                delete_horizon=False,
            ),
            last_offset_delta=len(timestamps) - 1,
            base_timestamp=base_ts,
            max_timestamp=max(timestamps),
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=0 if producer_id >= 0 else -1,
            records=[
                dict(attributes=0, timestamp_delta=ts - base_ts, offset_delta=i, key=None, value=value, headers=[])
                for i, ts in enumerate(timestamps)
            ],
        )
    )


def marker(offset: int, producer_id: int, kind: str = "abort", timestamp: int = 1000) -> bytes:
    """A COMMIT/ABORT control batch (Kafka's EndTransactionMarker)."""
    return codec("record_batch", 2).build(
        dict(
            base_offset=offset,
            partition_leader_epoch=0,
            attributes=dict(
                compression="none", timestamp_type="create_time", transactional=True, control=True, delete_horizon=False
            ),
            last_offset_delta=0,
            base_timestamp=timestamp,
            max_timestamp=timestamp,
            producer_id=producer_id,
            producer_epoch=0,
            base_sequence=-1,
            records=[
                dict(
                    attributes=0,
                    timestamp_delta=0,
                    offset_delta=0,
                    key=codec("control_record_key", 0).build(dict(version=0, type=kind)),
                    value=codec("end_txn_marker", 0).build(dict(version=0, coordinator_epoch=0)),
                    headers=[],
                )
            ],
        )
    )


# A v0 LegacyRecord entry, key="key", value="value"; the offset field is outside the CRC.
V0_ENTRY = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")


def v0_entry(offset: int) -> bytes:
    return struct.pack(">q", offset) + V0_ENTRY[8:]


def two_record_batches(base: int, max_timestamps) -> list[bytes]:
    """Batch i holds offsets base+2i, base+2i+1 with record timestamps (t-1, t)."""
    return [v2_batch(base + 2 * i, (t - 1, t)) for i, t in enumerate(max_timestamps)]


# ----------------------------------------------------------------------------- names


def test_segment_names():
    assert segment_name(42, ".log") == "00000000000000000042.log"
    assert segment_name(0, "timeindex") == "00000000000000000000.timeindex"
    assert parse_segment_name("/x/y/00000000000000000042.timeindex") == (42, "timeindex")
    assert parse_segment_name(Path("00000000000000001000.log.deleted")) == (1000, "log.deleted")
    assert parse_segment_name(segment_name(2**63 - 1, ".index")) == (2**63 - 1, "index")
    for bad in ("foo.log", "00000000000000000042", "leader-epoch-checkpoint", "99999999999999999999.log"):
        with pytest.raises(ValueError):
            parse_segment_name(bad)
    with pytest.raises(ValueError):
        segment_name(-1, ".log")


ARABIC_INDIC_ZERO, FULLWIDTH_ZERO = "\u0660", "\uff10"
NOT_KAFKA_NAMES = (
    "123.log",  # shorter
    "0" * 21 + ".log",  # longer
    ARABIC_INDIC_ZERO * 19 + "\u0664.log",  # digits \d matches and int() reads
    FULLWIDTH_ZERO * 20 + ".log",
    "0" * 20 + ".log\n",
)  # $ would match before the newline


def test_only_twenty_ascii_digits_name_a_segment():
    for bad in NOT_KAFKA_NAMES:
        with pytest.raises(ValueError):
            parse_segment_name(bad)
    assert parse_segment_name("0" * 19 + "4.log") == (4, "log")


def test_partition_dir_names():
    assert parse_partition_dir("/var/kafka-logs/orders-3") == ("orders", 3)
    assert parse_partition_dir("my-topic-with-dashes-12/") == ("my-topic-with-dashes", 12)
    assert parse_partition_dir("__consumer_offsets-49") == ("__consumer_offsets", 49)
    for bad in ("orders", "orders-", "orders-3.5f1b0c2d-delete", "-", "orders-\u0663", "orders-3\n"):
        with pytest.raises(ValueError):
            parse_partition_dir(bad)


# ----------------------------------------------------------------------------- index files


def test_offset_index_round_trip_through_generated_codec(tmp_path):
    entries = [(105, 0), (110, 4150), (200, 8300), (2**31 - 1 + 100, 2**31 - 1)]
    data = encode_offset_index(entries, 100)
    c = codec("offset_index_entry", 0)
    assert data == b"".join(c.build({"relative_offset": o - 100, "position": p}) for o, p in entries)
    assert [
        (100 + e.relative_offset, e.position) for e in (c.parse(data[i : i + 8]) for i in range(0, len(data), 8))
    ] == entries
    assert read_offset_index(data, 100) == entries
    path = tmp_path / segment_name(100, ".index")
    path.write_bytes(data)
    assert read_offset_index(path, sanity_check=True) == [OffsetPosition(o, p) for o, p in entries]
    with pytest.raises(EncodeError):
        encode_offset_index([(99, 0)], 100)  # below the base
    with pytest.raises(EncodeError):
        encode_offset_index([(100 + 2**31, 0)], 100)  # relative offset past Int32.MAX
    with pytest.raises(ValueError):
        read_offset_index(data)  # bytes need a base offset


def test_time_index_round_trip_through_generated_codec(tmp_path):
    entries = [(1_700_000_000_000, 7), (1_700_000_000_500, 12), (1_700_000_009_999, 40)]
    data = encode_time_index(entries, 7)
    c = codec("time_index_entry", 0)
    assert data == b"".join(c.build({"timestamp": t, "relative_offset": o - 7}) for t, o in entries)
    path = tmp_path / segment_name(7, ".timeindex")
    path.write_bytes(data)
    assert read_time_index(path, sanity_check=True) == [TimestampOffset(t, o) for t, o in entries]


def test_txn_index_round_trip_through_generated_codec(tmp_path):
    entries = [AbortedTxn(0, 1000, 5, 9, 10), AbortedTxn(0, 2000, 3, 12, 11)]
    data = encode_txn_index(entries)
    c = codec("aborted_txn_entry", 0)
    assert data == b"".join(c.build(e._asdict()) for e in entries)
    assert len(data) == 2 * 34
    path = tmp_path / segment_name(0, ".txnindex")
    path.write_bytes(data + b"\x00" * 20)  # a partial trailing entry is ignored, as Kafka's iterator does
    assert read_txn_index(path, sanity_check=True) == entries


def test_trailing_preallocated_zero_entries_are_ignored():
    offsets = encode_offset_index([(50, 0), (60, 4200), (70, 8400)], 50)  # first entry relative offset 0
    preallocated = offsets + b"\x00" * (8 * 1000)
    assert read_offset_index(preallocated, 50) == [(50, 0), (60, 4200), (70, 8400)]
    assert read_offset_index(preallocated, 50, sanity_check=True) == [(50, 0), (60, 4200), (70, 8400)]
    assert read_offset_index(b"\x00" * 80, 50) == [(50, 0)]  # only the first zero entry is an entry

    times = encode_time_index([(1000, 55), (2000, 65)], 50)
    assert read_time_index(times + b"\x00" * (12 * 500), 50) == [(1000, 55), (2000, 65)]
    # Kafka's TimeIndex.sanityCheck rejects such a file (last timestamp 0 < first): it gets rebuilt.
    with pytest.raises(CorruptError):
        read_time_index(times + b"\x00" * 12, 50, sanity_check=True)


def test_sanity_check_failures_raise_typed_errors():
    good = encode_offset_index([(10, 0), (20, 4100)], 10)
    with pytest.raises(BadLengthError) as err:
        read_offset_index(good + b"\x00", 10, sanity_check=True)
    assert "neither positive nor a multiple of 8" in str(err.value)
    assert read_offset_index(good + b"\x00", 10) == [(10, 0), (20, 4100)]  # DumpLogSegments reads on
    negative = good + codec("offset_index_entry", 0).build({"relative_offset": -1, "position": 9000})
    with pytest.raises(CorruptError) as err:
        read_offset_index(negative, 10, sanity_check=True)
    assert "less than the base offset 10" in str(err.value)

    t = codec("time_index_entry", 0)
    backwards = t.build({"timestamp": 500, "relative_offset": 1}) + t.build({"timestamp": 400, "relative_offset": 2})
    with pytest.raises(CorruptError, match="less than the first timestamp 500"):
        read_time_index(backwards, 0, sanity_check=True)
    below = t.build({"timestamp": 500, "relative_offset": 1}) + t.build({"timestamp": 600, "relative_offset": -3})
    with pytest.raises(CorruptError, match="less than the first offset 0"):
        read_time_index(below, 0, sanity_check=True)
    with pytest.raises(BadLengthError):
        read_time_index(t.build({"timestamp": 500, "relative_offset": 1}) + b"\x00" * 5, 0, sanity_check=True)

    a = codec("aborted_txn_entry", 0)
    txn = dict(producer_id=1, first_offset=0, last_offset=5, last_stable_offset=6)
    with pytest.raises(CorruptError, match="Unexpected aborted transaction version 1"):
        read_txn_index(a.build(dict(version=0x0100, **txn)), 0)  # first byte 1
    # Only the first byte is read: 0x0001 reads as version 0, 0xFF00 as -1 (both accepted).
    assert read_txn_index(a.build(dict(version=1, **txn)), 0)[0].version == 0
    assert read_txn_index(a.build(dict(version=-256, **txn)), 0)[0].version == -1
    with pytest.raises(CorruptError, match="less than start offset 10"):
        read_txn_index(a.build(dict(version=0, **txn)), 10, sanity_check=True)
    for exc in (BadLengthError, CorruptError):
        assert issubclass(exc, KcodecError)


# ----------------------------------------------------------------------------- rebuilding


def test_build_indexes_matches_hand_computed_entries():
    base = 10
    max_ts = [100, 300, 200, 400, 400, 350, 500, 600]
    batches = two_record_batches(base, max_ts)
    size = len(batches[0])
    # 61-byte header + 2 records of 27 bytes (length, attributes, deltas, null key, value length: 1 byte
    # each; 20 value bytes; header count 1).
    assert {len(b) for b in batches} == {size} and size == 115
    log = b"".join(batches)
    offsets, times = build_indexes(log, base, index_interval_bytes=100)
    # Batches sit at 0, 115, 230, ... A batch is indexed when more than 100 bytes lie between the last
    # entry's position (0 at first) and its own: not batch 0 (0 bytes), then every other one (115 > 100).
    assert read_offset_index(offsets, base) == [
        (13, 115),
        (15, 230),
        (17, 345),
        (19, 460),
        (21, 575),
        (23, 690),
        (25, 805),
    ]
    # At each of those points (max timestamp so far, last offset of the batch holding it), kept only
    # when larger than the last entry: 300 (batch 1), 300 again (dropped), 400 (batch 3), 400, 400,
    # 500 (batch 6), 600 (batch 7); the final offer at the end, (600, 25), is not larger.
    assert read_time_index(times, base) == [(300, 13), (400, 17), (500, 23), (600, 25)]


def test_build_indexes_interval_counts_from_the_last_entry_position():
    base = 0
    batches = two_record_batches(base, [100, 300, 200, 400, 400, 350, 500, 450])
    log = b"".join(batches)
    offsets, times = build_indexes(log, base, index_interval_bytes=150)
    # 115 > 150? no. 230 > 150 -> entry at 230 (batch 2, last offset 5). 345 - 230 = 115: no.
    # 460 - 230 = 230 > 150 -> entry at 460 (batch 4, offset 9). 690 -> batch 6 (offset 13).
    assert read_offset_index(offsets, base) == [(5, 230), (9, 460), (13, 690)]
    # At 230 the max so far is 300 (batch 1, offset 3); at 460 it is 400 (batch 3, offset 7);
    # at 690, 500 (batch 6, offset 13). The final offer (500, 13) is not larger: no extra entry.
    assert read_time_index(times, base) == [(300, 3), (400, 7), (500, 13)]
    # The default interval indexes nothing in 920 bytes; the time index gets only the final entry.
    offsets, times = build_indexes(log, base)
    assert offsets == b"" and read_time_index(times, base) == [(500, 13)]


def test_build_indexes_v0_data_leaves_the_time_index_empty(tmp_path):
    log = b"".join(v0_entry(o) for o in range(5, 15))
    path = tmp_path / segment_name(5, ".log")
    path.write_bytes(log)
    offsets, times = build_indexes(path, index_interval_bytes=0)  # base offset from the name
    assert times == b""
    assert read_offset_index(offsets, 5) == [(o, 34 * (o - 5)) for o in range(6, 15)]


def test_build_indexes_raises_where_recovery_would_truncate():
    log = bytearray(b"".join(two_record_batches(0, [1, 2, 3])))
    log[115 + 70] ^= 0xFF  # inside batch 1's records
    with pytest.raises(CrcMismatchError) as err:
        build_indexes(bytes(log), 0)
    assert err.value.base_offset == 2
    with pytest.raises(CorruptError):  # last offset below the segment base
        build_indexes(b"".join(two_record_batches(0, [1])), 100)
    # A truncated tail is skipped, as Kafka's file iteration does.
    whole = b"".join(two_record_batches(0, [1, 2, 3]))
    assert build_indexes(whole + whole[:50], 0, 0) == build_indexes(whole, 0, 0)


def test_build_txn_index_uses_kafkas_last_stable_offset():
    log = b"".join(
        [
            v2_batch(0, (1, 2), producer_id=7, producer_epoch=0, transactional=True),  # txn 7 starts at 0
            v2_batch(2, (3,), producer_id=8, producer_epoch=0, transactional=True),  # txn 8 starts at 2
            v2_batch(3, (4,)),  # non-transactional
            marker(4, 7, "abort"),  # abort 7: LSO = first offset of open txn 8 = 2
            marker(5, 8, "commit"),
            v2_batch(6, (5,), producer_id=9, producer_epoch=0, transactional=True),
            marker(7, 9, "abort"),  # nothing else open: LSO = marker + 1
            marker(8, 10, "abort"),  # producer 10 has no open transaction
        ]
    )
    open_txns: dict[int, int] = {}
    entries = read_txn_index(build_txn_index(log, 0, open_txns=open_txns), 0)
    assert entries == [AbortedTxn(0, 7, 0, 4, 2), AbortedTxn(0, 9, 6, 7, 8)]  # empty txn of 10: no entry
    assert open_txns == {}
    # Unknown history: the abort of producer 10 may close a transaction begun in an earlier segment.
    assert read_txn_index(build_txn_index(log, 0), 0)[-1] == AbortedTxn(0, 10, 0, 8, 9)


# ----------------------------------------------------------------------------- writer


def write_partition(directory: Path, entries, **options) -> SegmentWriter:
    with SegmentWriter(directory, **options) as w:
        for e in entries:
            w.append(e)
    return w


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_writer_rolls_at_the_size_limit_and_names_segments_by_base_offset(tmp_path):
    d = tmp_path / "orders-0"
    batches = two_record_batches(0, range(1000, 1020))  # 20 batches of 115 bytes, offsets 0..39
    w = write_partition(d, batches, segment_bytes=3 * 115 + 50, index_interval_bytes=100)
    assert [s.base_offset for s in w.completed] == [0, 6, 12, 18, 24, 30, 36]
    assert [s.size for s in w.completed] == [345] * 6 + [230]
    names = listing(d)
    assert not [n for n in names if n.endswith(".tmp")]
    assert names == sorted(
        segment_name(b, s) for b in (0, 6, 12, 18, 24, 30, 36) for s in (".log", ".index", ".timeindex")
    )
    for s in w.completed:
        offsets, times = build_indexes(s.log, index_interval_bytes=100)
        assert s.index.read_bytes() == offsets and s.time_index.read_bytes() == times
        assert (
            read_offset_index(s.index)
            == [(s.base_offset + 3, 115), (s.base_offset + 5, 230)][: len(list(read_batches(s.log))) - 1]
        )
    assert [b.base_offset for b in Partition(d).iter_batches()] == list(range(0, 40, 2))
    assert check_indexes(d) == []


def test_writer_a_segment_takes_at_least_one_entry_and_base_offset_names_the_first(tmp_path):
    batches = two_record_batches(100, [1, 2, 3])
    w = write_partition(tmp_path, batches, base_offset=90, segment_bytes=10)
    assert [s.base_offset for s in w.completed] == [90, 102, 104]
    assert [list(read_batches(s.log))[0].base_offset for s in w.completed] == [100, 102, 104]


def test_writer_roll_starts_a_segment_under_a_given_name(tmp_path):
    """roll(): a segment ends where the caller says, and the next takes the name given (a compacted segment
    keeps the base offset its first, removed, batches had) or its first entry's."""
    w = SegmentWriter(tmp_path, base_offset=0)
    w.roll(5)  # before anything is written: the first segment's name
    w.append(b"".join(two_record_batches(8, [1, 2])))  # offsets 8..11
    w.roll(12)
    w.append(v2_batch(20))
    w.roll()
    w.append(v2_batch(30))
    for bad in (11, 1 << 63):  # below what was written, past int64
        with pytest.raises(EncodeError):
            w.roll(bad)
    w.roll(40)
    with pytest.raises(EncodeError, match="a segment named by offset 40 cannot start with an entry at offset 35"):
        w.append(v2_batch(35))
    assert [s.base_offset for s in w.completed] == [5, 12, 30]  # the failed append discarded nothing complete
    assert [[b.base_offset for b in read_batches(s.log)] for s in w.completed] == [[8, 10], [20], [30]]
    assert check_indexes(tmp_path) == []


def test_writer_takes_several_entries_per_append_and_checks_offsets(tmp_path):
    w = SegmentWriter(tmp_path, base_offset=10)
    with pytest.raises(EncodeError):
        w.append(v2_batch(5))  # below the first segment's base offset
    w.append(b"".join(two_record_batches(10, [1, 2])))
    for bad in (v2_batch(13), v2_batch(11), b"".join(two_record_batches(14, [3])) + v2_batch(14)):
        with pytest.raises(EncodeError, match="offsets must increase"):
            w.append(bad)
    with pytest.raises(TruncatedError):
        w.append(v2_batch(20)[:-1])
    w.append(v2_batch(14))  # the failed appends wrote nothing: the writer goes on
    w.close()
    assert [b.base_offset for b in read_batches(w.completed[0].log)] == [10, 12, 14]
    with pytest.raises(ValueError):
        w.append(v2_batch(15))
    with pytest.raises(EncodeError, match="offsets in a partition only go up"):
        SegmentWriter(tmp_path, base_offset=10)  # the directory holds 10..14 already


def test_writer_exception_in_with_block_keeps_only_complete_segments(tmp_path):
    batches = two_record_batches(0, range(1, 11))
    with pytest.raises(RuntimeError):
        with SegmentWriter(tmp_path, segment_bytes=250) as w:  # two batches per segment
            for b in batches[:7]:
                w.append(b)
            assert any(n.endswith(".log.tmp") for n in listing(tmp_path))
            raise RuntimeError("interrupted")
    assert listing(tmp_path) == sorted(segment_name(b, s) for b in (0, 4, 8) for s in (".log", ".index", ".timeindex"))
    assert [b.base_offset for b in Partition(tmp_path).iter_batches()] == [0, 2, 4, 6, 8, 10]
    assert check_indexes(tmp_path) == []


def test_writer_bad_entry_in_with_block_leaves_no_temporaries(tmp_path):
    batches = two_record_batches(0, range(1, 6))
    damaged = bytearray(two_record_batches(10, [7])[0])
    damaged[-3] ^= 0x01
    with pytest.raises(CrcMismatchError):
        with SegmentWriter(tmp_path, segment_bytes=250) as w:
            for b in batches:
                w.append(b)
            w.append(bytes(damaged))
    assert listing(tmp_path) == sorted(segment_name(b, s) for b in (0, 4) for s in (".log", ".index", ".timeindex"))
    with pytest.raises(EncodeError):
        with SegmentWriter(tmp_path / "p-1", segment_bytes=250) as w:
            for b in batches:
                w.append(b)
            w.append(batches[0])  # offsets go back
    assert not [n for n in listing(tmp_path / "p-1") if n.endswith(".tmp")]
    assert len(Partition(tmp_path / "p-1").segments) == 2


def test_writer_failing_write_discards_the_unfinished_segment(tmp_path, monkeypatch):
    w = SegmentWriter(tmp_path, segment_bytes=250)
    for b in two_record_batches(0, [1, 2, 3]):
        w.append(b)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(w._current, "write", broken)
    with pytest.raises(OSError):
        w.append(v2_batch(6))
    assert listing(tmp_path) == sorted(segment_name(0, s) for s in (".log", ".index", ".timeindex"))
    with pytest.raises(ValueError):
        w.append(v2_batch(7))


def test_writer_writes_a_txn_index_for_aborted_transactions(tmp_path):
    entries = [
        v2_batch(0, (1, 2), producer_id=7, producer_epoch=0, transactional=True),
        v2_batch(2, (3,), producer_id=8, producer_epoch=0, transactional=True),
        marker(3, 7, "abort"),
        marker(4, 8, "commit"),
        v2_batch(5, (5,), producer_id=9, producer_epoch=0, transactional=True),  # spans into segment 2
        v2_batch(6, (6,)),
        v2_batch(7, (7,)),
        marker(8, 9, "abort"),
        v2_batch(9, (8,)),
    ]
    sizes = [len(e) for e in entries]
    w = write_partition(tmp_path, entries, segment_bytes=sum(sizes[:5]))
    first, second = w.completed
    assert (first.base_offset, second.base_offset) == (0, 6)
    assert read_txn_index(first.txn_index) == [AbortedTxn(0, 7, 0, 3, 2)]
    assert read_txn_index(second.txn_index) == [AbortedTxn(0, 9, 5, 8, 9)]  # first offset in segment 1
    open_txns: dict[int, int] = {}
    assert first.txn_index.read_bytes() == build_txn_index(first.log, open_txns=open_txns)
    assert open_txns == {9: 5}
    assert second.txn_index.read_bytes() == build_txn_index(second.log, open_txns=open_txns)
    # Alone, segment 2 cannot know where transaction 9 began: the segment base stands in for it.
    assert read_txn_index(build_txn_index(second.log)) == [AbortedTxn(0, 9, 6, 8, 9)]
    assert check_indexes(tmp_path) == []
    # A segment with only committed transactions gets no .txnindex.
    w = write_partition(
        tmp_path / "c-0", [v2_batch(0, producer_id=1, producer_epoch=0, transactional=True), marker(1, 1, "commit")]
    )
    assert not w.completed[0].txn_index.exists()


def test_write_atomically(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    write_atomically(path, [b"0\n", b"1\n", b"0 0\n"])
    assert path.read_bytes() == b"0\n1\n0 0\n"

    def chunks():
        yield b"half"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_atomically(path, chunks())
    assert path.read_bytes() == b"0\n1\n0 0\n"
    assert listing(tmp_path) == ["leader-epoch-checkpoint"]
    write_atomically(path, b"single")
    assert path.read_bytes() == b"single"


# ----------------------------------------------------------------------------- reading a partition


@pytest.fixture
def partition(tmp_path):
    """Three segments of 16 batches each (offsets 0..95, two records per batch, 115 bytes), indexed every
    100 bytes, i.e. at every batch but the first; batch i (offsets 2i, 2i+1) has max timestamp 1000 + 10i."""
    d = tmp_path / "events-0"
    write_partition(
        d, two_record_batches(0, [1000 + 10 * i for i in range(48)]), segment_bytes=16 * 115, index_interval_bytes=100
    )
    return Partition(d)


@pytest.fixture
def starts(monkeypatch):
    """Every (log file, start position) a segment is read from."""
    calls: list[tuple[str, int]] = []

    def spy(source, **options):
        calls.append((Path(source).name, options.get("start", 0)))
        return read_batches(source, **options)

    monkeypatch.setattr(files, "read_batches", spy)
    return calls


def test_partition_lists_segments_and_ignores_transient_files(partition, tmp_path):
    d = partition.path
    assert (partition.topic, partition.partition) == ("events", 0)
    assert [s.base_offset for s in partition.segments] == [0, 32, 64]
    for name in (
        segment_name(96, ".log.deleted"),
        segment_name(96, ".log.cleaned"),
        segment_name(96, ".log.swap"),
        segment_name(96, ".log.tmp"),
        "leader-epoch-checkpoint",
        "partition.metadata",
    ):
        (d / name).write_bytes(b"junk")
    (d / (segment_name(200, ".log") + "-delete")).mkdir()
    assert [s.base_offset for s in partition.segments] == [0, 32, 64]
    (tmp_path / "events-0.abcdef-delete").mkdir()
    (tmp_path / "orders-10").mkdir()
    (tmp_path / "orders-2").mkdir()
    assert [(p.topic, p.partition) for p in list_partitions(tmp_path)] == [("events", 0), ("orders", 2), ("orders", 10)]


def test_names_that_are_not_kafkas_are_reported_and_never_read(partition, starts):
    """A 123.log, a 21-digit name and non-ASCII digits beside real segments: each holds a readable batch
    (offset 4, inside the real segments' range), yet only the real segments are listed and read."""
    d = partition.path
    expected = [(b.base_offset, b.position) for b in partition.iter_batches()]
    stray = v2_batch(4, (5000,))
    for name in NOT_KAFKA_NAMES[:4]:
        (d / name).write_bytes(stray)
    (d / (ARABIC_INDIC_ZERO * 20 + ".index")).write_bytes(b"")
    assert [s.base_offset for s in partition.segments] == [0, 32, 64]
    assert sorted(partition.skipped) == sorted([*NOT_KAFKA_NAMES[:4], ARABIC_INDIC_ZERO * 20 + ".index"])
    starts.clear()
    assert [(b.base_offset, b.position) for b in partition.iter_batches()] == expected
    assert {name for name, _ in starts} == {segment_name(b, ".log") for b in (0, 32, 64)}
    assert check_indexes(d) == []
    listing = files.list_segments(LocalFS(), d)
    assert listing.segments == partition.segments and listing.skipped == partition.skipped


def test_partition_reads_the_same_through_a_pyarrow_filesystem(partition):
    """Partition works over kcodec.log.fs: the code path of s3://, hdfs:// ... gives the same batches,
    seeks and aborted transactions as local paths."""
    pytest.importorskip("pyarrow")
    remote = Partition(f"file://{partition.path}", fs=ArrowFS("file:///"))
    assert [str(s.log) for s in remote.segments] == [f"file://{s.log}" for s in partition.segments]
    for kwargs in ({}, {"start_offset": 50}, {"start_timestamp": 1205}, {"start_offset": 10, "end_offset": 40}):
        assert [(b.base_offset, b.position) for b in remote.iter_batches(**kwargs)] == [
            (b.base_offset, b.position) for b in partition.iter_batches(**kwargs)
        ]
    assert remote.position_for_offset(50)[1] == partition.position_for_offset(50)[1] > 0
    assert remote.next_offset() == partition.next_offset() == 96


def test_aborted_transactions_from_index_files_or_markers(tmp_path):
    w = write_partition(
        tmp_path / "t-0",
        [
            v2_batch(0, producer_id=7, producer_epoch=0, transactional=True),
            v2_batch(1, producer_id=8, producer_epoch=0, transactional=True),
            marker(2, 7, "abort"),
            marker(3, 8, "commit"),
            v2_batch(4),
        ],
    )
    segs = Partition(w.directory).segments
    assert aborted_transactions(segs) == aborted_transactions(segs, derive=True) == [(7, 0, 2)]
    segs[0].txn_index.unlink()
    segs[0].index.unlink()  # a bare .log: answered from the markers
    assert aborted_transactions(Partition(w.directory).segments) == [(7, 0, 2)]


def test_log_holds_no_numeric_header_offsets():
    """Header positions, masks and sizes are the generated layouts' constants; log/ (and Spark's planning,
    which reads segments through it) never retype them."""
    import kcodec.log
    from kcodec.generated import legacy_log_entry, record_batch

    facts = {
        v
        for m in (record_batch, legacy_log_entry)
        for k, v in vars(m).items()
        if k.isupper() and type(v) is int and ("_OFFSET_" in k or k.endswith(("_MASK", "OVERHEAD")))
    }
    facts.discard(0)
    sources = sorted(Path(kcodec.log.__file__).parent.glob("*.py"))
    sources.append(Path(kcodec.log.__file__).parents[1] / "spark" / "planning.py")
    found = []
    for path in sources:
        tree = ast.parse(path.read_text())
        keyword_values = {id(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword)}
        found += [
            f"{path.name}:{n.lineno}: {n.value}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant)
            and type(n.value) is int
            and n.value in facts
            and id(n) not in keyword_values
            and not _is_divisor(tree, n)
        ]
    assert found == []


def _is_divisor(tree, node) -> bool:
    """``x // 8``: a fraction, not a position."""
    return any(isinstance(b, ast.BinOp) and b.right is node and isinstance(b.op, ast.FloorDiv) for b in ast.walk(tree))


def test_seek_by_offset_reads_from_the_index_position(partition, starts):
    everything = list(partition.iter_batches())
    assert len(everything) == 48
    for target in (0, 1, 37, 38, 50, 95):
        starts.clear()
        got = list(partition.iter_batches(start_offset=target))
        expected = [b for b in everything if b.last_offset >= target]
        assert [(b.base_offset, b.position) for b in got] == [(b.base_offset, b.position) for b in expected]
        assert got[0].base_offset <= target <= got[0].last_offset
        segment, position = partition.position_for_offset(target)
        assert segment.base_offset <= target
        # Nothing before the seek point is read: no earlier segment, no earlier byte.
        assert all(name >= segment.log.name for name, _ in starts)
        assert all(start >= position for name, start in starts if name == segment.log.name)
    # Offset 50 is in segment 32 (batches at 0, 115, ...; the one holding 50 is the 10th, at 1035); its
    # index holds (35, 115), (37, 230), ..., (49, 920), (51, 1035): the largest entry <= 50 is (49, 920).
    assert partition.position_for_offset(50)[1] == 920
    assert partition.position_for_offset(64)[0].base_offset == 64
    assert [b.base_offset for b in partition.iter_batches(start_offset=40, end_offset=46)] == [40, 42, 44]


def test_seek_by_timestamp_uses_the_time_index(partition, starts):
    everything = list(partition.iter_batches())
    for target in (0, 1000, 1005, 1150, 1155, 1340, 1470):
        starts.clear()
        got = list(partition.iter_batches(start_timestamp=target))
        first = next(i for i, b in enumerate(everything) if b.max_timestamp >= target)
        assert [b.base_offset for b in got] == [b.base_offset for b in everything[first:]]
    assert list(partition.iter_batches(start_timestamp=1471)) == []
    # 1155: batch 16 (1160, offsets 32-33) is the first at or above it, in segment 32 at position 0.
    # Batch 15 (1150) ends segment 0, whose final time entry (1150, 31) is below the target: skipped.
    segment, position = partition.position_for_timestamp(1155)
    assert (segment.base_offset, position) == (32, 0)
    # 1205: segment 32's time entries are (1170, 35), (1180, 37), ...; the last below 1205 is
    # (1200, 41), whose batch starts at 460. The first entry >= 1205, (1210, 43), would skip batch 42.
    starts.clear()
    got = list(partition.iter_batches(start_timestamp=1205))
    assert partition.position_for_timestamp(1205)[1] == 460
    assert (got[0].base_offset, got[0].max_timestamp) == (42, 1210)
    assert all(name >= segment_name(32, ".log") for name, _ in starts)
    # Both starts: the later one wins.
    assert next(partition.iter_batches(start_offset=60, start_timestamp=1205)).base_offset == 60
    assert next(partition.iter_batches(start_offset=10, start_timestamp=1205)).base_offset == 42


def test_seek_falls_back_to_scanning_without_usable_indexes(partition, starts):
    expected = [b.base_offset for b in partition.iter_batches(start_offset=50)]
    by_time = [b.base_offset for b in partition.iter_batches(start_timestamp=1205)]
    for s in partition.segments:
        s.index.unlink()
    s32 = partition.segments[1]
    s32.time_index.write_bytes(s32.time_index.read_bytes() + b"\x00" * 24)  # crash leftovers: insane
    starts.clear()
    assert [b.base_offset for b in partition.iter_batches(start_offset=50)] == expected
    assert starts[0] == (segment_name(32, ".log"), 0)
    assert partition.position_for_offset(50)[1] == 0
    assert [b.base_offset for b in partition.iter_batches(start_timestamp=1205)] == by_time
    assert partition.position_for_timestamp(1205) == (s32, 0)
    # A stale index (pointing at a batch that does not end at the entry's offset) is not trusted.
    s64 = partition.segments[2]
    s64.index.write_bytes(encode_offset_index([(71, 230)], 64))  # really (69, 230)
    assert partition.position_for_offset(72)[1] == 0
    assert next(partition.iter_batches(start_offset=72)).base_offset == 72


# ----------------------------------------------------------------------------- checking


def test_check_indexes_reports_mismatches(partition):
    assert check_indexes(partition.path) == []
    s0, s32, _ = partition.segments
    assert check_indexes(s0.index) == [] and check_indexes(s32.log) == []

    s0.index.write_bytes(encode_offset_index([(3, 115), (6, 230), (9, 5000)], 0))  # 5000: past the end
    kinds = [(p.kind, p.index_value, p.log_value) for p in check_indexes(s0.log)]
    assert ("offset_mismatch", 6, 5) in kinds and ("bad_position", 9, None) in kinds
    assert [p.message for p in check_indexes(s0.log) if p.kind == "offset_mismatch"] == [
        "Index offset: 6, log offset: 5"
    ]

    t = codec("time_index_entry", 0)
    s32.time_index.write_bytes(
        b"".join(
            t.build({"timestamp": ts, "relative_offset": rel})
            for ts, rel in [(1170, 3), (1160, 5), (1190, 7), (1200, 8)]
        )
    )
    found = {(p.kind, p.index_value, p.log_value) for p in check_indexes(s32.time_index)}
    assert ("timestamp_mismatch", 1160, 1180) in found  # offset 37's batch has max timestamp 1180
    assert ("timestamp_order", 1160, 1170) in found
    assert ("offset_not_found", 40, 41) in found  # offset 40 is not a batch last offset
    assert len(found) == 3  # 1200 >= 1170: the sanity check passes


def test_check_indexes_sanity_and_txn_problems(tmp_path):
    w = write_partition(
        tmp_path, [v2_batch(0, producer_id=7, producer_epoch=0, transactional=True), marker(1, 7, "abort"), v2_batch(2)]
    )
    s = w.completed[0]
    assert check_indexes(tmp_path) == []
    s.txn_index.write_bytes(encode_txn_index([AbortedTxn(0, 7, 0, 1, 2), AbortedTxn(0, 8, 0, 2, 3)]))
    assert [(p.kind, p.index_value) for p in check_indexes(tmp_path)] == [("txn_marker_missing", 2)]
    s.index.write_bytes(b"\x00" * 9)
    problems = check_indexes(s.index)
    assert problems[0].kind == "sanity" and "multiple of 8" in problems[0].message
