"""Where things are in a log entry's header, from the generated layouts.

Every log entry, v2 batch or v0/v1 message, starts the same way (Kafka's
``Records``): an int64 offset, an int32 size, and the magic byte at the same
position in both layouts, so a reader can frame an entry before it knows its
format. The positions come from the generated constants; nothing here is
typed again.

It also reads what the log layer needs from an entry's first bytes without
decoding it: its size, its last offset, and a v2 batch's producer and
transaction bits.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kcodec.errors import BadLengthError, UnknownMagicError
from kcodec.generated.enums import COMPRESSION_TYPE, COMPRESSION_TYPE_BY_VALUE
from kcodec.generated.legacy_log_entry import (
    LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE,
    LEGACY_LOG_ENTRY_V0_OFFSET_OFFSET,
    LEGACY_LOG_ENTRY_V0_OFFSET_SIZE,
    LEGACY_LOG_ENTRY_V0_OVERHEAD,
)
from kcodec.generated.legacy_message import (
    LEGACY_MESSAGE_V0_ATTRIBUTES_COMPRESSION_MASK,
    LEGACY_MESSAGE_V0_OFFSET_ATTRIBUTES,
    LEGACY_MESSAGE_V0_OFFSET_CRC,
    LEGACY_MESSAGE_V0_OFFSET_KEY,
    LEGACY_MESSAGE_V0_OFFSET_MAGIC,
    LEGACY_MESSAGE_V0_OVERHEAD,
    LEGACY_MESSAGE_V1_ATTRIBUTES_TIMESTAMP_TYPE_MASK,
    LEGACY_MESSAGE_V1_OFFSET_KEY,
    LEGACY_MESSAGE_V1_OFFSET_TIMESTAMP,
    LEGACY_MESSAGE_V1_OVERHEAD,
)
from kcodec.generated.record_batch import (
    RECORD_BATCH_V2_ATTRIBUTES_COMPRESSION_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK,
    RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
    RECORD_BATCH_V2_OFFSET_BASE_OFFSET,
    RECORD_BATCH_V2_OFFSET_BASE_SEQUENCE,
    RECORD_BATCH_V2_OFFSET_BASE_TIMESTAMP,
    RECORD_BATCH_V2_OFFSET_BATCH_LENGTH,
    RECORD_BATCH_V2_OFFSET_CRC,
    RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA,
    RECORD_BATCH_V2_OFFSET_MAGIC,
    RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP,
    RECORD_BATCH_V2_OFFSET_PARTITION_LEADER_EPOCH,
    RECORD_BATCH_V2_OFFSET_PRODUCER_EPOCH,
    RECORD_BATCH_V2_OFFSET_PRODUCER_ID,
    RECORD_BATCH_V2_OFFSET_RECORDS,
    RECORD_BATCH_V2_OFFSET_RECORDS_COUNT,
    RECORD_BATCH_V2_OVERHEAD,
)

# ---- every entry (Records.LOG_OVERHEAD, Records.HEADER_SIZE_UP_TO_MAGIC)
LOG_OVERHEAD = LEGACY_LOG_ENTRY_V0_OVERHEAD  # offset + size: what the size field does not count
SIZE_OFFSET = LEGACY_LOG_ENTRY_V0_OFFSET_SIZE
MAGIC_OFFSET = RECORD_BATCH_V2_OFFSET_MAGIC
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # the magic is one byte
if (SIZE_OFFSET, MAGIC_OFFSET) != (
    RECORD_BATCH_V2_OFFSET_BATCH_LENGTH,
    LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V0_OFFSET_MAGIC,
):
    raise ImportError("the schemas no longer put size and magic at the same place in every entry")

# ---- v0 / v1 messages (LegacyRecord), positions in the whole entry
MIN_LEGACY_RECORD_SIZE = LEGACY_MESSAGE_V0_OVERHEAD  # LegacyRecord.RECORD_OVERHEAD_V0
MIN_LEGACY_V1_RECORD_SIZE = LEGACY_MESSAGE_V1_OVERHEAD  # LegacyRecord.RECORD_OVERHEAD_V1
LEGACY_CRC_OFFSET = LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V0_OFFSET_CRC
LEGACY_CRC_START = MAGIC_OFFSET  # the CRC-32 covers magic..end
LEGACY_ATTRIBUTES_OFFSET = LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V0_OFFSET_ATTRIBUTES
LEGACY_COMPRESSION_MASK = LEGACY_MESSAGE_V0_ATTRIBUTES_COMPRESSION_MASK
# where the key's int32 length is, per magic; the value's int32 length follows the key
LEGACY_KEY_LENGTH_OFFSET = {
    0: LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V0_OFFSET_KEY,
    1: LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V1_OFFSET_KEY,
}
LEGACY_TIMESTAMP_TYPE_MASK = LEGACY_MESSAGE_V1_ATTRIBUTES_TIMESTAMP_TYPE_MASK  # v1 only
LEGACY_V1_TIMESTAMP_OFFSET = LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE + LEGACY_MESSAGE_V1_OFFSET_TIMESTAMP

# ---- v2 batches (DefaultRecordBatch)
V2_OVERHEAD = RECORD_BATCH_V2_OVERHEAD  # RECORD_BATCH_OVERHEAD: the header before the records
V2_MIN_BATCH_LENGTH = V2_OVERHEAD - LOG_OVERHEAD
V2_CRC_OFFSET = RECORD_BATCH_V2_OFFSET_CRC
V2_CRC_START = RECORD_BATCH_V2_OFFSET_ATTRIBUTES  # the CRC-32C covers attributes..end
V2_RECORDS_COUNT_OFFSET = RECORD_BATCH_V2_OFFSET_RECORDS_COUNT
V2_RECORDS_OFFSET = RECORD_BATCH_V2_OFFSET_RECORDS
# The attributes are a big-endian int16 whose flags all sit in its low byte: one byte read tests them.
V2_ATTRIBUTES_LOW_BYTE = RECORD_BATCH_V2_OFFSET_ATTRIBUTES + 1
V2_COMPRESSION_MASK = RECORD_BATCH_V2_ATTRIBUTES_COMPRESSION_MASK
V2_CONTROL_MASK = RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK
V2_TIMESTAMP_TYPE_MASK = RECORD_BATCH_V2_ATTRIBUTES_TIMESTAMP_TYPE_MASK
V2_MAX_TIMESTAMP_OFFSET = RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP
V2_PARTITION_LEADER_EPOCH_OFFSET = RECORD_BATCH_V2_OFFSET_PARTITION_LEADER_EPOCH

# ---- codec ids each format allows; zstd needs magic 2 (KIP-110)
V2_MAX_CODEC_ID = max(COMPRESSION_TYPE.values())
LEGACY_MAX_CODEC_ID = max(v for name, v in COMPRESSION_TYPE.items() if name != "zstd")
#: codec names by id (None for an id no codec has), as the kernel's batch walks take them
V2_CODEC_NAMES = tuple(COMPRESSION_TYPE_BY_VALUE.get(i) for i in range(V2_MAX_CODEC_ID + 1))

_I64_I32 = struct.Struct(">qi")


def is_control_batch(entry, position: int = 0) -> bool:
    """Whether the v2 batch at ``position`` of ``entry`` has the control attribute set."""
    return bool(entry[position + V2_ATTRIBUTES_LOW_BYTE] & V2_CONTROL_MASK)


def magic_error(magic: int, position: int, base_offset: int) -> UnknownMagicError:
    """Kafka's error for a magic byte it does not know (shown signed, as Java reads a byte)."""
    return UnknownMagicError(
        f"Invalid magic found in record: {magic if magic < 128 else magic - 256}",
        position=position + MAGIC_OFFSET,
        base_offset=base_offset,
        field="magic",
    )


def check_min_size(offset: int, size: int, position: int) -> None:
    """An entry's size field below the smallest message (Kafka's ``LegacyRecord.RECORD_OVERHEAD_V0``)."""
    if size < MIN_LEGACY_RECORD_SIZE:
        raise BadLengthError(
            f"Record size {size} is less than the minimum record overhead ({MIN_LEGACY_RECORD_SIZE})",
            position=position + SIZE_OFFSET,
            base_offset=offset,
            field="size",
        )


def check_header(header: bytes, position: int, max_batch_size: int) -> int:
    """Validate the first :data:`HEADER_SIZE_UP_TO_MAGIC` bytes of an entry (the size and the magic, as
    Kafka's log input streams do before reading on); returns the whole entry's size."""
    offset, size = _I64_I32.unpack_from(header, 0)
    check_min_size(offset, size, position)
    if size > max_batch_size:
        raise BadLengthError(
            f"Record size {size} exceeds the largest allowable message size ({max_batch_size}).",
            position=position + SIZE_OFFSET,
            base_offset=offset,
            field="size",
        )
    magic = header[MAGIC_OFFSET]
    if magic > 2:
        raise magic_error(magic, position, offset)
    return LOG_OVERHEAD + size


# ---- read undecoded: an entry's size and last offset, a v2 batch's producer bits

HEADER_SIZE = RECORD_BATCH_V2_OVERHEAD  # the longest header: a v2 batch's (legacy entries' are shorter)
_V2 = 2
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")


def _v2_header_struct() -> struct.Struct:
    """Every field of a v2 batch header, base offset to records count, as one big-endian struct: each
    field's size is the distance to the next field's generated offset; the CRC is unsigned."""
    starts = (
        RECORD_BATCH_V2_OFFSET_BASE_OFFSET,
        RECORD_BATCH_V2_OFFSET_BATCH_LENGTH,
        RECORD_BATCH_V2_OFFSET_PARTITION_LEADER_EPOCH,
        RECORD_BATCH_V2_OFFSET_MAGIC,
        RECORD_BATCH_V2_OFFSET_CRC,
        RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
        RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA,
        RECORD_BATCH_V2_OFFSET_BASE_TIMESTAMP,
        RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP,
        RECORD_BATCH_V2_OFFSET_PRODUCER_ID,
        RECORD_BATCH_V2_OFFSET_PRODUCER_EPOCH,
        RECORD_BATCH_V2_OFFSET_BASE_SEQUENCE,
        RECORD_BATCH_V2_OFFSET_RECORDS_COUNT,
        RECORD_BATCH_V2_OFFSET_RECORDS,
    )
    codes = {1: "b", 2: "h", 4: "i", 8: "q"}
    fields = ("I" if at == RECORD_BATCH_V2_OFFSET_CRC else codes[nxt - at] for at, nxt in zip(starts, starts[1:]))
    return struct.Struct(">" + "".join(fields))


#: a v2 batch header: (base offset, batch length, partition leader epoch, magic, crc, attributes, last offset
#: delta, base timestamp, max timestamp, producer id, producer epoch, base sequence, records count)
V2_HEADER = _v2_header_struct()


def entry_size(head: bytes) -> int | None:
    """The whole size of the entry whose first bytes are ``head`` (offset and
    size fields included), or None when ``head`` is too short to say."""
    if len(head) < LEGACY_LOG_ENTRY_V0_OVERHEAD:
        return None
    return LEGACY_LOG_ENTRY_V0_OVERHEAD + _I32.unpack_from(head, LEGACY_LOG_ENTRY_V0_OFFSET_SIZE)[0]


def last_offset(head: bytes) -> int | None:
    """The last offset of the entry whose first bytes are ``head``: a v2 batch's
    base offset + last offset delta, a legacy entry's own offset (a compressed
    wrapper carries its last inner offset). None when ``head`` is too short."""
    if len(head) <= RECORD_BATCH_V2_OFFSET_MAGIC:
        return None
    if head[RECORD_BATCH_V2_OFFSET_MAGIC] == _V2:
        if len(head) < RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA + _I32.size:
            return None
        return (
            _I64.unpack_from(head, RECORD_BATCH_V2_OFFSET_BASE_OFFSET)[0]
            + _I32.unpack_from(head, RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA)[0]
        )
    return _I64.unpack_from(head, LEGACY_LOG_ENTRY_V0_OFFSET_OFFSET)[0]


class ProducerHeader(NamedTuple):
    """The fields of a v2 batch header that transaction tracking and producer-state checks read."""

    base_offset: int
    producer_id: int
    is_transactional: bool
    is_control: bool
    producer_epoch: int = -1
    base_sequence: int = -1
    last_offset_delta: int = 0
    record_count: int = 0
    base_timestamp: int = -1
    max_timestamp: int = -1

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta


def producer_header(raw: bytes) -> ProducerHeader | None:
    """The producer fields of a v2 batch's header; None for legacy entries
    (which have no producers) and bytes shorter than a v2 header."""
    if len(raw) < RECORD_BATCH_V2_OVERHEAD or raw[RECORD_BATCH_V2_OFFSET_MAGIC] != _V2:
        return None
    attributes = _I16.unpack_from(raw, RECORD_BATCH_V2_OFFSET_ATTRIBUTES)[0]
    return ProducerHeader(
        _I64.unpack_from(raw, RECORD_BATCH_V2_OFFSET_BASE_OFFSET)[0],
        _I64.unpack_from(raw, RECORD_BATCH_V2_OFFSET_PRODUCER_ID)[0],
        bool(attributes & RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK),
        bool(attributes & RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK),
        _I16.unpack_from(raw, RECORD_BATCH_V2_OFFSET_PRODUCER_EPOCH)[0],
        _I32.unpack_from(raw, RECORD_BATCH_V2_OFFSET_BASE_SEQUENCE)[0],
        _I32.unpack_from(raw, RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA)[0],
        _I32.unpack_from(raw, RECORD_BATCH_V2_OFFSET_RECORDS_COUNT)[0],
        _I64.unpack_from(raw, RECORD_BATCH_V2_OFFSET_BASE_TIMESTAMP)[0],
        _I64.unpack_from(raw, RECORD_BATCH_V2_OFFSET_MAX_TIMESTAMP)[0],
    )
