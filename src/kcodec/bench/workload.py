"""The benchmark workload, built deterministically from a seed.

Records: ``records`` records in batches of ``batch_size``; each has a 16-byte
random key, a 200-byte value (100 random bytes, then 100 bytes of repetitive
text), one header ``h`` with 8 random bytes, and a timestamp increasing by 1 ms.
The same records are encoded by kcodec as v2 batches (one per ``batch_size``
records) with every codec, and as v1 message sets (headers dropped: v1 has
none; compressed: one wrapper per batch; zstd does not exist in v1).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
V1_CODECS = ("none", "gzip", "snappy", "lz4")
DEFAULT_SEED = 20_240_601
BASE_TIMESTAMP = 1_700_000_000_000
KEY_SIZE, RANDOM_VALUE_SIZE, TEXT_VALUE_SIZE, HEADER_VALUE_SIZE = 16, 100, 100, 8
_PHRASE = b"The quick brown fox jumps over the lazy dog; Kafka appends it to the log. "
_TEXT = _PHRASE * (2 + TEXT_VALUE_SIZE // len(_PHRASE))

#: Compression levels the encoded workload and the encode rows use, per codec.
#: gzip 9 because aiokafka and kafka-python hard-code 9; lz4 9 and zstd 3 are
#: Kafka's defaults (and aiokafka's); snappy and none have no level.
ENCODE_LEVELS = {"none": None, "gzip": 9, "snappy": None, "lz4": 9, "zstd": 3}


@dataclass
class Workload:
    records: int
    batch_size: int
    seed: int
    keys: list[bytes]
    values: list[bytes]
    header_values: list[bytes]
    timestamps: list[int]
    codecs: tuple[str, ...]
    v2: dict[str, bytes] = field(default_factory=dict)  # codec -> the whole log
    v1: dict[str, bytes] = field(default_factory=dict)
    v2_ends: dict[str, list[int]] = field(default_factory=dict)  # codec -> byte end of each batch
    v1_ends: dict[str, list[int]] = field(default_factory=dict)
    #: the command line the command rows time (``kcodec bench`` hands in ``kcodec.cli.main``): argv -> status
    command: Callable[[list[str]], int] | None = None

    @property
    def batch_count(self) -> int:
        return len(self.batch_bounds())

    def batch_bounds(self) -> list[tuple[int, int]]:
        n, b = self.records, self.batch_size
        return [(start, min(start + b, n)) for start in range(0, n, b)]

    def blob(self, magic: int, codec: str) -> bytes:
        return (self.v2 if magic == 2 else self.v1)[codec]

    def head(self, batches: int = 1) -> Workload:
        """The first ``batches`` batches only (the warm-up of every row)."""
        batches = min(batches, self.batch_count)
        n = self.batch_bounds()[batches - 1][1]
        return replace(
            self,
            records=n,
            keys=self.keys[:n],
            values=self.values[:n],
            header_values=self.header_values[:n],
            timestamps=self.timestamps[:n],
            v2={c: b[: self.v2_ends[c][batches - 1]] for c, b in self.v2.items()},
            v1={c: b[: self.v1_ends[c][batches - 1]] for c, b in self.v1.items()},
            v2_ends={c: e[:batches] for c, e in self.v2_ends.items()},
            v1_ends={c: e[:batches] for c, e in self.v1_ends.items()},
        )

    @cached_property
    def kcodec_batches(self) -> list[list]:
        return self.new_records()

    @cached_property
    def client_batches(self) -> list[list[tuple]]:
        return self.client_records()

    def new_records(self) -> list[list]:
        """kcodec encode input: one list of NewRecord per batch (offsets implied by base_offset)."""
        from kcodec.records.encode import NewRecord

        return [
            [
                NewRecord(
                    key=self.keys[i],
                    value=self.values[i],
                    headers=(("h", self.header_values[i]),),
                    timestamp=self.timestamps[i],
                )
                for i in range(start, end)
            ]
            for start, end in self.batch_bounds()
        ]

    def client_records(self) -> list[list[tuple]]:
        """aiokafka / kafka-python builder input: (offset delta, timestamp, key, value, headers) per batch."""
        return [
            [
                (i - start, self.timestamps[i], self.keys[i], self.values[i], [("h", self.header_values[i])])
                for i in range(start, end)
            ]
            for start, end in self.batch_bounds()
        ]

    @property
    def raw_bytes_v2(self) -> int:
        """Bytes of the uncompressed v2 log: what MB/s is computed on for v2 rows."""
        return len(self.v2["none"])

    @property
    def raw_bytes_v1(self) -> int:
        return len(self.v1["none"]) if "none" in self.v1 else 0


def make_records(records: int, seed: int = DEFAULT_SEED):
    rng = random.Random(seed)
    keys, values, header_values, timestamps = [], [], [], []
    for i in range(records):
        keys.append(rng.randbytes(KEY_SIZE))
        start = rng.randrange(len(_PHRASE))
        values.append(rng.randbytes(RANDOM_VALUE_SIZE) + _TEXT[start : start + TEXT_VALUE_SIZE])
        header_values.append(rng.randbytes(HEADER_VALUE_SIZE))
        timestamps.append(BASE_TIMESTAMP + i)
    return keys, values, header_values, timestamps


def build_workload(
    records: int = 200_000,
    batch_size: int = 1_000,
    *,
    codecs=CODECS,
    seed: int = DEFAULT_SEED,
    v1: bool = True,
    command: Callable[[list[str]], int] | None = None,
) -> Workload:
    """The records and their encodings. "none" is always built: MB/s is measured on it."""
    from kcodec.records.encode import encode_batch

    if records < 1 or batch_size < 1:
        raise ValueError("records and batch_size must be at least 1")
    codecs = tuple(c for c in CODECS if c in codecs or c == "none")
    keys, values, header_values, timestamps = make_records(records, seed)
    w = Workload(records, batch_size, seed, keys, values, header_values, timestamps, codecs, command=command)
    batches = w.new_records()
    bounds = w.batch_bounds()
    for codec in codecs:
        level = ENCODE_LEVELS[codec]
        w.v2[codec], w.v2_ends[codec] = _join(
            encode_batch(batch, magic=2, compression=codec, compression_level=level, base_offset=start)
            for batch, (start, _) in zip(batches, bounds)
        )
        if v1 and codec in V1_CODECS:
            w.v1[codec], w.v1_ends[codec] = _join(
                encode_batch(
                    batch, magic=1, compression=codec, compression_level=level, base_offset=start, allow_lossy=True
                )
                for batch, (start, _) in zip(batches, bounds)
            )
    return w


def _join(parts) -> tuple[bytes, list[int]]:
    chunks, ends, end = [], [], 0
    for part in parts:
        chunks.append(part)
        end += len(part)
        ends.append(end)
    return b"".join(chunks), ends
