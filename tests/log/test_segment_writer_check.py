"""SegmentWriter checks entries with the kernel's column decoder (CRC and a walk of every record, no
Record objects) where it exists: the same segments as checking with decode_entry, and on damaged entries
(a flipped CRC, or bytes changed under a recomputed CRC so that only the record walk sees them) the same
error, or the same acceptance, as decode_entry."""

from __future__ import annotations

import random
import struct

import pytest

from kcodec.errors import KcodecError
from kcodec.log import writer as writer_module
from kcodec.log.writer import SegmentWriter
from kcodec.records.columnar import column_decoder
from kcodec.records.encode import encode_batch
from kcodec.records.framing import V2_CRC_OFFSET, V2_CRC_START
from kcodec.runtime.crc import crc32c

if column_decoder() is None:
    pytest.skip(
        "no compiled column decoder (or no pyarrow): SegmentWriter checks with decode_entry", allow_module_level=True
    )


def _entries(codec: str) -> bytes:
    parts, offset = [], 0
    for n in (5, 17, 1):
        records = [
            {
                "key": b"k%d" % i,
                "value": b"v" * (i % 30),
                "headers": [("h", b"x")] if i % 2 else [],
                "timestamp": 1000 + i,
            }
            for i in range(offset, offset + n)
        ]
        parts.append(encode_batch(records, compression=codec, base_offset=offset))
        offset += n
    return b"".join(parts)


def _append(tmp_path, name: str, data: bytes, with_columns: bool, monkeypatch):
    """What SegmentWriter does with ``data``: the files it writes, or the error it raises."""
    with monkeypatch.context() as m:
        if not with_columns:
            m.setattr(writer_module, "column_decoder", lambda: None)
        directory = tmp_path / name
        try:
            with SegmentWriter(directory) as w:
                w.append(data)
        except KcodecError as exc:
            return type(exc).__name__, str(exc)
    return sorted((p.name, p.read_bytes()) for p in directory.iterdir() if p.name != ".lock")


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "zstd"])
def test_valid_entries_write_the_same_segment(tmp_path, monkeypatch, codec):
    data = _entries(codec)
    got = _append(tmp_path, "a", data, True, monkeypatch)
    assert got == _append(tmp_path, "b", data, False, monkeypatch)
    assert dict(got)["00000000000000000000.log"] == data


def _recrc(entry: bytearray) -> bytearray:
    struct.pack_into(">I", entry, V2_CRC_OFFSET, crc32c(bytes(entry[V2_CRC_START:])))
    return entry


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_damaged_entries_give_the_same_error(tmp_path, monkeypatch, codec):
    data = _entries(codec)
    first = int.from_bytes(data[8:12], "big") + 12  # the second entry starts here
    second_size = int.from_bytes(data[first + 8 : first + 12], "big") + 12
    rng = random.Random(codec)
    cases = [bytearray(data) for _ in range(40)]
    for i, case in enumerate(cases):
        at = first + rng.randrange(V2_CRC_START, second_size)
        case[at] ^= 1 << rng.randrange(8)
        if i % 4:  # the CRC recomputed over the damage: only the record walk can refuse it
            case[first : first + second_size] = _recrc(bytearray(case[first : first + second_size]))
    refused = 0
    for i, case in enumerate(cases):
        got = _append(tmp_path, f"c{i}", bytes(case), True, monkeypatch)
        assert got == _append(tmp_path, f"d{i}", bytes(case), False, monkeypatch), i
        refused += isinstance(got, tuple)
    assert refused > 12  # the 10 with a wrong CRC, and damage only the record walk sees
