"""What a Kafka broker does with a producer's batch, by release: the one table ``kcodec append`` reads.

Each row is the release where a rule of the append path changed (``LogValidator``, ``UnifiedLog`` /
``Log.append``, the topic configs' defaults); a release between two rows follows the older one (2.4
follows 2.1). The facts are from Kafka's sources, named in each row's ``source``; the code that applies
them (:mod:`kcodec.records.log_validator`) has no release checks of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kcodec.errors import KcodecError

__all__ = ["BROKER_RELEASES", "BrokerRelease", "UnknownReleaseError", "broker_release", "format_version_magic"]

LONG_MAX = (1 << 63) - 1
ONE_HOUR_MS = 3_600_000


class UnknownReleaseError(KcodecError, ValueError):
    """A Kafka release this table does not cover, or a config it did not have."""


@dataclass(frozen=True)
class BrokerRelease:
    """The append rules of one Kafka release (and of the releases up to the next row)."""

    name: str
    version: tuple[int, ...]
    #: the newest message format the release writes (message.format.version's default)
    newest_magic: int
    #: the stored magic follows the topic's message.format.version (False from 4.0: always v2)
    magic_from_format_version: bool
    #: inner offsets of a compressed set: "absolute" (0.8, every compressed set is rebuilt) or "relative"
    inner_offsets: str
    #: how CreateTime timestamps are bounded: "none" (no timestamps), "difference"
    #: (message.timestamp.difference.max.ms, both sides), "before_after" (KIP-937's two configs)
    timestamp_bounds: str
    #: message.timestamp.after.max.ms' default (KIP-1030: one hour from 4.0)
    timestamp_after_max_ms: int
    #: max.message.bytes' default
    max_message_bytes: int
    #: ZStandard is accepted (KIP-110); before, a zstd batch is UNSUPPORTED_COMPRESSION_TYPE
    zstd: bool
    #: producer ids, sequences and transactions exist (KIP-98)
    producer_state: bool
    #: a client's v2 batch must have base offset 0 (INVALID_RECORD otherwise); checked in the 4.x
    #: sources, the release that added it is not pinned down, so older rows do not check it
    client_base_offset_zero: bool
    source: str

    def magic_for(self, format_version: str | None) -> int:
        """The magic this release stores for a topic whose message.format.version is ``format_version``."""
        if format_version is None or not self.magic_from_format_version:
            return self.newest_magic
        return min(self.newest_magic, format_version_magic(format_version))


def _after(previous: BrokerRelease, name: str, source: str, **changed) -> BrokerRelease:
    """The release ``name``: ``previous``'s rules with what it ``changed``."""
    return replace(previous, name=name, version=tuple(int(p) for p in name.split(".")), source=source, **changed)


_KAFKA_0_8 = BrokerRelease(
    name="0.8",
    version=(0, 8),
    newest_magic=0,
    magic_from_format_version=False,
    inner_offsets="absolute",
    timestamp_bounds="none",
    timestamp_after_max_ms=LONG_MAX,
    max_message_bytes=1_000_000,
    zstd=False,
    producer_state=False,
    client_base_offset_zero=False,
    source="0.8.2 core/.../message/ByteBufferMessageSet.scala assignOffsets (a compressed set is always "
    "decompressed and rewritten with absolute inner offsets); compression.type from 0.8.2 (KAFKA-1499); "
    "message.max.bytes 1000000",
)
_KAFKA_0_10 = _after(
    _KAFKA_0_8,
    "0.10",
    "0.10.0 ByteBufferMessageSet.validateMessagesAndAssignOffsets (KIP-31/32: relative inner "
    "offsets, inPlaceAssignment, LogAppendTime, message.timestamp.difference.max.ms); message.max.bytes "
    "1000000 + LogOverhead since 0.9",
    newest_magic=1,
    magic_from_format_version=True,
    inner_offsets="relative",
    timestamp_bounds="difference",
    max_message_bytes=1_000_012,
)
_KAFKA_0_11 = _after(
    _KAFKA_0_10,
    "0.11",
    "0.11.0 core/.../log/LogValidator.scala (the v2 batch, KIP-98 producer ids, sequences and "
    "transactions; ProducerStateManager)",
    newest_magic=2,
    producer_state=True,
)
_KAFKA_1_1 = _after(
    _KAFKA_0_11,
    "1.1",
    "KAFKA-4203 (apache/kafka#4154): message.max.bytes 1024 * 1024 + LogOverhead",
    max_message_bytes=1_048_588,
)
_KAFKA_2_1 = _after(
    _KAFKA_1_1,
    "2.1",
    "KIP-110: ZStandard (LogValidator: zstd below IBP 2.1 is UNSUPPORTED_COMPRESSION_TYPE)",
    zstd=True,
)
_KAFKA_3_6 = _after(
    _KAFKA_2_1,
    "3.6",
    "KIP-937: message.timestamp.before.max.ms / after.max.ms replace difference.max.ms; "
    "LogValidator moved to Java (storage/.../log/LogValidator.java, 3.5)",
    timestamp_bounds="before_after",
)
_KAFKA_4_0 = _after(
    _KAFKA_3_6,
    "4.0",
    "4.0 UnifiedLog.appendAsLeader writes RecordBatch.CURRENT_MAGIC_VALUE (message.format.version "
    "removed); KIP-1030 (apache/kafka#18106): message.timestamp.after.max.ms defaults to one hour",
    magic_from_format_version=False,
    timestamp_after_max_ms=ONE_HOUR_MS,
    client_base_offset_zero=True,
)

#: each row the release where a rule changed, and only what changed written out (the rest carries over)
BROKER_RELEASES: tuple[BrokerRelease, ...] = (
    _KAFKA_0_8,
    _KAFKA_0_10,
    _KAFKA_0_11,
    _KAFKA_1_1,
    _KAFKA_2_1,
    _KAFKA_3_6,
    _KAFKA_4_0,
)

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


def _parse(text: str, what: str) -> tuple[int, ...]:
    m = _VERSION.match(text.strip())
    if not m:
        raise UnknownReleaseError(f"{what} {text!r} is not a Kafka version (like 0.10.2, 2.8 or 4.0)")
    return tuple(int(g) for g in m.groups() if g is not None)


def broker_release(version: str) -> BrokerRelease:
    """The rules of Kafka ``version`` ("0.10.2", "3.9", "4.0", or "current" for the newest row)."""
    if version.strip().lower() == "current":
        return BROKER_RELEASES[-1]
    wanted = _parse(version, "--kafka")
    if wanted < BROKER_RELEASES[0].version:
        raise UnknownReleaseError(
            f"Kafka {version} is older than the releases covered ({BROKER_RELEASES[0].name} and later); "
            "0.7 brokers assign no offsets: see kcodec convert --from 0.7"
        )
    row = BROKER_RELEASES[0]
    for candidate in BROKER_RELEASES:
        if candidate.version <= wanted:
            row = candidate
    return row


def format_version_magic(format_version: str) -> int:
    """The magic of a message.format.version value (0.8.x -> 0, 0.10.x -> 1, 0.11 and later -> 2)."""
    parts = _parse(format_version.split("-")[0], "message.format.version")  # "0.10.0-IV1" is valid too
    if parts < (0, 10):
        return 0
    if parts < (0, 11):
        return 1
    return 2
