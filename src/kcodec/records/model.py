"""What kcodec hands to users: batches and records with Kafka's semantics
applied (absolute offsets, effective timestamps, control records by name)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from kcodec.generated.enums import CONTROL_RECORD_TYPE, TIMESTAMP_TYPE, TIMESTAMP_TYPE_BY_VALUE

try:  # the C descriptor namedtuple fields use: about twice as fast as property(itemgetter(i))
    # CPython's private C descriptor is not in typeshed
    from collections import _tuplegetter as _field  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Pythons

    def _field(index: int, doc: str):
        return property(itemgetter(index), doc=doc)


class TimestampType(enum.IntEnum):
    """Kafka's timestamp types, with Kafka's ids (Spark's ``timestampType`` column)."""

    NO_TIMESTAMP_TYPE = -1  # v0 messages: not in the schemas, Kafka's TimestampType.NO_TIMESTAMP_TYPE
    CREATE_TIME = TIMESTAMP_TYPE["create_time"]
    LOG_APPEND_TIME = TIMESTAMP_TYPE["log_append_time"]

    @property
    def kafka_name(self) -> str:
        return _KAFKA_NAMES[self]

    @property
    def schema_name(self) -> str:
        """The name the schemas give this type in an attributes field (create_time, log_append_time);
        NO_TIMESTAMP_TYPE has none and is written as create_time, as Kafka writes v0 data."""
        return TIMESTAMP_TYPE_BY_VALUE.get(self.value, "create_time")

    @classmethod
    def from_schema(cls, name: str) -> TimestampType:
        return cls.LOG_APPEND_TIME if name == "log_append_time" else cls.CREATE_TIME


_KAFKA_NAMES = {
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
}

# Control record types by id, as Kafka's ControlRecordType names them; unknown ids read as UNKNOWN, which
# readers ignore.
CONTROL_TYPE_NAMES = {type_id: name.upper() for name, type_id in CONTROL_RECORD_TYPE.items()}
#: The control types of transaction markers (EndTransactionMarker: ABORT, COMMIT).
TRANSACTION_MARKERS = (CONTROL_RECORD_TYPE["abort"], CONTROL_RECORD_TYPE["commit"])


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """The decoded key (and, for transaction markers, value) of a control record."""

    type: int  # the type id as stored
    version: int  # control record key version
    coordinator_epoch: int | None = None  # ABORT / COMMIT only
    marker_version: int | None = None  # end transaction marker version, ABORT / COMMIT only

    @property
    def name(self) -> str:
        return CONTROL_TYPE_NAMES.get(self.type, "UNKNOWN")

    @property
    def is_transaction_marker(self) -> bool:
        return self.type in TRANSACTION_MARKERS


_RECORD_FIELDS = (
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "headers",
    "sequence",
    "control",
    "crc",
    "crc_valid",
    "magic",
)


class Record(tuple):
    """One logical record: a v2 record, or a v0/v1 message (inner messages too).

    An immutable tuple with named fields (like a namedtuple), so the compiled
    kernel can build records directly: ``offset`` (absolute), ``timestamp``
    (effective: the batch's append time under LogAppendTime; -1 for v0),
    ``timestamp_type``, ``key``, ``value``, ``headers`` (a tuple of (str key, bytes-or-None value)),
    ``sequence``, ``control`` (a :class:`ControlRecord` for control records),
    ``crc`` and ``crc_valid`` (v0/v1 messages carry their own CRC-32), ``magic``.
    """

    __slots__ = ()
    _fields = _RECORD_FIELDS

    def __new__(
        cls,
        offset: int,
        timestamp: int,
        timestamp_type: TimestampType,
        key: bytes | None,
        value: bytes | None,
        headers: tuple = (),
        sequence: int = -1,
        control: ControlRecord | None = None,
        crc: int | None = None,
        crc_valid: bool | None = None,
        magic: int = 2,
    ):
        return tuple.__new__(
            cls,
            (offset, timestamp, timestamp_type, key, value, tuple(headers), sequence, control, crc, crc_valid, magic),
        )

    offset: int = _field(0, "Absolute offset.")
    timestamp: int = _field(1, "Effective timestamp (ms); -1 when none.")
    timestamp_type: TimestampType = _field(2, "TimestampType of the timestamp.")
    key: bytes | None = _field(3, "Key bytes, or None.")
    value: bytes | None = _field(4, "Value bytes, or None (a tombstone).")
    headers: tuple[tuple[str, bytes | None], ...] = _field(
        5, "Headers: a tuple of (str key, bytes-or-None value) pairs, in order."
    )
    sequence: int = _field(6, "Producer sequence number, -1 when none.")
    control: ControlRecord | None = _field(7, "The decoded control record, or None.")
    crc: int | None = _field(8, "A v0/v1 message's stored CRC-32, else None.")
    crc_valid: bool | None = _field(9, "Whether a v0/v1 message's CRC holds, else None.")
    magic: int = _field(10, "Message format version of the record.")

    @property
    def is_control(self) -> bool:
        return self[7] is not None

    def replace(self, **changes) -> Record:
        """A copy with some fields changed."""
        values = dict(zip(_RECORD_FIELDS, self))
        values.update(changes)
        return Record(**values)

    def as_dict(self) -> dict:
        return dict(zip(_RECORD_FIELDS, self))

    def __repr__(self) -> str:
        return "Record(" + ", ".join(f"{k}={v!r}" for k, v in zip(_RECORD_FIELDS, self)) + ")"

    def __getnewargs__(self):
        return tuple(self)


_slot_fields = False


def read_fields_as_slots(tuple_fields) -> None:
    """Read Record's fields through member descriptors the compiled kernel makes (``tuple_fields``): the
    same fields and docs, but CPython specialises attribute reads through them as it does ``__slots__``
    (it does not for the item getters above). Every Record holds its 11 items (``__new__`` and the kernel
    make them so), which these read in place."""
    global _slot_fields
    if _slot_fields:
        return
    docs = tuple(Record.__dict__[name].__doc__ for name in _RECORD_FIELDS)
    for name, descriptor in tuple_fields(Record, _RECORD_FIELDS, docs).items():
        setattr(Record, name, descriptor)
    _slot_fields = True


@dataclass(slots=True)
class Batch:
    """A top-level log entry: a v2 record batch, or a v0/v1 message (a
    compressed wrapper holds several records)."""

    position: int  # byte position of the entry in its source
    size: int  # bytes on disk: 12 + the size / batchLength field
    magic: int
    base_offset: int
    last_offset: int
    crc: int
    crc_valid: bool
    compression: str  # none, gzip, snappy, lz4, zstd
    timestamp_type: TimestampType
    max_timestamp: int
    records: Sequence[Record]  # a list, LazyRecords (the kernel's: built when read), or ChunkedRecords
    partition_leader_epoch: int = -1
    is_transactional: bool = False
    is_control: bool = False
    has_delete_horizon: bool = False
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    base_timestamp: int = -1
    record_count: int = 0  # as stored (v2 recordsCount); number of messages for v0/v1
    stored_records_size: int = 0  # bytes of the records region as stored (compressed or not)
    records_size: int = 0  # bytes of the records once decompressed
    computed_crc: int | None = None  # the CRC of the bytes as read (equal to crc when crc_valid)

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_offset_delta(self) -> int:
        return self.last_offset - self.base_offset

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset - self.base_offset)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.has_delete_horizon else None


@dataclass(frozen=True, slots=True)
class CrcPending:
    """A v2 batch's CRC-32C not computed yet: the kernel's batch reader (``v2_batches``) leaves it for the first
    read of :attr:`Batch.crc_valid` or :attr:`Batch.computed_crc` when it was not asked to verify it; ``data[start:
    end]`` are the bytes it covers, ``stored`` the CRC the batch holds."""

    data: bytes
    start: int
    end: int
    stored: int


def _crc_slot_read(slot, settled: int):
    """A property reading Batch's slot as it is, except a :class:`CrcPending`, which it settles first: both CRC
    slots then hold what :func:`~kcodec.records.decode.decode_entry` gives (computed, computed == stored)."""

    def get(batch: Batch):
        value = slot.__get__(batch)
        if type(value) is CrcPending:
            from kcodec.runtime.crc import crc32c

            computed = crc32c(memoryview(value.data)[value.start : value.end])
            _COMPUTED_CRC.__set__(batch, computed)
            _CRC_VALID.__set__(batch, computed == value.stored)
            value = (computed == value.stored, computed)[settled]
        return value

    return property(get, slot.__set__, doc=slot.__doc__)


# Batch.crc_valid and Batch.computed_crc read their slots through properties that settle a CrcPending (the
# dataclass's __init__, __eq__, __repr__, pickling and replace() all go through them).
_CRC_VALID, _COMPUTED_CRC = vars(Batch)["crc_valid"], vars(Batch)["computed_crc"]  # the slots' own descriptors
for _name, _slot, _settled in (("crc_valid", _CRC_VALID, 0), ("computed_crc", _COMPUTED_CRC, 1)):
    setattr(Batch, _name, _crc_slot_read(_slot, _settled))


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's DefaultRecordBatch.incrementSequence: wraps past Int32.MAX to 0."""
    if sequence > 0x7FFFFFFF - increment:
        return increment - (0x7FFFFFFF - sequence) - 1
    return sequence + increment
