"""The span tree: one annotated byte range per field, length prefix, entity or stream."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

OK, WARN, BAD = "ok", "warn", "bad"
_RANK = {OK: 0, WARN: 1, BAD: 2}


@dataclass
class Span:
    """One annotated byte range: a field, a length prefix, an entity, a compressed stream..."""

    start: int
    end: int  # exclusive
    path: str  # schema path inside the entry: "crc", "records[0].key.length", "attributes.compression"
    kind: str = "field"  # entry, entity, field, prefix, data, bits, array, stream, decompressed, unread, tail
    type: str = ""  # schema type, e.g. "int32", "varint", "record_batch v2"
    raw: bytes | None = None  # the bytes, for leaves (every byte of an entry is in exactly one leaf per space)
    value: Any = None
    display: str = ""
    notes: list[str] = field(default_factory=list)
    status: str = OK
    bits: str | None = None  # "0-2" for a bit group
    space: str = "file"  # "file", or the decompressed stream the positions count in
    collapsed: bool = False  # shown as one summary line unless records are expanded
    raw_bits: str | None = None  # a bit group's bits, most significant first
    role: str = ""  # "length", "crc", "count" (derived fields) or "const"
    children: list[Span] = field(default_factory=list)

    def mark(self, status: str, note: str | None = None) -> Span:
        if _RANK[status] > _RANK[self.status]:
            self.status = status
        if note:
            self.notes.append(note)
        return self

    def walk(self) -> Iterator[Span]:
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, path: str) -> Span | None:
        return next((s for s in self.walk() if s.path == path), None)

    def leaves(self) -> list[Span]:
        return [s for s in self.walk() if s.raw is not None]

    def finish(self) -> str:
        """Raise every span's status to the worst of its children's (once the tree is complete)."""
        for c in self.children:
            self.mark(c.finish())
        return self.status

    def as_dict(self, full: bool = True) -> dict:
        d: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "space": self.space,
        }
        if self.type:
            d["type"] = self.type
        if self.bits is not None:
            d["bits"] = self.bits
            d["binary"] = self.raw_bits
        if self.raw is not None:
            d["hex"] = self.raw.hex()
        d["value"] = _jsonable(self.value)
        d["display"] = self.display
        d["notes"] = list(self.notes)
        d["status"] = self.status
        if self.role:
            d["role"] = self.role
        if self.collapsed:
            d["collapsed"] = True
        if self.children and (full or not self.collapsed):
            d["children"] = [c.as_dict(full) for c in self.children]
        return d


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def byte_range(a: int, b: int) -> str:
    """Bytes ``a`` up to ``b`` (exclusive) as notes name them."""
    return f"{a}..{b - 1}" if b > a else f"{a} (empty)"


def plural(n: int) -> str:
    return "" if n == 1 else "s"
