"""The cleaner's column-wise filter (a data batch inside the offset map, no --key: each rule a loop in C)
against its record-by-record rules (``--key`` takes that path for every batch; a key no record has adds
no event), over logs that meet every reason a record goes, both horizons, v0/v1 entries, compressed
batches and a batch past a full offset map's end: the same CleanResult, field for field."""

from __future__ import annotations

import pytest

from kcodec.log.partition import Partition
from kcodec.tools.compact import REASONS, clean_partition, compact_to, plan_partition
from tests.helpers.compact_logs import DAY, NOW, T0, config, data, marker, write_partition

ABSENT = b"\x00no record has this key"


def _both(part, **settings) -> dict:
    first_dirty = settings.pop("first_dirty_offset", None)
    plan = plan_partition(part, config(**settings), first_dirty_offset=first_dirty)
    fast = clean_partition(plan).as_dict()
    by_record = clean_partition(plan, key=ABSENT).as_dict()
    assert fast == by_record
    return fast


def _mixed(offset: int, n: int, keys: int, *, tombstone_every: int = 7, null_every: int = 11):
    return [
        (
            None if i % null_every == null_every - 1 else b"k%d" % ((offset + i) * 5 % keys),
            None if i % tombstone_every == tombstone_every - 1 else b"v%d" % (offset + i),
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("compression", ["none", "gzip", "zstd"])
def test_superseded_null_keys_and_tombstones_in_mixed_batches(tmp_path, compression):
    segs = [
        [data(o, _mixed(o, 40, 23), compression=compression, ts=T0 + o) for o in (0, 40)],
        [data(o, _mixed(o, 40, 23), compression=compression, ts=T0 + o) for o in (80, 120)],
        [data(160, [(b"z", b"1")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    got = _both(part)
    assert got["removed"]["superseded"] and got["removed"]["null_key"] and got["tombstoneCount"]
    # the first clean only sets the horizons (kept); a later clean reads them: past them the tombstones go
    assert _both(part, delete_retention_ms=0)["tombstones"][0]["rule"] == "horizon set by this clean"
    compact_to(part, tmp_path / "out", config())
    again = Partition(tmp_path / "out" / "t-0")
    assert _both(again, now_ms=NOW + DAY, first_dirty_offset=0)["removed"]["tombstone"]
    assert _both(again, now_ms=NOW + DAY - 1, first_dirty_offset=0)["tombstones"]


def test_a_batch_past_the_end_of_a_full_offset_map(tmp_path):
    twice = [(b"a%d" % (i % 10), None if i == 13 else b"1") for i in range(20)]
    straddled = [(b"b%d" % (i % 10), b"2") for i in range(20)]
    segs = [[data(0, twice), data(20, straddled)], [data(40, [(b"z", b"1")])]]
    part = write_partition(tmp_path / "t-0", segs)
    got = _both(part, dedupe_buffer_size=24 * 20)  # 18 keys: the map fills in the second batch and ends before it
    assert got["offsetMap"]["full"] and got["endOffset"] == 20 and got["removed"]["superseded"] == 10


def test_aborted_data_markers_and_empty_batches(tmp_path):
    segs = [
        [
            data(0, [(b"a", b"1"), (b"b", b"1")], pid=9, epoch=0, seq=0, txn=True),
            marker("abort", 2, 9),
            data(3, [(b"a", b"2"), (None, b"n")], pid=8, epoch=0, seq=0, txn=True),
            marker("commit", 5, 8),
            data(6, [(b"a", b"3"), (b"c", None)], pid=3, epoch=1, seq=0),
        ],
        [data(8, [(b"z", b"1")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    got = _both(part, producer_id_expiration_ms=1)
    assert got["removed"]["aborted"] == 2 and got["batches"]["emptyKept"] == 0
    assert _both(part)["removed"]["aborted"] == 2  # producer 3 active: the last batch of each stays
    compact_to(part, tmp_path / "r1", config(producer_id_expiration_ms=1))
    r1 = Partition(tmp_path / "r1" / "t-0")
    compact_to(r1, tmp_path / "r2", config(producer_id_expiration_ms=1, now_ms=NOW + 1), first_dirty_offset=0)
    r2 = Partition(tmp_path / "r2" / "t-0")
    assert _both(r2, now_ms=NOW + 2 * DAY, producer_id_expiration_ms=1, first_dirty_offset=0)["removed"]["marker"]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_legacy_entries_by_segment_mtime(tmp_path, magic, compression):
    segs = [
        [data(0, _mixed(0, 19, 9) + [(b"only", None)], magic=magic, compression=compression)],
        [data(20, _mixed(20, 20, 9), magic=magic, compression=compression)],
        [data(40, _mixed(40, 20, 9), magic=magic, compression=compression)],
        [data(60, [(b"d", b"")])],
    ]
    part = write_partition(tmp_path / "t-0", segs, [T0, T0 + 2 * DAY, T0 + 3 * DAY, T0 + 3 * DAY])
    got = _both(part, first_dirty_offset=40)
    assert got["removed"]["tombstone"] and got["removed"]["superseded"]
    assert _both(part)["tombstones"]


def test_before_kafka_3_1(tmp_path):
    segs = [
        [data(0, _mixed(0, 19, 13) + [(b"only", None)])],
        [data(20, _mixed(20, 20, 13))],
        [data(40, _mixed(40, 20, 13))],
        [data(60, [])],
    ]
    part = write_partition(tmp_path / "t-0", segs, [T0, T0 + 2 * DAY, T0 + 3 * DAY, T0 + 3 * DAY])
    assert _both(part, release=(3, 0), first_dirty_offset=40)["removed"]["tombstone"]
    assert _both(part, release=(3, 0))["tombstones"][0]["rule"] == "segment mtime"


def test_every_reason_is_met(tmp_path):
    """The scenarios above between them meet every reason (a guard against a change that empties one)."""
    segs = [
        [
            data(0, [(b"a", b"1"), (None, b"n"), (b"t", None)], ts=T0),
            data(3, [(b"b", b"1")], pid=9, epoch=0, seq=0, txn=True),
            marker("abort", 4, 9),
            data(5, [(b"a", b"2")]),
        ],
        [data(6, [(b"z", b"1")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    compact_to(part, tmp_path / "r1", config(producer_id_expiration_ms=1))
    r1 = Partition(tmp_path / "r1" / "t-0")
    compact_to(r1, tmp_path / "r2", config(producer_id_expiration_ms=1), first_dirty_offset=0)
    r2 = Partition(tmp_path / "r2" / "t-0")  # the marker's horizon is set: it goes once that passed
    seen = set()
    for settings in ({"producer_id_expiration_ms": 1}, {"producer_id_expiration_ms": 1, "now_ms": NOW + 2 * DAY}):
        for p in (part, r1, r2):
            got = _both(p, first_dirty_offset=0, **settings)
            seen |= {reason for reason, n in got["removed"].items() if n}
    assert seen == set(REASONS)


def test_a_wide_offset_gap_in_the_mapped_range(tmp_path):
    """Over a gap of millions of offsets the filter looks keys up instead of marking every offset."""
    segs = [[data(0, _mixed(0, 30, 11)), data(3_000_000, _mixed(30, 30, 11))], [data(3_000_030, [(b"z", b"1")])]]
    part = write_partition(tmp_path / "t-0", segs)
    got = _both(part)
    assert got["removed"]["superseded"] and got["removed"]["null_key"]


def test_a_range_that_ends_inside_a_segment_at_an_open_transaction(tmp_path):
    """Records of the range's last segment past its end are in the map (as before): the ones before them
    with the same key are superseded by either path."""
    segs = [
        [data(0, _mixed(0, 30, 7)), data(30, _mixed(30, 5, 7), pid=5, epoch=0, seq=0, txn=True)],  # open
        [data(35, _mixed(35, 10, 7))],
        [data(45, [(b"z", b"z")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    got = _both(part)
    assert got["firstUncleanableOffset"] == 30 and got["removed"]["superseded"]
