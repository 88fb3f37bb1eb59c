"""Where things are in a log entry's header, from the generated layouts.

Every log entry, v2 batch or v0/v1 message, starts the same way (Kafka's
``Records``): an int64 offset, an int32 size, and the magic byte at the same
position in both layouts, so a reader can frame an entry before it knows its
format. The positions come from the generated constants; nothing here is
typed again.
"""

from __future__ import annotations

import struct

from kcodec.errors import BadLengthError, UnknownMagicError
from kcodec.generated.enums import COMPRESSION_TYPE
from kcodec.generated.legacy_log_entry import (
    LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE,
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
    LEGACY_MESSAGE_V1_OVERHEAD,
)
from kcodec.generated.record_batch import (
    RECORD_BATCH_V2_ATTRIBUTES_COMPRESSION_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK,
    RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
    RECORD_BATCH_V2_OFFSET_BATCH_LENGTH,
    RECORD_BATCH_V2_OFFSET_CRC,
    RECORD_BATCH_V2_OFFSET_MAGIC,
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

# ---- codec ids each format allows; zstd needs magic 2 (KIP-110)
V2_MAX_CODEC_ID = max(COMPRESSION_TYPE.values())
LEGACY_MAX_CODEC_ID = max(v for name, v in COMPRESSION_TYPE.items() if name != "zstd")

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
