"""kcodec compact: one rule of Kafka's log cleaner per test (the scenarios of Kafka's LogCleanerTest, as
facts), on partitions written by tests/helpers/compact_logs.py, then --out and --in-place."""

from __future__ import annotations

import json
import os

import pytest

from kcodec.cli import main
from kcodec.errors import CrcMismatchError, KcodecError
from kcodec.log.index import read_txn_index
from kcodec.log.partition import Partition
from kcodec.records.decode import decode_entry
from kcodec.tools.compact import clean_partition, compact_in_place, compact_rounds, compact_to, plan_partition
from kcodec.tools.compact.clean import group_segments
from tests.helpers.compact_logs import DAY, NOW, T0, batches, config, data, marker, records, write_partition


def _clean(part, **settings):
    key = settings.pop("key", None)
    first_dirty = settings.pop("first_dirty_offset", None)
    return clean_partition(plan_partition(part, config(**settings), first_dirty_offset=first_dirty), key=key)


def _out(tmp_path, part, name="out", **settings):
    key = settings.pop("key", None)
    result = compact_to(part, tmp_path / name, config(**settings), key=key)
    return result, tmp_path / name / os.path.basename(part.path)


# ----------------------------------------------------------------------------- what is kept


def test_latest_offset_per_key_wins_with_original_offsets(tmp_path):
    part = write_partition(
        tmp_path / "t-0",
        [
            [data(0, [(b"a", b"1"), (b"b", b"1")]), data(2, [(b"a", b"2")]), data(3, [(b"c", b"1")])],
            [data(4, [(b"b", b"2")])],
            [data(5, [(b"a", b"3")])],  # the active segment
        ],
    )
    result, out = _out(tmp_path, part)
    assert records(out) == [(2, b"a", b"2"), (3, b"c", b"1"), (4, b"b", b"2"), (5, b"a", b"3")]
    assert result.removed["superseded"] == 2
    # the active segment's a=3 is not in the map: a=2 stays; the cleaned batches keep their base offsets
    assert [b.base_offset for b in batches(out)] == [2, 3, 4, 5]
    assert result.end_offset == 5 and result.plan.uncleanable_reason == "the active segment"


def test_a_batch_with_nothing_removed_is_kept_byte_for_byte_and_others_rebuilt(tmp_path):
    keep = data(2, [(b"x", b"1"), (b"y", b"1")], pid=7, epoch=0, seq=0)
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"x", b"0"), (b"z", b"0")]), keep], [data(4, [(b"q", b"")])]])
    result, out = _out(tmp_path, part)
    log = (out / "00000000000000000000.log").read_bytes()
    assert keep in log
    assert result.batches_kept_whole == 1 and result.batches_rewritten == 1
    rebuilt = batches(out)[0]
    # the rebuilt batch keeps its base offset and its last offset (the sequence range), one record left
    assert (rebuilt.base_offset, rebuilt.last_offset, [r.key for r in rebuilt.records]) == (0, 1, [b"z"])


def test_null_key_records_are_dropped(tmp_path):
    part = write_partition(tmp_path / "t-0", [[data(0, [(None, b"n"), (b"k", b"v")])], [data(2, [(b"k", b"w")])]])
    result = _clean(part)
    assert result.removed["null_key"] == 1 and result.records_removed == 1


def test_the_active_segment_is_never_cleaned(tmp_path):
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"a", b"1"), (b"a", b"2"), (b"a", b"3")])]])
    result = _clean(part)
    assert result.records_removed == 0 and result.segments_before == 0
    assert result.plan.first_uncleanable_offset == 0


def test_min_compaction_lag_stops_at_the_first_young_segment(tmp_path):
    part = write_partition(
        tmp_path / "t-0",
        [
            [data(0, [(b"a", b"1")], ts=T0)],
            [data(1, [(b"a", b"2")], ts=NOW - 1000)],  # younger than the lag
            [data(2, [(b"a", b"3")], ts=NOW)],
        ],
    )
    result = _clean(part, min_compaction_lag_ms=60_000)
    assert result.plan.first_uncleanable_offset == 1
    assert "min.compaction.lag.ms" in result.plan.uncleanable_reason
    assert result.records_removed == 0  # a=1 is the latest in the range [0, 1)


def test_the_range_stops_at_the_first_unstable_offset(tmp_path):
    part = write_partition(
        tmp_path / "t-0",
        [
            [data(0, [(b"a", b"1")]), data(1, [(b"a", b"2")], pid=5, epoch=0, seq=0, txn=True)],  # open
            [data(2, [(b"a", b"3")])],
            [data(3, [(b"z", b"z")])],
        ],
    )
    result = _clean(part)
    assert result.plan.last_stable_offset == 1
    assert result.plan.first_uncleanable_offset == 1 and "open transaction" in result.plan.uncleanable_reason


def test_dirty_ratio_and_first_dirty_offset_from_the_cleaner_checkpoint(tmp_path):
    part = write_partition(
        tmp_path / "t-0", [[data(0, [(b"a", b"1")])], [data(1, [(b"a", b"2")])], [data(2, [(b"a", b"3")])]]
    )
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\nt 0 1\n")
    plan = plan_partition(part, config())
    sizes = [s.size for s in plan.segments]
    assert plan.first_dirty_offset == 1 and plan.first_dirty_from == "cleaner-offset-checkpoint"
    assert plan.dirty_ratio == pytest.approx(sizes[1] / (sizes[0] + sizes[1]))
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\nt 0 99\n")  # past the log end: the log start
    assert plan_partition(part, config()).first_dirty_offset == 0


# ----------------------------------------------------------------------------- tombstones


def test_v2_tombstone_gets_its_horizon_on_the_first_clean_and_goes_after_it(tmp_path):
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"a", b"1"), (b"a", None)])], [data(2, [(b"b", b"1")])]])
    first, out = _out(tmp_path, part, "r1")
    (b,) = [b for b in batches(out) if b.base_offset == 0]
    assert b.has_delete_horizon and b.delete_horizon_ms == NOW + DAY
    assert [r.value for r in b.records] == [None]
    assert first.tombstones[0].removable_at_ms == NOW + DAY and first.tombstones[0].rule == "horizon set by this clean"
    again = _clean(Partition(out), now_ms=NOW + DAY - 1, first_dirty_offset=0)
    assert again.removed["tombstone"] == 0 and again.tombstones[0].rule == "batch horizon"
    gone = _clean(Partition(out), now_ms=NOW + DAY, first_dirty_offset=0)
    assert gone.removed["tombstone"] == 1


def test_before_kafka_3_1_tombstones_go_by_segment_mtime_and_no_horizon_is_written(tmp_path):
    segs = [[data(0, [(b"a", None)])], [data(1, [(b"b", b"1")])], [data(2, [(b"c", b"1")])], [data(3, [])]]
    mtimes = [T0, T0 + 2 * DAY, T0 + 3 * DAY, T0 + 3 * DAY]
    part = write_partition(tmp_path / "t-0", segs, mtimes)
    # first dirty at 2: the last clean segment (base 1) was modified at T0 + 2 days, the horizon is T0 + 1 day,
    # and the tombstone's segment (modified at T0) is older: it goes
    result = _clean(part, release=(3, 0), first_dirty_offset=2)
    assert result.removed["tombstone"] == 1
    kept = _clean(part, release=(3, 0), first_dirty_offset=0)  # no clean segment: horizon 0, kept
    assert kept.removed["tombstone"] == 0 and kept.tombstones[0].rule == "segment mtime"
    _, out = _out(tmp_path, part, release=(3, 0))
    assert not any(b.has_delete_horizon for b in batches(out))


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_tombstones_go_by_segment_mtime(tmp_path, magic):
    segs = [
        [data(0, [(b"a", None)], magic=magic)],
        [data(1, [(b"b", b"1")], magic=magic)],
        [data(2, [(b"c", b"1")], magic=magic)],
        [data(3, [(b"d", b"")])],
    ]
    part = write_partition(tmp_path / "t-0", segs, [T0, T0 + 2 * DAY, T0 + 3 * DAY, T0 + 3 * DAY])
    assert _clean(part, first_dirty_offset=2).removed["tombstone"] == 1
    young = write_partition(tmp_path / "u-0", segs, [T0 + 2 * DAY, T0 + 2 * DAY, T0 + 3 * DAY, T0 + 3 * DAY])
    assert _clean(young, first_dirty_offset=2).removed["tombstone"] == 0


# ----------------------------------------------------------------------------- transactions


def test_aborted_data_goes_and_its_marker_stays_until_the_data_is_gone_and_its_horizon_passed(tmp_path):
    segs = [
        [
            data(0, [(b"a", b"1")], pid=9, epoch=0, seq=0, txn=True),
            marker("abort", 1, 9),
            data(2, [(b"a", b"2")], pid=8, epoch=0, seq=0, txn=True),
            marker("commit", 3, 8),
        ],
        [data(4, [(b"z", b"1")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    r1, out1 = _out(tmp_path, part, "r1", producer_id_expiration_ms=1)
    assert r1.removed["aborted"] == 1 and r1.removed["marker"] == 0
    assert records(out1) == [(2, b"a", b"2"), (4, b"z", b"1")]
    # the aborted transaction's data was met in the round: its marker stays and the cleaned .txnindex lists it
    (txn,) = read_txn_index((out1 / "00000000000000000000.txnindex").read_bytes())
    assert (txn.producer_id, txn.first_offset, txn.last_offset) == (9, 0, 1)
    committed = Partition(out1).iter_records(isolation_level="read_committed")
    assert [r.offset for r in committed] == [2, 4]
    # second round: the data is gone, so the markers may go, once a horizon is set (now) and has passed
    (tmp_path / "r1" / "cleaner-offset-checkpoint").unlink()
    r2, out2 = _out(tmp_path, Partition(out1), "r2", producer_id_expiration_ms=1)
    ctl = [b for b in batches(out2) if b.is_control]
    assert r2.removed["marker"] == 0 and ctl and all(b.has_delete_horizon for b in ctl if b.producer_id == 9)
    (tmp_path / "r2" / "cleaner-offset-checkpoint").unlink()
    r3 = _clean(Partition(out2), now_ms=NOW + DAY, producer_id_expiration_ms=1)
    assert r3.removed["marker"] == 1  # the ABORT; the COMMIT's transaction still has its data


def test_an_active_producers_last_batch_is_kept_empty(tmp_path):
    segs = [[data(0, [(b"a", b"1")], pid=3, epoch=1, seq=0), data(1, [(b"a", b"2")])], [data(2, [(b"z", b"")])]]
    part = write_partition(tmp_path / "t-0", segs)
    result, out = _out(tmp_path, part)  # producer 3 wrote an hour ago: active under the default day
    kept = batches(out)[0]
    assert (kept.base_offset, kept.last_offset, kept.records, kept.producer_id, kept.base_sequence) == (0, 0, [], 3, 0)
    assert result.empty_batches_kept == 1 and result.removed["superseded"] == 1
    expired = _clean(part, producer_id_expiration_ms=1000)  # expired producer: the batch goes
    assert expired.empty_batches_kept == 0 and expired.batches_removed == 1


def test_the_last_batch_of_the_round_is_kept_empty(tmp_path):
    segs = [
        [data(0, [(b"a", b"1")]), data(1, [(b"a", b"2")]), data(2, [(b"a", b"3")], ts=T0)],
        [data(3, [(b"a", b"4")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    # the map sees a=3 at offset 2 (the active segment's a=4 is outside): offsets 0 and 1 go, batch 2 stays
    result = _clean(part)
    assert result.removed["superseded"] == 2 and result.empty_batches_kept == 0
    null_last = write_partition(tmp_path / "u-0", [[data(0, [(b"a", b"1")]), data(1, [(None, b"n")])], [data(2, [])]])
    result = _clean(null_last)
    assert result.empty_batches_kept == 1  # batch 1 ends the round: kept without its null-key record


# ----------------------------------------------------------------------------- rounds and groups


def test_segments_are_grouped_by_segment_bytes(tmp_path):
    segs = [[data(i, [(b"k%d" % i, b"x" * 100)])] for i in range(4)] + [[data(4, [(b"z", b"")])]]
    part = write_partition(tmp_path / "t-0", segs)
    plan = plan_partition(part, config())
    size = plan.segments[0].size
    groups = group_segments(plan.segments[:4], 2 * size, 1 << 20, 4)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 1], [2, 3]]
    result, out = _out(tmp_path, part, segment_bytes=2 * size)
    assert (result.segments_before, result.segments_after) == (4, 2)
    assert sorted(p.name for p in out.glob("*.log")) == [
        "00000000000000000000.log",
        "00000000000000000002.log",
        "00000000000000000004.log",
    ]
    # the cleaned segment keeps its last source's mtime (in ms, as Kafka's File.setLastModified)
    assert (
        os.stat(out / "00000000000000000002.log").st_mtime_ns // 10**6
        == os.stat(part.segments[3].log).st_mtime_ns // 10**6
    )


def test_a_full_offset_map_ends_the_round_early_and_the_next_round_continues(tmp_path):
    segs = [[data(0, [(b"a", b"1"), (b"b", b"1")])], [data(2, [(b"a", b"2"), (b"b", b"2")])], [data(4, [])]]
    part = write_partition(tmp_path / "t-0", segs)
    roomy = _clean(part, dedupe_buffer_size=24 * 10)
    assert not roomy.map_full and roomy.removed["superseded"] == 2 and roomy.end_offset == 4
    # three slots at load factor 0.9 take two keys; as in Kafka, a put on a map holding that many ends the
    # round, even for a key already there: the map stops after the first batch
    first = _clean(part, dedupe_buffer_size=24 * 3)
    assert first.map_full and first.map_capacity == 2 and first.end_offset == 2
    assert first.records_removed == 0  # offsets past the map's latest are kept
    second = _clean(part, dedupe_buffer_size=24 * 3, first_dirty_offset=first.end_offset)
    assert not second.map_full and second.removed["superseded"] == 2
    with pytest.raises(KcodecError, match="dedupe-buffer-size"):
        _clean(part, dedupe_buffer_size=24)


def test_key_events_say_what_happens_to_each_record_of_a_key(tmp_path):
    part = write_partition(
        tmp_path / "t-0", [[data(0, [(b"a", b"1"), (b"b", b"1"), (b"a", b"2")])], [data(3, [(b"a", b"3")])]]
    )
    result = _clean(part, key=b"a")
    assert [(e.offset, e.kept, e.reason) for e in result.key_events] == [
        (0, False, "superseded"),
        (2, True, "latest for its key"),
        (3, True, "not in this round's cleaned segments"),
    ]


# ----------------------------------------------------------------------------- damage and writing


def test_a_damaged_batch_in_the_range_is_refused_and_nothing_is_written(tmp_path):
    good = data(1, [(b"b", b"1")])
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"a", b"1")]), good], [data(2, [(b"c", b"")])]])
    log = part.segments[0].log
    raw = bytearray(open(log, "rb").read())
    raw[-1] ^= 0xFF  # the last byte of batch 1's record: its CRC fails
    open(log, "wb").write(bytes(raw))
    with pytest.raises(CrcMismatchError, match="00000000000000000000.log"):
        compact_to(part, tmp_path / "out", config())
    assert not list((tmp_path / "out" / "t-0").glob("*.log"))


def test_out_refuses_a_directory_that_holds_files(tmp_path):
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"a", b"1")])]])
    (tmp_path / "out" / "t-0").mkdir(parents=True)
    (tmp_path / "out" / "t-0" / "x").write_text("")
    with pytest.raises(KcodecError, match="not empty"):
        compact_to(part, tmp_path / "out", config())


def _two_group_partition(path):
    segs = [
        [data(0, [(b"a", b"1"), (b"b", b"1")])],
        [data(2, [(b"a", b"2"), (b"c", None)])],
        [data(4, [(b"b", b"2"), (b"d", b"1")])],
        [data(6, [(b"e", b"")])],
    ]
    return write_partition(path, segs, [T0, T0 + 1, T0 + 2, T0 + 3])


def test_in_place_equals_out_and_moves_the_cleaner_checkpoint(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    part = _two_group_partition(tmp_path / "a" / "t-0")
    other = _two_group_partition(tmp_path / "b" / "t-0")
    _, out = _out(tmp_path, other)
    size = plan_partition(part, config()).segments[0].size
    compact_in_place(part, config(segment_bytes=2 * size))
    compact_to(other, tmp_path / "out2", config(segment_bytes=2 * size))
    assert records(tmp_path / "a" / "t-0") == records(tmp_path / "out2" / "t-0")
    assert (tmp_path / "a" / "cleaner-offset-checkpoint").read_text() == "0\n1\nt 0 6\n"
    names = sorted(p.name for p in (tmp_path / "a" / "t-0").iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted", ".lock"))]
    assert [p.name for p in sorted((tmp_path / "a" / "t-0").glob("*.log"))] == [
        "00000000000000000000.log",
        "00000000000000000004.log",
        "00000000000000000006.log",
    ]
    for seg in Partition(tmp_path / "a" / "t-0").segments:  # every batch whole, CRC valid
        for _, raw in seg.entries(strict=True):
            decode_entry(raw, verify_crc=True)


# ----------------------------------------------------------------------------- the command line


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _sample_dir(tmp_path):
    return write_partition(
        tmp_path / "logs" / "t-0",
        [
            [data(0, [(b"a", b"1"), (b"b", None), (None, b"n")]), data(3, [(b"a", b"2")])],
            [data(4, [(b"z", b"")])],
        ],
    )


def test_cli_dry_run_text_names_reasons_bytes_ratio_and_tombstones(tmp_path, capsys):
    _sample_dir(tmp_path)
    before = sorted(p.name for p in (tmp_path / "logs" / "t-0").iterdir())
    code, out, err = _run(capsys, "compact", tmp_path / "logs" / "t-0", "--now", NOW, "--key", "a")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(
        "t-0: log 0..5, cleanable 0..4 (first dirty from log start; stops at the active segment)"
    )
    assert "dirty ratio 1.00" in lines[0]
    assert "would remove 2 records (1 superseded, 1 null_key)" in out
    assert "tombstone at offset 1 key 'b': removable from 2023-11-15T23:13:20.000Z (horizon set by this clean)" in out
    assert "key 'a': record at offset 0 removed (superseded)" in out
    assert "key 'a': record at offset 3 kept (latest for its key)" in out
    assert sorted(p.name for p in (tmp_path / "logs" / "t-0").iterdir()) == before  # a dry run writes nothing


def test_cli_json_and_out(tmp_path, capsys):
    _sample_dir(tmp_path)
    code, out, _ = _run(capsys, "compact", tmp_path / "logs", "--topic", "t", "--now", NOW, "--json",
                        "--out", tmp_path / "out")  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["mode"] == "out" and doc["removed"]["superseded"] == 1 and doc["removed"]["null_key"] == 1
    assert doc["tombstones"] == [
        {"offset": 1, "key": b"b".hex(), "removableAtMs": NOW + DAY, "rule": "horizon set by this clean"}
    ]
    assert doc["bytesAfter"] < doc["bytesBefore"] and doc["endOffset"] == 4
    assert [r[0] for r in records(tmp_path / "out" / "t-0")] == [1, 3, 4]


def test_cli_usage_errors(tmp_path, capsys):
    _sample_dir(tmp_path)
    code, _, err = _run(capsys, "compact", tmp_path / "logs", "--in-place")
    assert code == 2 and "--topic" in err and len(err.splitlines()) == 1
    code, _, err = _run(capsys, "compact", tmp_path / "nowhere")
    assert code == 2 and "no such directory" in err
    code, _, err = _run(capsys, "compact", tmp_path / "logs" / "t-0", "--out", tmp_path / "logs" / "t-0" / "x")
    assert code == 2


def test_cli_damaged_batch_is_one_line_exit_3(tmp_path, capsys):
    part = _sample_dir(tmp_path)
    log = part.segments[0].log
    raw = bytearray(open(log, "rb").read())
    raw[70] ^= 0xFF
    open(log, "wb").write(bytes(raw))
    code, out, err = _run(capsys, "compact", part.path, "--out", tmp_path / "out")
    assert code == 3 and out == "" and len(err.splitlines()) == 1 and str(log) in err
    assert not list((tmp_path / "out" / "t-0").glob("*.log"))


def test_a_legacy_compressed_wrapper_is_recompressed_with_its_survivors(tmp_path):
    wrapper = data(0, [(b"a", b"1"), (b"b", b"1"), (b"a", b"2")], magic=1, compression="gzip")
    part = write_partition(tmp_path / "t-0", [[wrapper], [data(3, [(b"z", b"")], magic=1)]])
    result, out = _out(tmp_path, part)
    (b,) = [b for b in batches(out) if b.base_offset < 3]
    assert (b.magic, b.compression) == (1, "gzip") and result.batches_rewritten == 1
    assert [(r.offset, r.key, r.value) for r in b.records] == [(1, b"b", b"1"), (2, b"a", b"2")]


def test_a_commit_marker_goes_once_its_data_is_gone_and_its_horizon_passed(tmp_path):
    segs = [
        [data(0, [(b"a", b"1")], pid=8, epoch=0, seq=0, txn=True), marker("commit", 1, 8), data(2, [(b"a", b"2")])],
        [data(3, [(b"z", b"")])],
    ]
    part = write_partition(tmp_path / "t-0", segs)
    settings = {"producer_id_expiration_ms": 1, "first_dirty_offset": 0}
    r1, out1 = _out(tmp_path, part, "r1", producer_id_expiration_ms=1)
    # the data (a=1, superseded) is met in this round: the marker stays, without a horizon
    assert r1.removed == {"superseded": 1} and [b.has_delete_horizon for b in batches(out1) if b.is_control] == [False]
    (tmp_path / "r1" / "cleaner-offset-checkpoint").unlink()  # clean again from the start (no new dirty data)
    r2, out2 = _out(tmp_path, Partition(out1), "r2", producer_id_expiration_ms=1)
    ctl = [b for b in batches(out2) if b.is_control]
    assert r2.removed["marker"] == 0 and ctl[0].delete_horizon_ms == NOW + DAY  # no data left: the horizon is set
    assert _clean(Partition(out2), now_ms=NOW + DAY - 1, **settings).removed["marker"] == 0
    assert _clean(Partition(out2), now_ms=NOW + DAY, **settings).removed["marker"] == 1


def test_a_write_in_progress_at_the_end_of_the_active_segment_is_left_alone(tmp_path):
    part = write_partition(tmp_path / "t-0", [[data(0, [(b"a", b"1")]), data(1, [(b"a", b"2")])], [data(2, [])]])
    active = part.segments[-1].log
    with open(active, "ab") as f:
        f.write(data(3, [(b"b", b"1")])[:30])  # half a batch: a producer's write not finished
    assert _clean(part, key=b"a").removed["superseded"] == 1
    sealed = part.segments[0].log
    with open(sealed, "ab") as f:
        f.write(data(3, [(b"b", b"1")])[:30])  # the same in a sealed segment is damage
    with pytest.raises(KcodecError, match="00000000000000000000.log"):
        _clean(part)


def test_rounds_continue_while_the_offset_map_fills_and_end_where_one_round_would(tmp_path, capsys):
    segs = [
        [data(0, [(b"a", b"1"), (b"b", b"1")]), data(2, [(b"c", b"1"), (b"a", b"2")])],
        [data(4, [(b"b", b"2"), (b"d", b"1")]), data(6, [(b"c", b"2"), (b"e", b"1")])],
        [data(8, [(b"z", b"")])],
    ]
    part = write_partition(tmp_path / "in" / "t-0", segs)
    _, roomy = _out(tmp_path, part, "roomy")
    small = {"dedupe_buffer_size": 24 * 3}  # two keys a round: one batch mapped at a time
    results = list(compact_rounds(part, config(**small), out_log_dir=tmp_path / "small", rounds=10))
    assert [r.map_full for r in results] == [True, True, True, False]
    assert [r.end_offset for r in results] == [2, 4, 6, 8]
    assert records(tmp_path / "small" / "t-0") == records(roomy)
    # a dry run of several rounds cleans a copy: the partition is untouched, the last round says what is left
    before = sorted((p.name, p.stat().st_size) for p in part.segments[0].log.parent.iterdir())
    code, out, _ = _run(
        capsys, "compact", part.path, "--now", NOW, "--dedupe-buffer-size", 72, "--rounds", 10, "--json"
    )
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [d["round"] for d in docs] == [1, 2, 3, 4] and docs[-1]["offsetMap"]["full"] is False
    assert sum(d["recordsRemoved"] for d in docs) == 3
    assert sorted((p.name, p.stat().st_size) for p in part.segments[0].log.parent.iterdir()) == before
