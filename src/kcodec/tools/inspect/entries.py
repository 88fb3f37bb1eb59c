"""Log entries over bytes: which entity each entry is (by its magic), its span tree, its offsets, and
where the next one starts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from kcodec.internal_topics.registry import PACKAGED, CodecSource
from kcodec.runtime import compression as compressions
from kcodec.tools.inspect.kafka import (
    HEADER_UP_TO_MAGIC,
    KAFKA07_ENTITY,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_ENTRY_SIZE,
    OFFSET_OFFSET,
    SIZE_OFFSET,
    TOP_LEVEL_ENTITIES,
    header_int,
)
from kcodec.tools.inspect.schema import SchemaModel, with_records_from
from kcodec.tools.inspect.spans import BAD, WARN, Span
from kcodec.tools.inspect.walk import EntityWalker


class Inspector:
    """Walks log entries (or any entity) over bytes and returns span trees.

    ``expand``: keep every record's fields visible (otherwise array elements of
    entities are marked ``collapsed`` and summarised in one line; they are
    still fully decoded, so damage inside them is found). ``registry``: the
    internal topic's registry its records' keys and values are read with.
    ``codecs``: the CodecSource whose registries, versions and entities those
    keys and values (and entities asked for by name) are read with: kcodec's
    own by default, or a ``--schemas-from`` package's (the log framing stays
    kcodec's). ``framed``: :class:`~kcodec.tools.inspect.values.FramedPart` s, the records' Schema Registry
    framed keys and values."""

    def __init__(
        self,
        schemas=None,
        *,
        expand: bool = False,
        max_decompressed_size: int = compressions.DEFAULT_MAX_DECOMPRESSED_SIZE,
        registry: str | None = None,
        codecs: CodecSource = PACKAGED,
        framed: list | None = None,
    ):
        if schemas is None and codecs is not PACKAGED:
            schemas = with_records_from(codecs.schema_set())
        self.schema = SchemaModel(schemas)
        self.walker = EntityWalker(
            self.schema,
            expand=expand,
            max_decompressed_size=max_decompressed_size,
            registry=registry,
            codecs=codecs,
            framed=framed,
        )
        self._dispatch = self.schema.magic_table(TOP_LEVEL_ENTITIES)
        self._dispatch07 = self.schema.magic_table((KAFKA07_ENTITY,))

    def entry_kinds(self) -> list[str]:
        return [f"magic {value}: {name} v{v}" for _, _, _, value, name, v in self._dispatch]

    def _kind_at(self, buf, pos: int) -> tuple[str, int] | None:
        """(entity, version) of the entry at ``pos``, by its magic; None when no schema has it."""
        for off, width, signed, expected, name, version in self._dispatch:
            if int.from_bytes(bytes(buf[pos + off : pos + off + width]), "big", signed=signed) == expected:
                return name, version
        return None

    # ------------------------------------------------------------------ entries

    def entries(self, data, start: int = 0, count: int | None = None) -> Iterator[Span]:
        """Span trees of the log entries from byte ``start`` (at most ``count``)."""
        buf = memoryview(data)
        pos, n = start, 0
        while pos < len(buf) and (count is None or n < count):
            span, nxt = self.entry(buf, pos)
            yield span
            n += 1
            if nxt is None or nxt <= pos:
                return
            pos = nxt

    def entry(self, buf, pos: int) -> tuple[Span, int | None]:
        """One log entry at ``pos``: its span tree and where the next entry starts (None: stop)."""
        buf = memoryview(buf)
        avail = len(buf) - pos
        if avail < HEADER_UP_TO_MAGIC:
            tail = Span(pos, len(buf), "", kind="tail", raw=bytes(buf[pos:]), display=f"{avail} bytes")
            tail.mark(
                BAD,
                f"truncated: {avail} bytes at the end do not hold an entry header "
                f"({HEADER_UP_TO_MAGIC} bytes); Kafka's readers stop here",
            )
            return tail, None
        kind = self._kind_at(buf, pos)
        if kind is None:
            return self._unknown_entry(buf, pos)
        span, end, ok, _ = self.walker.entity(self.schema.entity(*kind), buf, pos, len(buf), "", "file", {})
        span.kind = "entry"
        offsets = self.offsets(buf, pos)
        if offsets is not None:
            first, last, known = offsets
            span.display = (
                f"offsets {first}..{last}"
                if known and first != last
                else f"offset {last}"
                if known
                else f"last offset {last}"
            )
        span.finish()
        return span, (end if ok else None)

    def kafka07_entries(self, data, base_offset: int, start: int = 0, count: int | None = None) -> Iterator[Span]:
        """Span trees of the entries of a Kafka 0.7 segment (``.kafka``: a file's name says its framing, the
        magic byte cannot) from byte ``start``, each shown with its byte offset (``base_offset`` + position)."""
        buf = memoryview(data)
        pos, n = start, 0
        header = max(off + width for off, width, *_ in self._dispatch07)  # up to the magic byte
        while pos < len(buf) and (count is None or n < count):
            avail = len(buf) - pos
            kind = next(
                (
                    k
                    for off, width, signed, value, _, k in self._dispatch07
                    if avail >= header and header_int(buf, pos, off, width) == value
                ),
                None,
            )
            if kind is None:
                tail = Span(pos, len(buf), "", kind="tail", raw=bytes(buf[pos:]), display=f"{avail} bytes")
                why = (
                    f"{avail} bytes at the end do not hold a 0.7 entry's size and magic; 0.7's readers stop here"
                    if avail < header
                    else "not a Kafka 0.7 message: its magic is neither 0 nor 1"
                )
                yield tail.mark(BAD, why)
                return
            span, end, ok, _ = self.walker.entity(
                self.schema.entity(KAFKA07_ENTITY, kind), buf, pos, len(buf), "", "file", {}
            )
            span.kind, span.display = "entry", f"byte offset {base_offset + pos}"
            span.finish()
            yield span
            n += 1
            if not ok or end <= pos:
                return
            pos = end

    def offsets(self, buf, pos: int) -> tuple[int, int, bool] | None:
        """(first, last, first_known) offsets of the entry at ``pos``, from its header alone. Every
        top-level entity starts with an int64 offset; a v2 batch adds last_offset_delta; a legacy
        entry's offset is its last one (a compressed wrapper's first is known only inside: Kafka's
        AbstractLegacyRecordBatch, KIP-31)."""
        if len(buf) - pos < HEADER_UP_TO_MAGIC:
            return None
        kind = self._kind_at(buf, pos)
        if kind is None:
            return None
        ev = self.schema.entity(*kind)
        first = header_int(buf, pos, OFFSET_OFFSET, 8)
        if any(f.name == "last_offset_delta" for f in ev.fields):
            f = ev.field("last_offset_delta")
            if len(buf) - pos < f.offset + f.size:
                return first, first, True
            return first, first + header_int(buf, pos, f.offset, f.size), True
        probe = self.schema.compression_probe(*kind)
        compressed = False
        if probe is not None:
            off, width, low, bits = probe
            if pos + off + width <= len(buf):
                raw = int.from_bytes(bytes(buf[pos + off : pos + off + width]), "big")
                compressed = (raw >> low) & ((1 << bits) - 1) != 0
        return first, first, not compressed

    def position_of_offset(self, buf, target: int) -> tuple[int | None, int | None]:
        """Byte position of the first entry whose last offset is at least ``target`` (how Kafka finds
        the batch holding an offset), scanning entry headers only; else (None, the last offset seen)."""
        pos = 0
        last_seen = None
        while len(buf) - pos >= HEADER_UP_TO_MAGIC:
            offsets = self.offsets(buf, pos)
            size = header_int(buf, pos, SIZE_OFFSET, 4)
            if offsets is not None:
                if offsets[1] >= target:
                    return pos, offsets[1]
                last_seen = offsets[1]
            if size < MIN_ENTRY_SIZE:
                break
            pos += LOG_OVERHEAD + size
        return None, last_seen

    def _unknown_entry(self, buf, pos: int) -> tuple[Span, int | None]:
        """An entry whose magic no schema knows: its framing, and the rest skipped as its size says."""
        magic = header_int(buf, pos, MAGIC_OFFSET, 1)
        size = header_int(buf, pos, SIZE_OFFSET, 4)
        span = Span(pos, pos + HEADER_UP_TO_MAGIC, "", kind="entry", type=f"unknown (magic {magic})")

        def leaf(start: int, end: int, path: str, **kw) -> Span:
            return Span(pos + start, pos + end, path, raw=bytes(buf[pos + start : pos + end]), **kw)

        span.children = [
            leaf(OFFSET_OFFSET, SIZE_OFFSET, "offset", type="int64", value=header_int(buf, pos, OFFSET_OFFSET, 8)),
            leaf(SIZE_OFFSET, LOG_OVERHEAD, "size", type="int32", value=size),
            leaf(LOG_OVERHEAD, MAGIC_OFFSET, "(unread)", kind="unread"),
            leaf(MAGIC_OFFSET, HEADER_UP_TO_MAGIC, "magic", type="int8", value=magic),
        ]
        for c in span.children:
            c.display = "" if c.value is None else str(c.value)
        span.children[-1].mark(BAD, f"unknown magic {magic}: no schema has it ({'; '.join(self.entry_kinds())})")
        end = pos + LOG_OVERHEAD + size
        nxt = None
        if size >= MIN_ENTRY_SIZE and end <= len(buf):
            span.children.append(
                leaf(
                    HEADER_UP_TO_MAGIC,
                    end - pos,
                    "(unread)",
                    kind="unread",
                    notes=[f"skipped: the size field says the entry ends at byte {end - 1}"],
                )
            )
            span.end, nxt = end, end
        span.finish()
        return span, nxt

    # ------------------------------------------------------------------ entities

    def inspect_entity(self, name: str, version: int, data, path: str = "") -> Span:
        """One entity at the start of ``data`` (for entities that are not log entries); bytes after it are
        marked, as Kafka's readers of one message leave none (a wrong version or entity shows there)."""
        buf = memoryview(data)
        span, end, ok, _ = self.walker.entity(self.schema.entity(name, version), buf, 0, len(buf), path, "file", {})
        if ok and end < len(buf):
            rest = Span(end, len(buf), f"{path}.(unread)" if path else "(unread)", kind="unread", raw=bytes(buf[end:]))
            span.children.append(rest.mark(WARN, f"{len(buf) - end} bytes after {name} v{version}: not read"))
            span.end = len(buf)
        span.finish()
        return span


def inspect_bytes(
    data,
    *,
    start: int = 0,
    count: int | None = None,
    expand: bool = True,
    max_decompressed_size: int = compressions.DEFAULT_MAX_DECOMPRESSED_SIZE,
    registry: str | None = None,
    codecs: CodecSource = PACKAGED,
) -> list[Span]:
    """Span trees of every log entry in ``data`` (bytes, or a path to read); ``registry`` names the internal
    topic (``consumer_offsets`` ...) whose records' keys and values are read, with ``codecs``' schemas."""
    if isinstance(data, (str, os.PathLike)):
        data = Path(data).read_bytes()
    inspector = Inspector(expand=expand, max_decompressed_size=max_decompressed_size, registry=registry, codecs=codecs)
    return list(inspector.entries(data, start, count))
