"""What the records of one batch would take on disk as v0, v1 and v2 with each
codec.

The records keep their grouping: one source batch becomes one v2 batch, one
v0/v1 compressed wrapper, or (uncompressed v0/v1) one log entry per record,
as a producer that batched them the same way would write them. v0 and v1
cannot hold headers and v0 has no timestamps, so those are left out there (as
a down-conversion would); zstd exists only in v2. Control batches have no
v0/v1 form and get no sizes.

A compressed size is the format's fixed overhead plus the length of the
compressed payload, which is encoded once per format by the compiled kernel
(the v2 records region; the v0/v1 wrapper's inner entries, offsets relative in
v1; the generated Python encoders where the kernel is not built) and
compressed once per codec. The uncompressed sizes are the payloads' lengths
(an uncompressed v0/v1 entry differs from an inner one only in its offset's
value, not its width), for batches left out of the sample too; without the
kernel they are arithmetic on the key, value and header lengths
(:mod:`kcodec.records.sizing`). With a
``sample`` fraction below 1 only the batches it picks (by a hash of their base
offset, so the same batches whatever the splits) get compressed sizes; the
pipeline scales those up (:func:`estimate`).
"""

from __future__ import annotations

import zlib

from kcodec.records import values
from kcodec.records.model import TimestampType
from kcodec.records.sizing import (
    LEGACY_ENTRY_OVERHEAD,
    V2_BATCH_OVERHEAD,
    legacy_entry_size,
    v2_fixed_size,
    v2_record_size,
)
from kcodec.runtime import compression as compress_lib

__all__ = ["COMBINATIONS", "size_as", "label", "sampled", "estimate"]

LEGACY_CODECS = ("none", "gzip", "snappy", "lz4")
V2_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: (magic, codec) in the order the summary prints them.
COMBINATIONS: tuple[tuple[int, str], ...] = tuple(
    [(0, c) for c in LEGACY_CODECS] + [(1, c) for c in LEGACY_CODECS] + [(2, c) for c in V2_CODECS]
)


def label(magic: int, codec: str) -> str:
    return f"v{magic}/{codec}"


def _length(b: bytes | None) -> int:
    return -1 if b is None else len(b)


def _uncompressed(batch, records) -> dict[str, int]:
    """v0/none, v1/none and v2/none: the lengths of the payloads the compiled kernel writes (a tenth of
    the time of the arithmetic below, which runs without the kernel)."""
    from kcodec.records.encode import kernel_legacy_entries, kernel_v2_records

    v2_written = kernel_v2_records(records, batch.base_offset, None)
    v0_written = kernel_legacy_entries(records, records[0].offset, 0, None, False, True)
    if v2_written is not None and v0_written is not None:
        v0_bytes = len(v0_written[0])
        return {
            "v0/none": v0_bytes,
            "v1/none": v0_bytes + len(records) * (LEGACY_ENTRY_OVERHEAD[1] - LEGACY_ENTRY_OVERHEAD[0]),
            "v2/none": V2_BATCH_OVERHEAD + len(v2_written[0]),
        }
    v0 = v2 = 0
    base_ts, base_offset = records[0].timestamp, batch.base_offset  # the deltas values.v2_batch takes
    for r in records:
        k, v = _length(r.key), _length(r.value)
        v0 += legacy_entry_size(0, k, v)
        headers = tuple((len(hk.encode()), _length(hv)) for hk, hv in r.headers) if r.headers else ()
        v2 += v2_record_size(r.offset - base_offset, r.timestamp - base_ts, v2_fixed_size(k, v, headers))
    # a v1 entry is a v0 entry with a timestamp
    v1 = v0 + len(records) * (LEGACY_ENTRY_OVERHEAD[1] - LEGACY_ENTRY_OVERHEAD[0])
    return {"v0/none": v0, "v1/none": v1, "v2/none": V2_BATCH_OVERHEAD + v2}


def _v2_payload(batch, records) -> bytes:
    """The records region of the batch as v2 writes it (what a v2 codec compresses)."""
    from kcodec.generated.fast.record import encode_record_v2_array
    from kcodec.records.encode import kernel_v2_records

    written = kernel_v2_records(records, batch.base_offset, None)
    if written is not None:
        return written[0]
    return encode_record_v2_array(values.v2_batch(records, base_offset=batch.base_offset, fast=True)["records"])


def _legacy_payload(records, magic: int) -> bytes:
    """The inner entries of a v0/v1 wrapper holding the records (what a v0/v1 codec compresses); headers
    and v0 timestamps left out, as a lossy down-conversion leaves them."""
    from kcodec.generated.fast import legacy_log_entry
    from kcodec.records.encode import kernel_legacy_entries, legacy_entry_tuple

    written = kernel_legacy_entries(records, records[0].offset, magic, None, magic == 1, True)
    if written is not None:
        return written[0]
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    # any codec gives the wrapper; its inner entries are the same for all of them
    (wrapper,) = values.legacy_entries(
        records, magic=magic, base_offset=records[0].offset, compression="gzip", ts_type=ts_type
    )
    encode = getattr(legacy_log_entry, f"encode_legacy_log_entry_v{magic}_array")
    return encode([legacy_entry_tuple(magic, e) for e in wrapper["message"]["value"]])


def _encoded(batch, records) -> dict[str, int]:
    """Every size, from the payloads encoded once per format: the uncompressed ones are their lengths."""
    out = {}
    for magic in (0, 1, 2):
        payload = _v2_payload(batch, records) if magic == 2 else _legacy_payload(records, magic)
        overhead = V2_BATCH_OVERHEAD if magic == 2 else LEGACY_ENTRY_OVERHEAD[magic]
        out[label(magic, "none")] = V2_BATCH_OVERHEAD + len(payload) if magic == 2 else len(payload)
        for codec in V2_CODECS if magic == 2 else LEGACY_CODECS:
            if codec != "none":
                out[label(magic, codec)] = overhead + len(compress_lib.compress(codec, payload, magic=magic))
    return out


def sampled(base_offset: int, sample: float) -> bool:
    """Whether a batch gets compressed sizes at this sampling fraction (always at 1)."""
    if sample >= 1:
        return True
    return zlib.crc32(base_offset.to_bytes(8, "big", signed=True)) < sample * (1 << 32)


def size_as(batch, sample: float = 1.0) -> dict[str, int] | None:
    """``{"v0/none": bytes, ..., "v2/zstd": bytes}`` for one decoded batch's
    records; None for a control batch. An empty batch costs 0 in v0/v1 (no
    entry) and a bare header in v2. A batch that ``sample`` does not pick has
    the uncompressed sizes only."""
    if batch.is_control:
        return None
    records = batch.records
    if not records:
        return {label(m, c): V2_BATCH_OVERHEAD if m == 2 else 0 for m, c in COMBINATIONS}
    sizes = _encoded(batch, records) if sampled(batch.base_offset, sample) else _uncompressed(batch, records)
    return {label(m, c): sizes[label(m, c)] for m, c in COMBINATIONS if label(m, c) in sizes}


def estimate(all_sums: dict[str, int], sampled_sums: dict[str, int]) -> dict[str, int]:
    """Totals for every combination from the sums over all batches (``all_sums``:
    the uncompressed sizes) and over the sampled ones (``sampled_sums``: every
    size): each compressed total is the sampled one scaled by how much more
    uncompressed data of that format there is in all batches than in the sample."""
    out = {}
    for magic, codec in COMBINATIONS:
        k, base = label(magic, codec), label(magic, "none")
        if codec == "none":
            out[k] = all_sums.get(k, 0)
        elif sampled_sums.get(base):
            out[k] = round(sampled_sums.get(k, 0) * all_sums.get(base, 0) / sampled_sums[base])
    return out
