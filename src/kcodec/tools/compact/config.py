"""The topic and broker settings Kafka's log cleaner reads, with Kafka's defaults, and the release whose
cleaner is simulated."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CleanerConfig", "DELETE_HORIZON_RELEASE", "OFFSET_MAP_ENTRY_BYTES", "parse_release"]

#: KIP-534 (Kafka 3.1): v2 batches carry their tombstones' and markers' delete horizon; earlier cleaners
#: decide every batch by segment modification times, as they still do for v0/v1 batches
DELETE_HORIZON_RELEASE = (3, 1)
#: SkimpyOffsetMap: an MD5 hash (16 bytes) and an offset (8 bytes) per slot
OFFSET_MAP_ENTRY_BYTES = 24


@dataclass(frozen=True)
class CleanerConfig:
    """``now_ms`` is the cleaner's clock (the time a broker would clean at). The rest are Kafka's settings of
    the same names (topic: ``delete.retention.ms``, ``min.compaction.lag.ms``, ``segment.bytes``,
    ``segment.index.bytes``, ``min.cleanable.dirty.ratio``; broker: ``producer.id.expiration.ms``,
    ``log.cleaner.dedupe.buffer.size`` over ``log.cleaner.threads``, ``log.cleaner.io.buffer.load.factor``)."""

    now_ms: int
    delete_retention_ms: int = 86_400_000
    min_compaction_lag_ms: int = 0
    segment_bytes: int = 1 << 30
    segment_index_bytes: int = 10 * 1024 * 1024
    min_cleanable_dirty_ratio: float = 0.5
    producer_id_expiration_ms: int = 86_400_000
    dedupe_buffer_size: int = 128 * 1024 * 1024
    cleaner_threads: int = 1
    dedupe_buffer_load_factor: float = 0.9
    release: tuple[int, int] = (4, 1)

    @property
    def horizon_in_batches(self) -> bool:
        """Whether v2 batches record their delete horizon (Kafka 3.1 and later)."""
        return self.release >= DELETE_HORIZON_RELEASE

    @property
    def max_map_entries(self) -> int:
        """The keys the offset map takes before a cleaning round stops (``slots * load factor``)."""
        memory = min(self.dedupe_buffer_size // max(self.cleaner_threads, 1), (1 << 31) - 1)
        return int((memory // OFFSET_MAP_ENTRY_BYTES) * self.dedupe_buffer_load_factor)


def parse_release(text: str) -> tuple[int, int]:
    """A Kafka release ``X.Y`` as a tuple; ValueError for anything else."""
    major, minor = (int(part) for part in str(text).strip().split("."))
    return major, minor
