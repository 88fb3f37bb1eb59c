"""``read_batches(stream, skip_corrupt=True)`` keeps a bounded window of a stream: resynchronising after
damage reads the stream forward only as far as a candidate entry's size asks, keeps that look-ahead in
temporary files and drops what the reader has passed (``StreamInput``). What it skips, yields and reports
is the same as for the same bytes in a file, checked entry for entry on damaged logs; 100 MiB of garbage
from a pipe-like stream is read with a peak RSS well below what reading it whole took (230 MiB)."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest

import kcodec.records.source as source_module
from kcodec.records.reader import read_batches
from kcodec.records.source import StreamInput
from tests.helpers.batches import ENTRIES, LOG, STARTS, V1_ENTRY, V2_BATCH, damaged
from tests.helpers.bombs import PEAK_LINE, python_peak_rss_mib


class OneWay(io.RawIOBase):
    """A stream that cannot seek, handing out at most ``step`` bytes a read (as a pipe does)."""

    def __init__(self, data: bytes, step: int = 7):
        self.data, self.at, self.step = data, 0, step

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self.step, len(self.data) - self.at)
        b[:n] = self.data[self.at : self.at + n]
        self.at += n
        return n


def _lying_size_at_the_end() -> bytes:
    last = bytearray(V2_BATCH)
    struct.pack_into(">i", last, 8, 1 << 20)  # says 1 MiB, the input ends long before
    return LOG + bytes(last)


def _swallowing() -> bytes:
    grown = bytearray(ENTRIES[2])
    extra = len(ENTRIES[3])
    struct.pack_into(">i", grown, 8, struct.unpack_from(">i", grown, 8)[0] + extra)
    struct.pack_into(">i", grown, len(grown) - 9, 5 + extra)
    return b"".join(ENTRIES[:2]) + bytes(grown) + b"".join(ENTRIES[3:])


def _cases() -> dict[str, bytes]:
    junk = random.Random(7).randbytes(3000)
    cases = {
        "clean": LOG,
        "lying size at the end": _lying_size_at_the_end(),
        "partial tail": LOG + V2_BATCH[:30],
        "zeros": LOG + bytes(4096),
        "garbage around": junk + V2_BATCH + junk + V1_ENTRY + junk,
        "swallowing": _swallowing(),
        "garbage only": junk,
    }
    for i in range(len(ENTRIES)):
        for offset in (0, 8, 11, 16, 17, 21, 30):
            if offset < len(ENTRIES[i]):
                cases[f"entry {i} byte {offset}"] = damaged(i, offset)
    return cases


def _outcome(reader) -> tuple:
    batches = [(b.position, b.base_offset, b.size, b.crc_valid) for b in reader]
    skipped = [(s.start, s.end, s.kind, s.reason, s.rest) for s in reader.skipped]
    refused = [(s.start, s.end) for s in reader.refused]
    tail = None if reader.partial_tail is None else (reader.partial_tail.position, reader.partial_tail.size)
    return batches, skipped, refused, tail, reader.bytes_read


@pytest.mark.parametrize("small", [False, True], ids=["default windows", "tiny windows"])
def test_a_stream_skips_what_the_same_file_skips(tmp_path: Path, monkeypatch, small: bool) -> None:
    if small:  # windows and temporary files of a few dozen bytes: every boundary is crossed many times
        monkeypatch.setattr(source_module, "WINDOW", 64)
        monkeypatch.setattr(source_module, "SPILL_PART", 100)
    path = tmp_path / "x.log"
    for name, data in _cases().items():
        path.write_bytes(data)
        for options in (
            {"verify_crc": True},
            {"verify_crc": False},
            {"resync": False},
            {"max_batch_size": 200},
        ):
            want = _outcome(read_batches(path, skip_corrupt=True, **options))
            got = _outcome(read_batches(io.BufferedReader(OneWay(data)), skip_corrupt=True, **options))
            assert got == want, (name, options)
        # a stream's first byte is at ``start``; ``end`` bounds it as it bounds the file
        start, end = STARTS[2], len(data) - 5
        want = _outcome(read_batches(path, skip_corrupt=True, start=start, end=end))
        got = _outcome(read_batches(OneWay(data[start:]), skip_corrupt=True, start=start, end=end))
        assert got == want, (name, "start/end")


def test_a_stream_input_reads_ahead_only_as_asked_and_drops_what_is_passed() -> None:
    data = random.Random(3).randbytes(3 << 20)
    stream = OneWay(data, step=len(data))
    with source_module.open_stream_input(stream, part=1000) as source:
        assert source.reach(10, 20) == 20 and stream.at == source_module.CHUNK  # one chunk read, not all
        assert bytes(source.pread(990, 20)) == data[990:1010]  # across two temporary files
        source.forget(5000)
        with pytest.raises(ValueError, match="already passed over"):
            source.pread(4999, 2)
        assert bytes(source.pread(5000, 50)) == data[5000:5050]
        assert source.size == source_module.UNKNOWN_SIZE
        assert source.reach(len(data) - 10, 100) == 10 and source.size == len(data)
        assert source.end_by(len(data) + 1) == len(data) and source.end_by(500) == 500
    assert isinstance(source, StreamInput)


READ_GARBAGE = (
    """
import io, random, sys
from kcodec.records.reader import read_batches

class Garbage(io.RawIOBase):
    def __init__(self, total):
        self.left, self.rng = total, random.Random(1)
    def readable(self):
        return True
    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = self.rng.randbytes(n)
        self.left -= n
        return n

reader = read_batches(io.BufferedReader(Garbage(int(sys.argv[1]))), skip_corrupt=True)
assert not list(reader)
sys.stderr.write(f"{[(s.start, s.end) for s in reader.skipped]} {reader.partial_tail}\\n")
"""
    + PEAK_LINE
)


def test_garbage_from_a_stream_is_skipped_in_bounded_memory() -> None:
    size = 64 << 20  # read whole before: 158 MiB peak RSS (100 MiB: 230 MiB, 200 MB: 430 MiB)
    done, peak = python_peak_rss_mib(READ_GARBAGE, [str(size)])
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"[(0, {size})] None"  # one skipped range over all of it, as for a file
    assert peak < 80, f"peak RSS {peak:.0f} MiB"
