"""A live partition directory changes between two steps of a reader (issue 22, classes 2, 3, 5, 7):
a file removed between the listing and its stat is not listed; links that lead nowhere do not break
a listing; the tail checks the entry it read last before going on from it, walks past damage with
bytes after it (the reader of those bytes applies onCorrupt), and reads a remote segment in ranges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kcodec.log import fs as fs_module
from kcodec.log.files import BrokenLinkError, list_segments
from kcodec.log.fs import ArrowFS, LocalFS
from kcodec.log.partition import Partition, list_partitions
from kcodec.log.tail import PartitionTail
from kcodec.log.writer import SegmentWriter
from kcodec.records import source as source_module
from kcodec.records.encode import encode_batch
from kcodec.records.framing import SIZE_OFFSET


def _batch(first: int, n: int, pad: int = 0) -> bytes:
    recs = [{"value": b"v%d" % o + b"x" * pad, "timestamp": 1000 + o} for o in range(first, first + n)]
    return encode_batch(recs, base_offset=first)


def _segment(d: Path, *batches: bytes, base: int = 0) -> Path:
    with SegmentWriter(d, base_offset=base, index_interval_bytes=0) as w:
        for b in batches:
            w.append(b)
    return d / f"{base:020d}.log"


def _values(part: Partition) -> list[int]:
    return [r.offset for b in part.iter_batches() for r in b.records]


# ----------------------------------------------------------------------------- listings


def test_a_file_removed_between_listing_and_stat_is_not_listed(tmp_path, monkeypatch):
    d = tmp_path / "orders-0"
    _segment(d, _batch(0, 3))
    _segment(d, _batch(3, 3), base=3)
    victim = d / f"{0:020d}.timeindex"
    real = os.scandir

    class Racing:
        """os.scandir whose entries for ``victim`` vanish after the listing, before their stat."""

        def __init__(self, path):
            self.it = real(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.it.close()

        def __iter__(self):
            for e in self.it:
                if e.path == str(victim) and victim.exists():
                    victim.unlink()
                yield e

    monkeypatch.setattr(fs_module.os, "scandir", Racing)
    names = [Path(e.path).name for e in LocalFS().list(str(d))]
    assert victim.name not in names and f"{3:020d}.log" in names
    monkeypatch.undo()
    assert _values(Partition(d)) == list(range(6))


def test_links_that_lead_nowhere_do_not_break_a_listing(tmp_path):
    d = tmp_path / "orders-0"
    _segment(d, _batch(0, 3))
    (d / "notes").symlink_to(tmp_path / "missing")
    (d / "loop").symlink_to(d / "loop")
    index = d / f"{0:020d}.index"
    index.unlink()
    index.symlink_to(tmp_path / "missing.index")  # an index that is a dangling link reads as missing
    listing = list_segments(LocalFS(), d)
    assert [s.base_offset for s in listing.segments] == [0]
    assert not listing.segments[0].has(".index")
    assert _values(Partition(d)) == [0, 1, 2]
    (tmp_path / "orders-1").symlink_to(tmp_path / "orders-1")  # a looping partition directory
    assert [p.partition for p in list_partitions(tmp_path)] == [0]


def test_a_log_that_is_a_dangling_link_is_named(tmp_path):
    d = tmp_path / "orders-0"
    _segment(d, _batch(0, 3))
    (d / f"{5:020d}.log").symlink_to(tmp_path / "gone.log")
    with pytest.raises(BrokenLinkError) as exc:
        list_segments(LocalFS(), d)
    assert f"{5:020d}.log" in str(exc.value) and "\n" not in str(exc.value)


# ----------------------------------------------------------------------------- the tail


def test_truncated_and_regrown_the_tail_seeks_again(tmp_path):
    """A follower truncates its log and the new leader's batches grow it past the saved position,
    whose bytes now lie inside another batch: the tail seeks offset 10 again instead of stalling."""
    d = tmp_path / "orders-0"
    log = _segment(d, _batch(0, 5), _batch(5, 5))
    tail = PartitionTail(committed=False)
    tail.advance(Partition(d).segments)
    assert tail.end == 10
    first = len(_batch(0, 5))
    with open(log, "r+b") as f:
        f.truncate(first)
        f.seek(first)
        f.write(_batch(5, 2, pad=3) + _batch(7, 8, pad=40))
    assert log.stat().st_size > tail.position
    tail.advance(Partition(d).segments)
    assert tail.end == 15
    tail.advance(Partition(d).segments)  # and it goes on from there
    assert tail.end == 15


@pytest.mark.parametrize("damage", ["size", "magic"])
def test_the_tail_walks_past_damage_with_bytes_after_it(tmp_path, damage):
    d = tmp_path / "orders-0"
    a, b, c = _batch(0, 3), _batch(3, 3), _batch(6, 3)
    log = _segment(d, a)
    tail = PartitionTail(committed=False)
    tail.advance(Partition(d).segments)
    assert tail.end == 3
    broken = bytearray(b)
    if damage == "size":
        broken[SIZE_OFFSET : SIZE_OFFSET + 4] = (10_000).to_bytes(4, "big")  # past the end of the file
    else:
        broken[16] = 7  # magic
    with open(log, "ab") as f:
        f.write(bytes(broken) + c)
    tail.advance(Partition(d).segments)
    assert tail.end == 9 and tail.position == log.stat().st_size


def test_a_batch_being_written_at_the_end_is_waited_for(tmp_path):
    d = tmp_path / "orders-0"
    log = _segment(d, _batch(0, 3))
    tail = PartitionTail(committed=False)
    torn = _batch(3, 3)
    with open(log, "ab") as f:
        f.write(torn[:30])
    tail.advance(Partition(d).segments)
    assert tail.end == 3
    with open(log, "ab") as f:
        f.write(torn[30:])
    tail.advance(Partition(d).segments)
    assert tail.end == 6


def test_a_remote_segment_is_tailed_in_ranges(tmp_path, monkeypatch):
    """Through pyarrow's filesystem interface (as S3 is read), the tail reads bounded ranges, never
    the segment whole."""
    pytest.importorskip("pyarrow")
    d = tmp_path / "orders-0"
    monkeypatch.setattr(source_module, "WINDOW", 16 << 10)  # a segment of a few windows, kept small
    _segment(d, *[_batch(o, 10, pad=500) for o in range(0, 400, 10)])
    size = (d / f"{0:020d}.log").stat().st_size
    fs = ArrowFS(f"file://{tmp_path}/")
    reads: list[int] = []
    opened = fs.open_ranged

    def ranged(path):
        f = opened(path)
        real = f.read_at

        class Counting:
            def read_at(self, n, pos):
                reads.append(n)
                return real(n, pos)

            def size(self):
                return f.size()

            def close(self):
                f.close()

        return Counting()

    def whole(*args):
        raise AssertionError("the tail read a whole range of a remote segment")

    monkeypatch.setattr(fs, "open_ranged", ranged)
    monkeypatch.setattr(fs, "read_range", whole)
    monkeypatch.setattr(fs, "read_bytes", whole)
    part = Partition(f"file://{d}", fs)
    tail = PartitionTail(committed=True)  # from the start of the log
    tail.advance(part.segments)
    assert tail.end == 400
    assert reads and max(reads) <= source_module.WINDOW < size


def test_a_partition_directory_that_is_not_there_is_kcodecs_error(tmp_path):
    from kcodec.errors import KcodecError

    with pytest.raises(KcodecError, match="no such directory") as exc:
        list(Partition(tmp_path / "orders-0").iter_batches())
    assert isinstance(exc.value, FileNotFoundError)
