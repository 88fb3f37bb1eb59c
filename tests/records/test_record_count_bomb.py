"""A record-count bomb inside one legal batch: a few MB of zstd holding millions of valid 7-byte records
(null key and value), under the decompression cap. Its records are decoded a chunk at a time
(:mod:`kcodec.records.chunked`), as Records a chunk at a time; the command line's bounded memory on it is
tests/cli/test_cli_record_count_bomb.py's."""

from __future__ import annotations

import struct

import pytest

from kcodec.records.chunked import CHUNK, CHUNKED_RECORD_COUNT, ChunkedRecords
from kcodec.records.decode import decode_entry
from kcodec.records.framing import (
    V2_CRC_OFFSET,
    V2_CRC_START,
)
from kcodec.runtime.crc import crc32c
from tests.helpers.bombs import bomb


def test_small_bombs_decode_as_before():
    """Below the threshold a batch's records are a list; above it the chunked sequence gives the same
    records, by iteration, index and slice, with both backends' decoders."""
    for count in (CHUNKED_RECORD_COUNT, CHUNKED_RECORD_COUNT + CHUNK + 3):
        for compression in ("none", "zstd"):
            batch = decode_entry(bomb(count, compression))
            records = batch.records
            assert len(records) == count == batch.record_count
            assert isinstance(records, ChunkedRecords) == (count > CHUNKED_RECORD_COUNT)
            offsets = [r.offset for r in records]
            assert offsets == list(range(count))
            assert records[-1].offset == count - 1 and records[CHUNK].offset == CHUNK
            assert [r.offset for r in records[CHUNK - 1 : CHUNK + 2]] == [CHUNK - 1, CHUNK, CHUNK + 1]
            assert all(r.key is None and r.value is None and r.headers == () for r in records)


def test_a_damaged_record_inside_a_chunked_batch_raises_when_the_batch_decodes():
    from kcodec.errors import DecodeError

    entry = bytearray(bomb(CHUNKED_RECORD_COUNT + 10, "none"))
    entry[-1] = 2  # the last record says it has a header: its bytes run past the end
    struct.pack_into(">I", entry, V2_CRC_OFFSET, crc32c(bytes(entry[V2_CRC_START:])))
    with pytest.raises(DecodeError):
        decode_entry(bytes(entry))
