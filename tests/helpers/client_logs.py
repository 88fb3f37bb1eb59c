"""A partition directory written by kafka-python's and aiokafka's record batch builders (not kcodec's
writer): what ``kcodec write --from-table`` must give back byte for byte where it is uncompressed."""

from __future__ import annotations

from pathlib import Path

import aiokafka.record.default_records as aio_default
from kafka.record.default_records import DefaultRecordBatchBuilder as KpDefaultBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpLegacyBuilder
from kafka.record.util import calc_crc32c

GZIP = 1  # the codec id the clients' builders take


def v2_batch(builder_class, base_offset: int, records, *, compression=0, last_offset_delta=None, **producer) -> bytes:
    """One v2 batch from a client's builder, at ``base_offset`` (not under the CRC); ``last_offset_delta``
    larger than the last record's, as compaction leaves it (the CRC recomputed with kafka-python's)."""
    b = builder_class(
        magic=2,
        compression_type=compression,
        is_transactional=producer.get("transactional", False),
        producer_id=producer.get("producer_id", -1),
        producer_epoch=producer.get("producer_epoch", -1),
        base_sequence=producer.get("base_sequence", -1),
        batch_size=1 << 20,
    )
    for delta, ts, key, value, headers in records:
        b.append(delta, timestamp=ts, key=key, value=value, headers=headers)
    data = bytearray(b.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    if last_offset_delta is not None:
        data[23:27] = last_offset_delta.to_bytes(4, "big")
        data[17:21] = calc_crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


def legacy_entries(magic: int, base_offset: int, records, *, compression=0) -> bytes:
    """kafka-python's v0/v1 messages: one entry each, or one wrapper (inner offsets relative to the first,
    the wrapper at the last absolute offset, as a broker stores v1)."""
    b = KpLegacyBuilder(magic=magic, compression_type=compression, batch_size=1 << 20)
    for delta, ts, key, value, _ in records:
        offset = delta if compression else base_offset + delta
        b.append(offset, timestamp=None if magic == 0 else ts, key=key, value=value)
    data = bytearray(b.build())
    if compression:
        inner_last = records[-1][0]
        data[0:8] = (base_offset + inner_last).to_bytes(8, "big")
    return bytes(data)


def client_records(n: int, start_ts: int, *, gaps: bool = False, headers: bool = True):
    out = []
    for i in range(n):
        delta = i * 3 if gaps else i
        key = None if i % 4 == 3 else f"key-{i % 3}".encode()
        value = None if i % 5 == 4 else f"value {i} ".encode() * (i % 7 + 1)
        hdrs = [("trace", f"t{i}".encode()), ("empty", b"")] if headers and i % 2 == 0 else []
        out.append((delta, start_ts + 17 * i, key, value, hdrs))
    return out


def client_log(directory: Path) -> None:
    """A compacted-looking partition of kafka-python's and aiokafka's batches: a segment of uncompressed
    batches (v2 with gaps inside and between them, a lastOffsetDelta past the last record, producer state;
    v1 and v0 messages) and one of gzip batches and a v1 gzip wrapper."""
    t = 1_700_000_000_000
    first = [
        v2_batch(KpDefaultBuilder, 0, client_records(5, t)),
        v2_batch(aio_default.DefaultRecordBatchBuilder, 7, client_records(6, t + 100, gaps=True), last_offset_delta=20),
        v2_batch(
            KpDefaultBuilder, 40, client_records(3, t + 200), producer_id=4242, producer_epoch=3, base_sequence=11
        ),
        v2_batch(
            aio_default.DefaultRecordBatchBuilder,
            50,
            client_records(4, t + 300),
            transactional=True,
            producer_id=77,
            producer_epoch=0,
            base_sequence=0,
        ),
        legacy_entries(1, 60, client_records(3, t + 400, headers=False)),
        legacy_entries(0, 70, client_records(2, t, headers=False)),
    ]
    second = [
        v2_batch(KpDefaultBuilder, 100, client_records(30, t + 500), compression=GZIP),
        v2_batch(aio_default.DefaultRecordBatchBuilder, 140, client_records(25, t + 600, gaps=True), compression=GZIP),
        legacy_entries(1, 300, client_records(10, t + 700, headers=False), compression=GZIP),
    ]
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(b"".join(first))
    (directory / "00000000000000000100.log").write_bytes(b"".join(second))
