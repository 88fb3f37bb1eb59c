"""A record-count bomb inside one legal batch: a few MB of zstd holding millions of valid 7-byte records
(null key and value), under the decompression cap. Its records are decoded a chunk at a time
(:mod:`kcodec.records.chunked`), so ``dump``, ``dump --json`` and ``verify`` stay within a bounded peak RSS
(measured in a subprocess), and ``inspect`` ends with one line instead of a traceback."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest

from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA
from kcodec.records.chunked import CHUNK, CHUNKED_RECORD_COUNT, ChunkedRecords
from kcodec.records.decode import decode_entry
from kcodec.records.encode import encode_batch
from kcodec.records.framing import (
    LOG_OVERHEAD,
    SIZE_OFFSET,
    V2_CRC_OFFSET,
    V2_CRC_START,
    V2_RECORDS_COUNT_OFFSET,
    V2_RECORDS_OFFSET,
)
from kcodec.runtime.compression import compress
from kcodec.runtime.crc import crc32c
from kcodec.runtime.varint import encode_varint

BOMB_RECORDS = 3_000_000
MAX_RSS_MIB = 300


def _records(start: int, stop: int) -> bytes:
    """Records ``start``..``stop`` of the bomb: attributes 0, timestamp delta 0, offset delta i, null key and
    value, no headers (DefaultRecord's layout, 7 bytes while the delta takes one)."""
    out = []
    for i in range(start, stop):
        delta = encode_varint(i)
        out.append(encode_varint(5 + len(delta)) + b"\0\0" + delta + b"\x01\x01\x00")
    return b"".join(out)


def bomb(count: int, compression: str = "zstd") -> bytes:
    """One v2 batch of ``count`` tiny records: kcodec's encoder writes a one-record batch, whose records,
    count and last offset delta are then replaced (encoding millions of records one by one takes long)."""
    head = bytearray(encode_batch([{"value": None, "timestamp": 0}], compression=compression)[:V2_RECORDS_OFFSET])
    raw = b"".join(_records(i, min(count, i + 100_000)) for i in range(0, count, 100_000))
    stored = raw if compression == "none" else compress(compression, raw)
    entry = head + stored
    struct.pack_into(">i", entry, SIZE_OFFSET, len(entry) - LOG_OVERHEAD)
    struct.pack_into(">i", entry, RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA, count - 1)
    struct.pack_into(">i", entry, V2_RECORDS_COUNT_OFFSET, count)
    struct.pack_into(">I", entry, V2_CRC_OFFSET, crc32c(bytes(entry[V2_CRC_START:])))
    return bytes(entry)


@pytest.fixture(scope="module")
def bomb_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bomb") / "00000000000000000000.log"
    path.write_bytes(bomb(BOMB_RECORDS))
    return path


_CHILD = """import sys
from kcodec.cli import main
try:
    rc = main(sys.argv[1:])
finally:
    sys.stdout.flush()
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    sys.stderr.write(f"peak_kib {hwm[0]}\\n")
sys.exit(rc)
"""


def _peak_rss_mib(args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``kcodec ARGS`` in a child, stdout dropped; its own peak RSS (VmHWM), said as its last line on
    stderr and removed from ``stderr`` (RUSAGE_CHILDREN counts other tests' children, and ru_maxrss keeps
    the size of a forking parent across exec)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
    )
    *lines, last = done.stderr.splitlines()
    assert last.startswith("peak_kib "), done.stderr
    done.stderr = "\n".join(lines)
    return done, int(last.split()[1]) / 1024


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


@pytest.mark.parametrize(
    "args", [["dump", "--json"], ["dump", "--print-data-log"], ["verify"]], ids=["json", "text", "verify"]
)
def test_the_bomb_streams_in_bounded_memory(bomb_file, args):
    done, peak = _peak_rss_mib([*args, str(bomb_file)])
    assert done.returncode == 0, done.stderr
    assert peak < MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"


def test_dump_json_of_the_bomb_is_one_valid_line_per_batch(tmp_path):
    path = tmp_path / "bomb.log"
    path.write_bytes(bomb(CHUNKED_RECORD_COUNT + 5))
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom kcodec.cli import main\nsys.exit(main(sys.argv[1:]))", "dump"]
        + ["--json", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["recordCount"] == len(obj["records"]) == CHUNKED_RECORD_COUNT + 5
    assert obj["records"][-1]["offset"] == CHUNKED_RECORD_COUNT + 4


def test_inspect_on_the_bomb_ends_in_one_line(bomb_file):
    done, peak = _peak_rss_mib(["inspect", str(bomb_file)])
    assert "Traceback" not in done.stderr
    if done.returncode != 0:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.returncode == 0 and peak < MAX_RSS_MIB, f"peak RSS {peak:.0f} MiB"
