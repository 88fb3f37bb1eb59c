"""Damage handling beyond Kafka's readers: ``skip_corrupt`` resynchronises at the next whole batch whose
CRC holds and reports every skipped byte range with the reason (nothing readable is lost);
``kcodec verify --recover OUT`` keeps the longest valid prefix, atomically, as Kafka's log recovery does;
``kcodec dump --skip-corrupt`` prints the skipped ranges between the batches around them."""

from __future__ import annotations

import io
import json
import struct

import pytest

from kcodec.cli import main
from kcodec.records.reader import read_batches
from kcodec.records.resync import SkippedRange, entry_is_valid, find_next_entry
from kcodec.tools.verify import recover, valid_prefix, verify_source
from tests.helpers.batches import ENTRIES, LOG, STARTS, V1_ENTRY, V2_BATCH, damaged


def tiles(data: bytes, reader, batches) -> bool:
    pieces = sorted(
        [(b.position, b.position + b.size) for b in batches]
        + [(s.start, s.end) for s in reader.skipped]
        + (
            [(reader.partial_tail.position, reader.partial_tail.position + reader.partial_tail.size)]
            if reader.partial_tail
            else []
        )
    )
    pos = 0
    for a, z in pieces:
        if a != pos:
            return False
        pos = z
    return pos == len(data)


# ---------------------------------------------------------------------------- finding the next batch


def test_every_entry_is_found_where_it_starts():
    for start in STARTS:
        assert find_next_entry(LOG, start) == start
        assert entry_is_valid(LOG, start, len(LOG)) == len(ENTRIES[STARTS.index(start)])
    assert find_next_entry(LOG, STARTS[1] + 1) == STARTS[2]
    assert find_next_entry(LOG, STARTS[-1] + 1) is None
    assert find_next_entry(LOG, 0, before=0) is None


def test_a_crc_failure_is_not_a_resync_point():
    assert find_next_entry(damaged(1, 30), STARTS[1]) == STARTS[2]  # a value byte: CRC fails


def test_zeros_cost_no_candidates():
    assert find_next_entry(bytes(1 << 20) + V2_BATCH, 0) == 1 << 20


# ---------------------------------------------------------------------------- skip_corrupt


@pytest.mark.parametrize(
    "case",
    [
        ("size lie, huge", 1, 8, 0x7F),
        ("size lie, too small", 2, 11, 0x05),
        ("magic", 0, 16, 0x09),
        ("crc", 3, 40, None),
        ("records count", 4, 60, 0x09),
        ("record length varint", 4, 61, 0xFF),
        ("codec bits", 4, 22, 0x07),
    ],
    ids=lambda c: c[0],
)
def test_skip_corrupt_reads_every_intact_batch(case):
    _, i, offset, value = case
    data = damaged(i, offset, value)
    reader = read_batches(data, skip_corrupt=True)
    batches = list(reader)
    got = [b.position for b in batches]
    assert got == [p for k, p in enumerate(STARTS) if k != i]
    assert len(reader.skipped) == 1
    s = reader.skipped[0]
    assert (s.start, s.end) == (STARTS[i], STARTS[i + 1])
    assert s.reason and s.kind in ("length", "magic", "crc", "record_count", "varint", "compression", "truncated")
    assert str(s).startswith(f"skipped bytes {s.start}..{s.end} ({s.size} bytes): ")
    assert tiles(data, reader, batches)


def test_without_skip_corrupt_the_first_damage_still_raises():
    with pytest.raises(Exception) as info:
        list(read_batches(damaged(3, 40)))
    assert info.value.position == STARTS[3] + 17


def test_crc_failures_are_kept_when_crcs_are_not_verified():
    reader = read_batches(damaged(3, 40), skip_corrupt=True, verify_crc=False)
    batches = list(reader)
    assert [b.position for b in batches] == STARTS and not reader.skipped
    assert [b.crc_valid for b in batches] == [True, True, True, False, True, True]


def test_a_batch_that_swallows_the_next_ones_is_split_at_them():
    # a v1 message whose size and value length both grew by the next entry's size: it decodes (with a bad CRC)
    grown = bytearray(ENTRIES[2])
    extra = len(ENTRIES[3])
    struct.pack_into(">i", grown, 8, struct.unpack_from(">i", grown, 8)[0] + extra)
    struct.pack_into(">i", grown, len(grown) - 9, 5 + extra)
    data = b"".join(ENTRIES[:2]) + bytes(grown) + b"".join(ENTRIES[3:])
    lenient = read_batches(data, verify_crc=False)
    assert STARTS[3] not in [b.position for b in lenient]  # swallowed
    reader = read_batches(data, skip_corrupt=True, verify_crc=False)
    assert [b.position for b in reader] == [p for k, p in enumerate(STARTS) if k != 2]
    assert "valid batch starts inside it" in reader.skipped[0].reason


def test_without_resync_a_damaged_entry_is_skipped_alone_and_broken_framing_ends_the_input():
    # Spark's onCorrupt=skip: the entry's own bytes are bad -> that entry only
    reader = read_batches(damaged(3, 40), skip_corrupt=True, resync=False)
    assert [b.position for b in reader] == [p for k, p in enumerate(STARTS) if k != 3]
    assert [(s.start, s.end, s.kind, s.rest) for s in reader.skipped] == [(STARTS[3], STARTS[4], "crc", False)]
    assert "Record is corrupt (stored crc = " in reader.skipped[0].reason
    # an impossible size -> nothing after it is read, even though valid batches follow
    data = bytearray(LOG)
    struct.pack_into(">i", data, STARTS[2] + 8, 5)
    reader = read_batches(bytes(data), skip_corrupt=True, resync=False)
    assert [b.position for b in reader] == STARTS[:2] and reader.partial_tail is None
    assert [(s.start, s.end, s.kind, s.rest) for s in reader.skipped] == [(STARTS[2], len(LOG), "length", True)]
    # an entry cut short is a partial tail, not a skipped range
    reader = read_batches(LOG[:-7], skip_corrupt=True, resync=False)
    assert [b.position for b in reader] == STARTS[:-1] and not reader.skipped
    assert (reader.partial_tail.position, reader.partial_tail.size) == (STARTS[-1], len(ENTRIES[-1]) - 7)


def test_partial_tail_and_preallocated_zeros():
    data = LOG + V2_BATCH[:30]
    reader = read_batches(data, skip_corrupt=True)
    assert [b.position for b in reader] == STARTS and not reader.skipped
    assert (reader.partial_tail.position, reader.partial_tail.size) == (len(LOG), 30)
    zeros = LOG + bytes(4096)
    reader = read_batches(zeros, skip_corrupt=True)
    batches = list(reader)
    assert [s.kind for s in reader.skipped] == ["length"] and reader.skipped[0].end == len(zeros)
    assert "Record size 0 is less than the minimum record overhead (14)" in reader.skipped[0].reason
    assert tiles(zeros, reader, batches)


def test_garbage_between_batches_and_on_skip():
    junk = b"\x00\x01\x02garbage" * 7
    data = V2_BATCH + junk + V1_ENTRY + junk
    seen = []
    reader = read_batches(data, skip_corrupt=True, on_skip=seen.append)
    assert [b.position for b in reader] == [0, 76 + len(junk)]
    assert seen == reader.skipped and len(seen) == 2
    assert all(isinstance(s, SkippedRange) for s in seen)
    assert seen[1].end == len(data)


def test_streams_files_and_start(tmp_path):
    data = damaged(1, 8, 0x7F)
    want = [p for k, p in enumerate(STARTS) if k != 1]
    assert [b.position for b in read_batches(io.BytesIO(data), skip_corrupt=True)] == want
    path = tmp_path / "s.log"
    path.write_bytes(data)
    assert [b.position for b in read_batches(path, skip_corrupt=True)] == want
    assert [b.position for b in read_batches(path, skip_corrupt=True, start=STARTS[2])] == want[1:]
    stream = io.BytesIO(data[STARTS[2] :])
    assert [b.position for b in read_batches(stream, skip_corrupt=True, start=STARTS[2])] == want[1:]


# ---------------------------------------------------------------------------- verify and recover


def test_verify_reports_every_damaged_range():
    data = damaged(1, 8, 0x7F)
    data = data[: STARTS[4] + 20] + b"\xff" + data[STARTS[4] + 21 :]
    report = verify_source(data, "x")
    rules = [p.rule for p in report.problems]
    assert len(report.problems) >= 2
    assert any("skipped bytes" in r and f"{STARTS[1]}..{STARTS[2]}" in r for r in rules)
    assert report.batches == len(ENTRIES) - 1


def test_valid_prefix_stops_at_the_first_invalid_batch():
    assert valid_prefix(LOG) == (len(ENTRIES), len(LOG), None)
    batches, kept, reason = valid_prefix(damaged(3, 40))
    assert (batches, kept) == (3, STARTS[3]) and "Record is corrupt" in reason


def test_recover_keeps_the_valid_prefix_atomically(tmp_path):
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(damaged(3, 40) + V2_BATCH[:10])
    out = tmp_path / "recovered.log"
    report = recover(src, out)
    assert out.read_bytes() == LOG[: STARTS[3]]
    assert (report.kept_batches, report.kept_bytes) == (3, STARTS[3])
    assert report.dropped_bytes == len(LOG) + 10 - STARTS[3]
    assert (report.damaged_ranges, report.readable_dropped, report.partial_tail) == (1, 2, 10)
    assert report.dropped_batches == 3
    text = str(report)
    assert f"kept 3 batches ({STARTS[3]} bytes)" in text
    assert f"dropped 3 batches and {report.dropped_bytes} bytes from byte {STARTS[3]}" in text
    assert "1 damaged range, 2 valid batches after the damage, a partial batch of 10 bytes at the end" in text
    assert "first problem: Record is corrupt" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000000.log", "recovered.log"]


def test_recover_in_place_and_when_all_is_valid(tmp_path):
    src = tmp_path / "a.log"
    src.write_bytes(LOG + b"\x00" * 5)
    report = recover(src, src)
    assert src.read_bytes() == LOG and report.dropped_bytes == 5 and report.dropped_batches == 0
    report = recover(src, src)
    assert str(report).endswith("dropped nothing") and src.read_bytes() == LOG


def test_cli_verify_recover(tmp_path, capsys):
    src = tmp_path / "seg.log"
    src.write_bytes(damaged(1, 8, 0x7F))
    out = tmp_path / "fixed.log"
    code = main(["verify", str(src), "--recover", str(out)])
    stdout = capsys.readouterr().out
    assert code == 1
    last = stdout.strip().splitlines()[-1]
    assert last.startswith(f"{src}: kept 1 batch ({STARTS[1]} bytes) in {out}; dropped 5 batches and ")
    assert last.endswith(
        f"first problem: the entry at byte {STARTS[1]} claims more bytes than the "
        f"{len(LOG) - STARTS[1]} left, but a valid batch starts at byte {STARTS[2]}"
    )
    assert out.read_bytes() == LOG[: STARTS[1]]
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(src), str(out), "--recover", str(out)]) == 2


def test_cli_dump_skip_corrupt(tmp_path, capsys):
    src = tmp_path / "seg.log"
    src.write_bytes(damaged(1, 8, 0x7F))
    code = main(["dump", str(src)])
    out, err = capsys.readouterr()
    assert code == 0 and out.strip().endswith(f"Found {len(LOG) - STARTS[1]} invalid bytes at the end of seg.log")
    assert f"a valid batch starts at byte {STARTS[2]}: --skip-corrupt reads on" in err
    code = main(["dump", str(src), "--skip-corrupt"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 1
    skip = [line for line in lines if line.startswith("Skipped")]
    assert skip == [
        f"Skipped {STARTS[2] - STARTS[1]} corrupt bytes at position {STARTS[1]}..{STARTS[2]}: "
        f"size says the entry takes {0x7F000000 + 22 + 12} bytes, past the end of the input "
        f"({len(LOG) - STARTS[1]} bytes left); a valid batch starts at byte {STARTS[2]} "
        f"(at byte {STARTS[1] + 8}, batch offset 0, field size)"
    ]
    assert lines.index(skip[0]) == 2  # between the first batch and the next
    assert sum(1 for line in lines if "position:" in line) == len(ENTRIES) - 1
    assert "skipped 1 damaged range(s)" in err
    code = main(["dump", "--json", str(src), "--skip-corrupt"])
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["position"] for o in objs] == STARTS
    assert objs[1]["skipped"] and objs[1]["kind"] == "length" and objs[1]["size"] == STARTS[2] - STARTS[1]


def test_the_skipped_ranges_past_the_bound_are_counted():
    from kcodec.records.reader import MAX_KEPT_RANGES

    bad = V1_ENTRY[:12] + bytes([V1_ENTRY[12] ^ 0xFF]) + V1_ENTRY[13:]  # CRC wrong, framing sound
    data = bad * (MAX_KEPT_RANGES + 3) + V2_BATCH
    seen = []
    reader = read_batches(data, skip_corrupt=True, resync=False, on_skip=seen.append)
    assert [b.position for b in reader] == [len(data) - len(V2_BATCH)]
    assert len(seen) == MAX_KEPT_RANGES + 3 and reader.skipped == seen[:MAX_KEPT_RANGES]
    assert (reader.more_skipped, reader.more_skipped_bytes) == (3, 3 * len(bad))
