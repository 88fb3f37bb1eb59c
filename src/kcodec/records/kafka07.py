"""Kafka 0.7 message sets: the entries of a ``.kafka`` segment (or of a compressed message's payload),
with the byte offsets that were 0.7's only offsets.

0.7 stored no offset: a message's offset is the byte position of its entry in the partition's log (the
segment's base, which its name gives, plus the position in the file). Two conventions exist, and both
are given: ``offset``, where the entry starts (0.7's DumpLogSegments and samsa), and ``next_offset``,
the position a consumer fetches next (the broker's iterators, and what ZooKeeper stores as a consumer's
position). Inside a compressed message the inner messages have no positions of their own: deep
iteration gives each the wrapper's start as ``offset``, and as ``next_offset`` the wrapper's start for
all but the last (a consumer can resume only at a wrapper's boundary), the position after the wrapper
for the last.

The bytes are read by the generated decoders of ``schemas/kafka07_message.yaml``; this module only
walks entries and applies 0.7's rules for the end of a log: an entry that does not fit in the bytes
left is a torn tail (the log ends at the last whole message, as 0.7's recovery truncates it), while a
size below 0.7's MinHeaderSize, a bad magic, codec or CRC is damage, raised with its byte position.
The caller knows the bytes are 0.7's (a ``.kafka`` name): the magic byte alone cannot tell 0.7's
``[size][magic]`` from 0.8's ``[offset][size][crc][magic]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kcodec.errors import DecodeError, KcodecError, TruncatedError, UnknownMagicError
from kcodec.generated.fast import kafka07_message as fast07
from kcodec.generated.kafka07_message import (
    KAFKA07_MESSAGE_V0_OFFSET_MAGIC,
    KAFKA07_MESSAGE_V0_OFFSET_PAYLOAD,
    KAFKA07_MESSAGE_V0_OVERHEAD,
    KAFKA07_MESSAGE_V1_OFFSET_PAYLOAD,
)
from kcodec.runtime.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from kcodec.runtime.crc import crc32

from .source import Input, as_input

__all__ = [
    "ENTRY_HEADER",
    "MIN_MESSAGE_SIZE",
    "Kafka07Message",
    "Kafka07Entry",
    "Kafka07Tail",
    "read_kafka07",
    "iter_kafka07_messages",
    "kafka07_valid_prefix",
    "encode_kafka07",
    "looks_like_kafka07",
]

#: The size field in front of every 0.7 message (MessageSet.LogOverhead).
ENTRY_HEADER = KAFKA07_MESSAGE_V0_OFFSET_MAGIC
#: 0.7's Message.MinHeaderSize (magic and CRC): a smaller size ends 0.7's reading of a log.
MIN_MESSAGE_SIZE = KAFKA07_MESSAGE_V0_OVERHEAD - ENTRY_HEADER

_DECODERS = {0: fast07.decode_kafka07_message_v0, 1: fast07.decode_kafka07_message_v1}
_AT = {0: fast07.AT_KAFKA07_MESSAGE_V0, 1: fast07.AT_KAFKA07_MESSAGE_V1}
_PAYLOAD_AT = {0: KAFKA07_MESSAGE_V0_OFFSET_PAYLOAD, 1: KAFKA07_MESSAGE_V1_OFFSET_PAYLOAD}


@dataclass(frozen=True)
class Kafka07Message:
    """One message with its byte offsets. ``payload`` is the message's bytes (None for a compressed
    wrapper when its inner messages are listed instead). ``inner`` is the index inside its compressed
    wrapper (None at the top level); ``position`` is where its entry (or its wrapper's) starts in the
    file, ``size`` that entry's bytes (size field included)."""

    offset: int
    next_offset: int
    position: int
    size: int
    magic: int
    compression: str
    crc: int
    crc_valid: bool
    payload: bytes | None
    inner: int | None = None

    @property
    def payload_size(self) -> int:
        """Bytes of the payload as stored (a compressed wrapper's: the compressed stream)."""
        if self.inner is not None:  # an inner message: ``size`` is its wrapper's entry
            return len(self.payload or b"")
        return self.size - _PAYLOAD_AT[self.magic]


@dataclass(frozen=True)
class Kafka07Entry:
    """A top-level entry: the message, and for a compressed one its inner messages (deep)."""

    message: Kafka07Message
    messages: tuple[Kafka07Message, ...] = field(default=())

    def deep(self) -> tuple[Kafka07Message, ...]:
        """The messages a consumer sees: the inner ones of a compressed wrapper, else the message."""
        return self.messages if self.message.compression != "none" else (self.message,)


@dataclass(frozen=True)
class Kafka07Tail:
    """Bytes after the last whole entry that do not hold one (a torn write): ``position`` in the file,
    ``size`` bytes, and why."""

    position: int
    size: int
    reason: str


class Kafka07Reader:
    """Entries of one 0.7 message set, read from ``data`` (bytes or an :class:`Input`) with byte offsets
    counted from ``base_offset`` (the segment's name). After iteration, ``tail`` is the torn tail, if
    any, and ``end`` the position after the last whole entry."""

    def __init__(
        self,
        data,
        *,
        base_offset: int = 0,
        verify_crc: bool = True,
        deep: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ):
        self.input: Input = as_input(data)
        self.base_offset, self.verify_crc, self.deep = base_offset, verify_crc, deep
        self.limit = max_decompressed_size
        self.tail: Kafka07Tail | None = None
        self.end = 0
        self.count = 0  # whole entries read

    def __iter__(self) -> Iterator[Kafka07Entry]:
        inp, pos = self.input, 0
        while pos < inp.size:
            head = bytes(inp.read(pos, ENTRY_HEADER + 1))
            left = inp.size - pos
            if len(head) < ENTRY_HEADER:
                self.tail = Kafka07Tail(pos, left, f"{left} byte(s), too few for an entry's size")
                return
            size = int.from_bytes(head[:ENTRY_HEADER], "big", signed=True)
            if size < MIN_MESSAGE_SIZE:
                raise TruncatedError(
                    f"entry size {size} is below 0.7's minimum message size {MIN_MESSAGE_SIZE} (0.7 ends the log here)",
                    position=pos,
                    field="size",
                )
            if ENTRY_HEADER + size > left:
                self.tail = Kafka07Tail(pos, left, f"entry of {ENTRY_HEADER + size} bytes, only {left} left")
                return
            entry = bytes(inp.read(pos, ENTRY_HEADER + size))
            yield self._entry(entry, pos)
            pos += len(entry)
            self.end, self.count = pos, self.count + 1

    def _entry(self, data: bytes, pos: int) -> Kafka07Entry:
        magic = data[ENTRY_HEADER]
        decode = _DECODERS.get(magic)
        if decode is None:
            raise UnknownMagicError(
                f"magic {magic} is not a Kafka 0.7 message's (0 or 1)", position=pos + ENTRY_HEADER, field="magic"
            )
        try:
            values, _ = decode(data, 0, len(data), self.verify_crc, self.limit, self.deep)
        except DecodeError as exc:
            raise exc.at(pos) from None
        at = _AT[magic]
        compression = values[at.attributes]["compression"] if magic else "none"
        offset = self.base_offset + pos
        after = offset + len(data)
        crc = values[at.crc]
        message = Kafka07Message(
            offset,
            after,
            pos,
            len(data),
            magic,
            compression,
            crc,
            # verified by the decoder (it raises on a mismatch) unless asked not to
            self.verify_crc or crc == crc32(memoryview(data)[_PAYLOAD_AT[magic] :]),
            bytes(values[at.payload]) if compression == "none" or not self.deep else None,
        )
        if compression == "none" or not self.deep:
            return Kafka07Entry(message)
        inner = values[at.payload]
        messages = tuple(
            _inner(values_i, i, i == len(inner) - 1, offset, after, pos, len(data), self.verify_crc)
            for i, values_i in enumerate(inner)
        )
        return Kafka07Entry(message, messages)


def _inner(
    values: tuple, index: int, last: bool, offset: int, after: int, pos: int, size: int, verified: bool
) -> Kafka07Message:
    """An inner message of a compressed wrapper (inner messages are magic 1, whose decoder read them)."""
    at = fast07.AT_KAFKA07_MESSAGE_V1
    return Kafka07Message(
        offset,
        after if last else offset,
        pos,
        size,
        values[at.magic],
        values[at.attributes]["compression"],
        values[at.crc],
        verified or values[at.crc] == crc32(values[at.payload]),
        bytes(values[at.payload]),
        index,
    )


def read_kafka07(data, **options) -> Kafka07Reader:
    """A reader of the 0.7 entries of ``data``; see :class:`Kafka07Reader` for the options."""
    return Kafka07Reader(data, **options)


def iter_kafka07_messages(data, **options) -> Iterator[Kafka07Message]:
    """Every message a consumer sees (inner messages of compressed sets), in order."""
    for entry in Kafka07Reader(data, **options):
        yield from entry.deep()


def kafka07_valid_prefix(data) -> tuple[int, int, Kafka07Tail | KcodecError | None]:
    """How many entries and bytes 0.7's recovery keeps (FileMessageSet.recover: entries from the start
    until a size below the minimum, a short read or a bad CRC of the message as stored) and why it stops
    there (None: it keeps everything)."""
    reader = Kafka07Reader(data, deep=False)
    try:
        for _ in reader:
            pass
    except KcodecError as exc:
        return reader.count, reader.end, exc
    return reader.count, reader.end, reader.tail


def encode_kafka07(payloads: Iterable[bytes], *, compression: str = "none", magic: int = 1) -> bytes:
    """0.7 entries for ``payloads``: one message each, or with a codec (gzip, snappy) one compressed
    wrapper holding them all as magic-1 messages, as 0.7's producer writes a compressed set. Magic 0 has
    no codec."""
    plain = {"compression": "none", "unused": 0}
    if magic == 0:
        if compression != "none":
            raise ValueError("a Kafka 0.7 magic-0 message has no codec")
        return b"".join(fast07.encode_kafka07_message_v0((None, 0, None, p)) for p in payloads)
    if magic != 1:
        raise ValueError(f"Kafka 0.7 messages have magic 0 or 1, not {magic!r}")
    inner = [(None, 1, plain, None, bytes(p)) for p in payloads]
    if compression == "none":
        return b"".join(fast07.encode_kafka07_message_v1(v) for v in inner)
    wrapper = (None, 1, {"compression": compression, "unused": 0}, None, inner)
    return fast07.encode_kafka07_message_v1(wrapper)


def looks_like_kafka07(data) -> bool:
    """Whether ``data`` starts with a whole 0.7 entry whose CRC holds: the framing test that, with a
    file's name, tells a 0.7 segment from a later one (the magic byte alone cannot)."""
    reader = Kafka07Reader(data, deep=False)
    try:
        return next(iter(reader), None) is not None
    except KcodecError:
        return False
