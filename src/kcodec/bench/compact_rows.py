"""The opt-in rows of the log cleaner at the issue's scale: a partition of ``--partition-mib`` MiB (default
1 GiB: about 20 M records over 10 M distinct keys) in eight segments, the last one active, and
``kcodec compact`` (a dry run) next to ``kcodec verify`` on the same directory, run through
``kcodec.cli.main`` as a user runs them, interleaved, median of the repeats.

Record ``i`` (offset ``i``) has the key ``key-<j>`` with ``j = (i * 7919 mod records) // 2``: every
key twice, at scattered places, so most batches lose some of their records and one round of the cleaner
removes nearly half of them (the first record of every key whose second lies in the dirty range). Values
are 30 bytes, none for every 50th record (a tombstone); timestamps go up 1 ms a record. The partition is
built once per process in the benchmark's scratch directory."""

from __future__ import annotations

import contextlib
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path

from kcodec.bench.command_rows import scratch
from kcodec.bench.runner import Result
from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_BASE_OFFSET as BASE_OFFSET_AT
from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_BASE_TIMESTAMP as BASE_TIMESTAMP_AT
from kcodec.generated.record_batch import RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP as MAX_TIMESTAMP_AT

OPERATIONS = {
    "compact_partition": "kcodec compact (dry run, offset map large enough for every key) on a partition of "
    "--partition-mib MiB with half as many distinct keys as records, eight segments (the last active)",
    "verify_partition": "kcodec verify on the same partition directory",
}
FULL_PARTITION_MIB, QUICK_PARTITION_MIB = 1024, 32
SEGMENTS = 8
BATCH_RECORDS = 1000
RECORD_BYTES = 52  # a record in its batch, header share included (52.3 measured): 1 GiB holds 20.6 M records
VALUE = b"v" * 30
TOMBSTONE_EVERY = 50
KEY_STRIDE = 7919  # a prime: i * stride mod keys visits every key once per `keys` records
BASE_TIMESTAMP = 1_700_000_000_000
IMPLEMENTATION = "kcodec"
_I64, _U32 = struct.Struct(">q"), struct.Struct(">I")
TARGET_RATIO = 3.0  # the issue: the dry run within 3x of verify on the same partition


def shape(mib: int) -> tuple[int, int]:
    """(records, distinct keys) of a partition of ``mib`` MiB."""
    batches = max((mib << 20) // RECORD_BYTES // BATCH_RECORDS, SEGMENTS)
    if batches * BATCH_RECORDS % KEY_STRIDE == 0:
        batches -= 1
    records = batches * BATCH_RECORDS
    return records, records // 2


def build_partition(directory: Path, mib: int) -> tuple[int, int]:
    """Write the partition (unless ``directory`` holds it already); (records, keys). One batch is encoded;
    the others are that batch with their keys, base offset, timestamps and CRC put in place (every batch
    has the same layout: keys of one length, tombstones at the same places)."""
    records, keys = shape(mib)
    done = directory / "built"
    if done.is_file():
        return records, keys
    from kcodec.log.writer import SegmentWriter
    from kcodec.records.encode import NewRecord, encode_batch
    from kcodec.records.framing import V2_CRC_OFFSET, V2_CRC_START
    from kcodec.records.framing import V2_RECORDS_OFFSET as RECORDS
    from kcodec.runtime.crc import crc32c

    names = [b"key-%010d" % j for j in range(keys)]
    template = encode_batch(
        [
            NewRecord(
                key=names[i],
                value=None if i % TOMBSTONE_EVERY == TOMBSTONE_EVERY - 1 else VALUE,
                timestamp=BASE_TIMESTAMP + i,
            )
            for i in range(BATCH_RECORDS)
        ],
        base_offset=0,
    )
    places, at = [], RECORDS
    for i in range(BATCH_RECORDS):  # where each record's key lies in the batch
        at = template.index(names[i], at)
        places.append(at)
    width = len(names[0])
    segment_bytes = -(-records // BATCH_RECORDS // SEGMENTS) * len(template)
    buf = bytearray(template)
    with SegmentWriter(directory, base_offset=0, segment_bytes=segment_bytes) as writer:
        chunk = []
        for start in range(0, records, BATCH_RECORDS):
            for i, place in enumerate(places, start):
                buf[place : place + width] = names[(i * KEY_STRIDE) % records >> 1]
            _I64.pack_into(buf, BASE_OFFSET_AT, start)
            _I64.pack_into(buf, BASE_TIMESTAMP_AT, BASE_TIMESTAMP + start)
            _I64.pack_into(buf, MAX_TIMESTAMP_AT, BASE_TIMESTAMP + start + BATCH_RECORDS - 1)
            _U32.pack_into(buf, V2_CRC_OFFSET, crc32c(memoryview(buf)[V2_CRC_START:]))
            chunk.append(bytes(buf))
            if len(chunk) == 64:
                writer.append(b"".join(chunk))
                chunk = []
        if chunk:
            writer.append(b"".join(chunk))
    done.write_text(f"{records} {keys}\n")
    return records, keys


def measure(operations: list[str], mib: int, repeats: int, main, say: Callable[[str], None]) -> list[Result]:
    """One Result per operation, over the same partition directory (in the benchmark's scratch directory),
    timing ``main`` (``kcodec.cli.main``); records/s and MB/s are of the whole partition (its records, its
    segment bytes)."""
    if main is None:
        return [Result(IMPLEMENTATION, op, "none", status="n/a", reason="no command line to time") for op in operations]
    directory = scratch() / f"compact-{mib}mib" / "bench-0"
    records, keys = shape(mib)
    say(f"compaction: a {mib:,} MiB partition, {records:,} records over {keys:,} keys")
    t0 = time.perf_counter()
    build_partition(directory, mib)
    size = sum(p.stat().st_size for p in directory.glob("*.log"))
    say(f"compaction: partition ready ({size / 2**20:,.0f} MiB) in {time.perf_counter() - t0:.0f} s")
    now = BASE_TIMESTAMP + records
    # Kafka's 24 bytes a slot at load factor 0.9, for every key: one round cleans the whole dirty range
    budget = -(-keys * 24 * 10 // 9) + 24
    argv = {
        "compact_partition": ["compact", str(directory), "--now", str(now), "--dedupe-buffer-size", str(budget)],
        "verify_partition": ["verify", str(directory)],
    }
    results = {op: Result(IMPLEMENTATION, op, "none", records, size) for op in operations}
    for r in range(repeats):
        order = operations if r % 2 == 0 else operations[::-1]
        for op in order:
            result = results[op]
            if result.status != "ok":
                continue
            try:
                with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                    t = time.perf_counter()
                    code = main(argv[op])
                    elapsed = time.perf_counter() - t
                if code != 0:
                    raise AssertionError(f"kcodec {' '.join(argv[op])} exited {code}")
            except Exception as exc:  # a row that breaks is reported, not fatal
                result.status, result.reason, result.times = "error", f"{type(exc).__name__}: {exc}", []
                continue
            result.times.append(elapsed)
        say(f"compaction: repeat {r + 1}/{repeats}")
    return [results[op] for op in operations]


def targets(ix, check) -> None:
    """The issue's target: the dry run within 3x of verify on the same partition."""
    compact = ix.get((IMPLEMENTATION, "compact_partition", "none"))
    verify = ix.get((IMPLEMENTATION, "verify_partition", "none"))
    if compact is None or verify is None:
        return
    v = compact.median_s / verify.median_s if compact.ok and verify.ok else None
    size = f"{compact.raw_bytes / 2**20:,.0f} MiB"
    note = "" if v is not None else "a row failed"
    verdict = None if v is None else v <= TARGET_RATIO
    if v is not None and compact.raw_bytes < 1 << 30:
        note, verdict = f"the target is for a 1 GiB partition; this one is {size}", None
    check(f"compact dry run vs verify on the same {size} partition", "none", v, f"<= {TARGET_RATIO:g}x", verdict, note)
