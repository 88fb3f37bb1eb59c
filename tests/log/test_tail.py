"""kcodec.log.tail: where a partition directory a broker is writing ends now."""

from __future__ import annotations

from pathlib import Path

from kcodec.log.partition import Partition
from kcodec.log.tail import PartitionTail
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch, encode_control_batch


def _batch(first: int, n: int, **producer) -> bytes:
    return encode_batch([{"value": b"v%d" % o, "timestamp": 1000 + o} for o in range(first, first + n)], **producer)


def _txn(first: int, n: int, pid: int) -> bytes:
    return encode_batch(
        [{"value": b"t", "timestamp": 1000} for _ in range(n)],
        base_offset=first,
        producer_id=pid,
        producer_epoch=0,
        base_sequence=0,
        transactional=True,
    )


def _active(directory) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def _append(directory, data: bytes) -> None:
    with open(_active(directory), "ab") as f:
        f.write(data)


def test_a_partial_batch_at_the_tail_is_not_counted_until_complete(tmp_path):
    d = tmp_path / "orders-0"
    with SegmentWriter(d, index_interval_bytes=0) as w:
        w.append(b"".join(encode_batch([{"value": b"v", "timestamp": 1}] * 5, base_offset=o) for o in (0, 5)))
    index = sorted(d.glob("*.index"))[-1]
    with open(index, "ab") as f:
        f.write(bytes(8 * 1024))  # preallocated zero entries past the two real ones
    part = Partition(d)
    tail = PartitionTail(committed=False)
    tail.advance(part.segments)
    assert (tail.end, tail.position) == (10, _active(d).stat().st_size)
    torn = encode_batch([{"value": b"v", "timestamp": 1}] * 3, base_offset=10)
    _append(d, torn[:20])
    tail.advance(part.segments)
    assert tail.end == 10 and tail.position < _active(d).stat().st_size
    _append(d, torn[20:])
    tail.advance(part.segments)
    assert (tail.end, tail.position) == (13, _active(d).stat().st_size)
    # a roll to an empty segment: the log end is its base offset
    (d / f"{20:020d}.log").write_bytes(b"")
    tail.advance(part.segments)
    assert (tail.end, tail.base, tail.position) == (20, 20, 0)


def test_read_committed_stops_at_the_first_open_transaction(tmp_path):
    d = tmp_path / "orders-0"
    with SegmentWriter(d) as w:
        w.append(_batch(0, 3, base_offset=0))
    tail = PartitionTail(committed=True)
    _append(d, _txn(3, 2, pid=7) + _txn(5, 2, pid=8) + _batch(7, 2, base_offset=7))
    tail.advance(Partition(d).segments)
    assert (tail.end, tail.stable) == (9, 3)
    _append(d, encode_control_batch("commit", producer_id=7, producer_epoch=0, offset=9))
    tail.advance(Partition(d).segments)
    assert (tail.end, tail.stable, tail.aborted) == (10, 5, [])
    _append(d, encode_control_batch("abort", producer_id=8, producer_epoch=0, offset=10))
    tail.advance(Partition(d).segments)
    assert (tail.end, tail.stable, tail.aborted) == (11, 11, [(8, 5, 10)])
    # a new reader learns the open transactions from the start of the log
    fresh = PartitionTail(committed=True)
    fresh.advance(Partition(d).segments)
    assert (fresh.stable, fresh.aborted) == (11, [(8, 5, 10)])
