"""A Kafka 0.7 partition directory (kcodec.log.kafka07): segments named by the byte offset of their
first byte, read in order with byte offsets; gaps and torn tails reported as 0.7 would meet them."""

from __future__ import annotations

from pathlib import Path

from kcodec.log.kafka07 import Kafka07Partition, is_kafka07_partition_dir, is_kafka07_segment, kafka07_segments
from kcodec.records.kafka07 import encode_kafka07


def _segment(directory: Path, base: int, data: bytes) -> int:
    (directory / f"{base:020d}.kafka").write_bytes(data)
    return base + len(data)


def test_segments_continue_at_the_byte_offset_where_the_last_ended(tmp_path: Path) -> None:
    part = tmp_path / "clicks-0"
    part.mkdir()
    first = encode_kafka07([b"a", b"b"]) + encode_kafka07([b"c", b"d"], compression="gzip")
    nxt = _segment(part, 0, first)
    _segment(part, nxt, encode_kafka07([b"e"]))
    (part / "notes.txt").write_text("not a segment")
    assert is_kafka07_partition_dir(part) and not is_kafka07_segment(part / "notes.txt")
    assert [s.base_offset for s in kafka07_segments(part)] == [0, nxt]
    log = Kafka07Partition(part)
    messages = list(log.iter_messages())
    assert [m.payload for m in messages] == [b"a", b"b", b"c", b"d", b"e"]
    assert [m.offset for m in messages] == [0, 11, 22, 22, nxt]
    assert (log.topic, log.partition, log.problems, log.tail) == ("clicks", 0, [], None)
    assert [m.payload for m in log.iter_messages(start_offset=22)] == [b"c", b"d", b"e"]


def test_a_gap_and_an_early_torn_tail_are_problems_the_last_tail_is_dropped(tmp_path: Path) -> None:
    part = tmp_path / "t-1"
    part.mkdir()
    one = encode_kafka07([b"x"])
    _segment(part, 0, one + one[:3])
    _segment(part, 100, one + one[:5])
    log = Kafka07Partition(part)
    assert len(list(log.iter_messages())) == 2
    assert (
        "00000000000000000100.kafka starts at byte offset 100, but 00000000000000000000.kafka ends at 14"
        in (log.problems[0])
    )
    assert "torn tail at byte 11" in log.problems[1]
    assert log.tail is not None and log.tail[1].position == 11 and log.tail[0].base_offset == 100
