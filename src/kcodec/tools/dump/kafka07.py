"""``kcodec dump`` of Kafka 0.7 segments (``.kafka``), as 0.7's own DumpLogSegments printed them.

0.7's tool printed ``Dumping FILE``, ``Starting offset: BASE``, then per message (shallow: a compressed
set is one line with its codec) ``offset: O isvalid: B payloadsize: N magic: M compresscodec: C``, where
O is the byte offset where the message starts, its payload with ``payload:`` and a tab, and last ``tail
of the log is at offset: T``. kcodec adds ``nextoffset: F`` at the end of each line: the position a
consumer fetches next, the other offset convention of 0.7 (its broker's iterators, ZooKeeper's consumer
positions). ``--deep-iteration`` also lists the inner messages of a compressed set, one ``| offset: ...``
line each: they have no position of their own, so ``offset`` is the set's start and ``nextoffset`` the
set's start for all but the last. Payloads print with ``--print-data-log``; ``--json`` prints one object
per entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from kcodec.records.kafka07 import Kafka07Entry, Kafka07Message, Kafka07Reader, Kafka07Tail
from kcodec.tools.records_io import DUMP_ENCODING, encode_bytes

__all__ = ["CODEC_NAMES", "kafka07_entry_lines", "kafka07_tail_line", "kafka07_entry_json", "kafka07_tail_json"]

#: 0.7's CompressionCodec objects, as its tool printed them.
CODEC_NAMES = {"none": "NoCompressionCodec", "gzip": "GZIPCompressionCodec", "snappy": "SnappyCompressionCodec"}


def _line(m: Kafka07Message) -> str:
    valid = "true" if m.crc_valid else "false"
    return (
        f"offset: {m.offset} isvalid: {valid} payloadsize: {m.payload_size} magic: {m.magic} "
        f"compresscodec: {CODEC_NAMES[m.compression]} nextoffset: {m.next_offset}"
    )


def _text(payload: bytes) -> str:
    return payload.decode("utf-8", "replace")


def kafka07_entry_lines(entry: Kafka07Entry, deep: bool, print_data: bool) -> Iterator[str]:
    """The lines of one top-level entry (and of its inner messages when ``deep``)."""
    m = entry.message
    yield _line(m)
    if m.payload is not None and print_data:
        yield f"payload:\t{_text(m.payload)}"
    if deep:
        for inner in entry.messages:
            assert inner.payload is not None  # an inner message is never a wrapper (one level of compression)
            yield "| " + _line(inner)
            if print_data:
                yield f"| payload:\t{_text(inner.payload)}"


def kafka07_tail_line(reader: Kafka07Reader, base_offset: int) -> list[str]:
    """``tail of the log is at offset: T`` and, for a torn tail, what 0.7's recovery would drop."""
    lines = [f"tail of the log is at offset: {base_offset + reader.end}"]
    t: Kafka07Tail | None = reader.tail
    if t is not None:
        lines.append(
            f"Found {t.size} invalid bytes at the end of the log at position {t.position} ({t.reason}): "
            "0.7's recovery truncates them"
        )
    return lines


def _message_json(m: Kafka07Message, encoding: str) -> dict:
    out: dict[str, object] = {"offset": m.offset, "nextOffset": m.next_offset}
    if m.inner is not None:
        out["inner"] = m.inner
    out.update(crc=m.crc, crcValid=m.crc_valid)
    out["payloadSize"] = m.payload_size
    if m.payload is not None:
        out["payload"] = encode_bytes(m.payload, encoding, f"message at byte offset {m.offset}: payload")
    return out


def kafka07_entry_json(entry: Kafka07Entry, file: str, encoding: str = DUMP_ENCODING) -> dict:
    """One line of ``kcodec dump --json`` for a 0.7 entry: the message, and a compressed set's ``messages``."""
    m = entry.message
    out: dict[str, object] = {
        "file": file,
        "format": "0.7",
        "position": m.position,
        "size": m.size,
        "magic": m.magic,
        "compression": m.compression,
        **_message_json(m, encoding),
    }
    if m.compression != "none":
        out["messages"] = [_message_json(inner, encoding) for inner in entry.messages]
    if encoding != DUMP_ENCODING:
        out["bytesEncoding"] = encoding
    return out


def kafka07_tail_json(tail: Kafka07Tail, file: str) -> dict:
    return {"file": file, "format": "0.7", "position": tail.position, "size": tail.size, "partialEntry": True}
