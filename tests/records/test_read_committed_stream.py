"""``read_records(stream, isolation_level="read_committed")`` reads the stream twice (the ABORT markers
first): the stream is copied to a temporary file for that, never held in memory. What it returns is what
the same bytes give from a file, ``start`` included (a stream's first byte is at ``start``, as for
``read_batches``); a 96 MiB stream is read with a peak RSS well below what reading it whole took."""

from __future__ import annotations

import io
from pathlib import Path

from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch
from kcodec.records.reader import read_records
from tests.helpers.bombs import PEAK_LINE, python_peak_rss_mib


def _log() -> tuple[bytes, list[int]]:
    """Producer 7: offsets 0-1 committed (marker 2), 3-4 aborted (marker 5), 6 open; 7 not transactional."""
    parts = [
        encode_batch(
            [NewRecord(value=b"a"), NewRecord(value=b"b")],
            base_offset=0,
            producer_id=7,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        ),
        encode_control_batch("commit", producer_id=7, producer_epoch=0, coordinator_epoch=1, offset=2),
        encode_batch(
            [NewRecord(value=b"c"), NewRecord(value=b"d")],
            base_offset=3,
            producer_id=7,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        ),
        encode_control_batch("abort", producer_id=7, producer_epoch=0, coordinator_epoch=1, offset=5),
        encode_batch(
            [NewRecord(value=b"e")], base_offset=6, producer_id=7, producer_epoch=0, base_sequence=0, transactional=True
        ),
        encode_batch([NewRecord(value=b"f")], base_offset=7),
    ]
    starts = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    return b"".join(parts), starts


class OneWay(io.RawIOBase):
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), 5, len(self.data) - self.at)
        b[:n] = self.data[self.at : self.at + n]
        self.at += n
        return n


def _offsets(source, **options) -> list[int]:
    return [r.offset for r in read_records(source, isolation_level="read_committed", **options)]


def test_a_stream_reads_committed_as_the_same_file_does(tmp_path: Path) -> None:
    data, starts = _log()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    assert _offsets(path) == _offsets(OneWay(data)) == [0, 1, 7]
    # the stream's first byte is at ``start``: from the aborted batch on, as the file read from there
    assert _offsets(path, start=starts[2]) == _offsets(OneWay(data[starts[2] :]), start=starts[2]) == [7]
    assert _offsets(path, end=starts[4]) == _offsets(OneWay(data), end=starts[4]) == [0, 1]


READ_COMMITTED = (
    """
import io, sys
from kcodec.records.encode import NewRecord, encode_batch, encode_control_batch
from kcodec.records.reader import read_records

VALUE = bytes(range(256)) * 4096  # 1 MiB, stored uncompressed

class Transactions(io.RawIOBase):
    # transaction i: one 1 MiB record at offset 2i, then its marker (every third aborted)
    def __init__(self, n):
        self.i, self.n, self.pending = 0, n, b""
    def readable(self):
        return True
    def readinto(self, b):
        if not self.pending and self.i < self.n:
            kind = "abort" if self.i % 3 == 0 else "commit"
            data = [NewRecord(value=VALUE)]
            self.pending = memoryview(encode_batch(
                data, base_offset=2 * self.i, producer_id=9, producer_epoch=0, base_sequence=self.i, transactional=True
            ) + encode_control_batch(
                kind, producer_id=9, producer_epoch=0, coordinator_epoch=0, offset=2 * self.i + 1
            ))
            self.i += 1
        n = min(len(b), len(self.pending))
        b[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

n = int(sys.argv[1])
kept = [r.offset for r in read_records(io.BufferedReader(Transactions(n)), isolation_level="read_committed")]
assert kept == [2 * i for i in range(n) if i % 3], kept[:10]
"""
    + PEAK_LINE
)


def test_a_large_stream_is_read_committed_in_bounded_memory() -> None:
    done, peak = python_peak_rss_mib(READ_COMMITTED, ["96"])  # 96 MiB: 240 MiB peak RSS when read whole
    assert done.returncode == 0, done.stderr
    assert peak < 100, f"peak RSS {peak:.0f} MiB"
