"""What the log layer reads from an entry's first bytes without decoding it:
its size, its last offset, and a v2 batch's producer and transaction bits.

Positions and masks are the generated layouts' (Kafka's ``DefaultRecordBatch``
and the legacy ``LegacyRecord`` log entry), never typed here.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kcodec.generated.legacy_log_entry import (
    LEGACY_LOG_ENTRY_V0_OFFSET_OFFSET,
    LEGACY_LOG_ENTRY_V0_OFFSET_SIZE,
    LEGACY_LOG_ENTRY_V0_OVERHEAD,
)
from kcodec.generated.record_batch import (
    RECORD_BATCH_V2_ATTRIBUTES_CONTROL_MASK,
    RECORD_BATCH_V2_ATTRIBUTES_TRANSACTIONAL_MASK,
    RECORD_BATCH_V2_OFFSET_ATTRIBUTES,
    RECORD_BATCH_V2_OFFSET_BASE_OFFSET,
    RECORD_BATCH_V2_OFFSET_LAST_OFFSET_DELTA,
    RECORD_BATCH_V2_OFFSET_MAGIC,
    RECORD_BATCH_V2_OFFSET_PRODUCER_ID,
    RECORD_BATCH_V2_OVERHEAD,
)

__all__ = ["HEADER_SIZE", "entry_size", "last_offset", "ProducerHeader", "producer_header"]

HEADER_SIZE = RECORD_BATCH_V2_OVERHEAD  # the longest header: a v2 batch's (legacy entries' are shorter)
_V2 = 2
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")


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
    """The fields of a v2 batch header that transaction tracking reads."""

    base_offset: int
    producer_id: int
    is_transactional: bool
    is_control: bool


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
    )
