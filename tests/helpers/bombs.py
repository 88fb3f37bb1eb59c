"""A record-count bomb: one legal v2 batch of millions of tiny records (a few MB of zstd), and a run of the
kcodec command line in a child that reports its own peak RSS. Shared by the records layer's tests (the
chunked decoder) and the command line's (bounded memory)."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib

from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA
from kcodec.records.encode import encode_batch
from kcodec.records.framing import (
    LOG_OVERHEAD,
    SIZE_OFFSET,
    V2_CRC_OFFSET,
    V2_CRC_START,
    V2_RECORDS_COUNT_OFFSET,
    V2_RECORDS_OFFSET,
)
from kcodec.runtime.compression import CODEC_IDS, compress
from kcodec.runtime.crc import crc32c
from kcodec.runtime.varint import encode_varint

# half a million records: the streaming paths peak at 48-112 MiB on it (37-84 MiB on a thousand, 58-114 on a
# million); a Record held per record takes over 260 B (300 MiB for a million), 125 MiB more here, so
# BOMB_MAX_RSS_MIB tells the two apart at half the time of a million
BOMB_RECORDS = 500_000
BOMB_MAX_RSS_MIB = 150
MAX_RSS_MIB = 300


def bomb_records(start: int, stop: int) -> bytes:
    """Records ``start``..``stop`` of the bomb: attributes 0, timestamp delta 0, offset delta i, null key and
    value, no headers (DefaultRecord's layout, 7 bytes while the delta takes one)."""
    out = []
    for i in range(start, stop):
        delta = encode_varint(i)
        out.append(encode_varint(5 + len(delta)) + b"\0\0" + delta + b"\x01\x01\x00")
    return b"".join(out)


def bomb(count: int, compression: str = "zstd", last_offset_delta: int | None = None) -> bytes:
    """One v2 batch of ``count`` tiny records: kcodec's encoder writes a one-record batch, whose records,
    count and last offset delta are then replaced (encoding millions of records one by one takes long).
    ``last_offset_delta`` (default ``count - 1``) 0 puts every record but the first outside the batch's
    offset range: a rule each record breaks."""
    head = bytearray(encode_batch([{"value": None, "timestamp": 0}], compression=compression)[:V2_RECORDS_OFFSET])
    raw = b"".join(bomb_records(i, min(count, i + 100_000)) for i in range(0, count, 100_000))
    stored = raw if compression == "none" else compress(compression, raw)
    entry = head + stored
    struct.pack_into(">i", entry, SIZE_OFFSET, len(entry) - LOG_OVERHEAD)
    delta = count - 1 if last_offset_delta is None else last_offset_delta
    struct.pack_into(">i", entry, RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA, delta)
    struct.pack_into(">i", entry, V2_RECORDS_COUNT_OFFSET, count)
    struct.pack_into(">I", entry, V2_CRC_OFFSET, crc32c(bytes(entry[V2_CRC_START:])))
    return bytes(entry)


def legacy_message_set(count: int, valid_crc: bool = False) -> bytearray:
    """``count`` v1 messages with null key and value, relative offsets 0..count-1 (as inside a v1 wrapper),
    each 34 bytes (LEGACY_MESSAGE_SET_ENTRY apart); their CRCs wrong (0) unless ``valid_crc``: Kafka's
    LegacyRecord layout, built by hand."""
    body = struct.pack(">bbqii", 1, 0, 0, -1, -1)
    message = struct.pack(">I", zlib.crc32(body) if valid_crc else 0) + body
    return bytearray(b"".join(struct.pack(">qi", i, len(message)) + message for i in range(count)))


LEGACY_MESSAGE_SET_ENTRY = 34


def legacy_wrapper(inner: bytes, wrapper_offset: int, codec: str = "gzip") -> bytes:
    """A v1 wrapper message at ``wrapper_offset`` whose value is ``inner`` compressed by ``codec``."""
    value = compress(codec, bytes(inner))
    body = struct.pack(">bbqi", 1, CODEC_IDS[codec], 0, -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", wrapper_offset, len(wrapper)) + wrapper


def legacy_wrapper_bomb(count: int, codec: str = "gzip") -> bytes:
    """One v1 wrapper (gzip by default) of ``count`` inner messages with null key and value and a wrong CRC
    each."""
    return legacy_wrapper(legacy_message_set(count), count - 1, codec)


CHILD = """import sys
from kcodec.cli import main
try:
    rc = main(sys.argv[1:])
finally:
    sys.stdout.flush()
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    sys.stderr.write(f"peak_kib {hwm[0]}\\n")
sys.exit(rc)
"""
PEAK_LINE = """
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
sys.stderr.write(f"peak_kib {hwm[0]}\\n")
"""


def peak_rss_mib(args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``kcodec ARGS`` in a child, stdout dropped; its own peak RSS (VmHWM), said as its last line on
    stderr and removed from ``stderr`` (RUSAGECHILDREN counts other tests' children, and ru_maxrss keeps
    the size of a forking parent across exec)."""
    return python_peak_rss_mib(CHILD, args)


def python_peak_rss_mib(code: str, args: tuple[str, ...] | list[str] = ()) -> tuple[subprocess.CompletedProcess, float]:
    """Run the Python ``code`` (with ``args`` as sys.argv[1:]) in a child, as :func:`peak_rss_mib` runs kcodec;
    ``code`` writes the ``peak_kib`` line itself (as ``CHILD`` does)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
    )
    *lines, last = done.stderr.splitlines()
    assert last.startswith("peak_kib "), done.stderr
    done.stderr = "\n".join(lines)
    return done, int(last.split()[1]) / 1024
