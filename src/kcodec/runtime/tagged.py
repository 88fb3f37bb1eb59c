"""Kafka's flexible versions (KIP-482): compact lengths and the tagged-field section that ends every
struct of a flexible version (uvarint count, then per field uvarint tag, uvarint size, payload, tags
ascending). Shared by the construct codecs, the fast decoders and encoders, and size functions."""

from __future__ import annotations

from kcodec.errors import CorruptError, EncodeError, TruncatedError
from kcodec.runtime.varint import decode_uvarint, encode_uvarint, size_uvarint

__all__ = ["read_tagged", "write_tagged", "tagged_size", "is_default", "compact_prefixed", "check_unknown_tags"]


def read_tagged(buf, pos: int, end: int) -> tuple[list[tuple[int, int, int]], int]:
    """The tagged section at buf[pos:end]: ``[(tag, payload start, payload end)]`` and the position after
    it. Tags must ascend strictly (Kafka writes them so), and every payload must fit before ``end``."""
    start = pos
    if pos >= end:
        raise TruncatedError("the tagged fields section is missing", position=pos)
    count, pos = decode_uvarint(buf, pos)
    if count > end - pos:  # every entry takes at least two bytes: refuse before looping
        raise TruncatedError(f"{count} tagged fields cannot fit in the {end - pos} bytes left", position=start)
    entries = []
    previous = -1
    for _ in range(count):
        at = pos
        if pos >= end:
            raise TruncatedError("the tagged fields section runs past its end", position=at)
        tag, pos = decode_uvarint(buf, pos)
        if pos >= end:
            raise TruncatedError(f"tagged field {tag} runs past the end", position=at)
        size, pos = decode_uvarint(buf, pos)
        if tag <= previous:
            raise CorruptError(f"tag {tag} follows tag {previous}: tags must ascend", position=at)
        if pos + size > end:
            raise TruncatedError(
                f"tagged field {tag} needs {size} bytes but only {end - pos} remain", position=at, field=f"tag {tag}"
            )
        entries.append((tag, pos, pos + size))
        pos += size
        previous = tag
    return entries, pos


def write_tagged(entries: list[tuple[int, bytes]]) -> bytes:
    """The tagged section holding ``entries`` ((tag, payload) pairs, any order; tags unique)."""
    out = [encode_uvarint(len(entries))]
    for tag, payload in sorted(entries, key=lambda e: e[0]):
        out += [encode_uvarint(tag), encode_uvarint(len(payload)), payload]
    return b"".join(out)


def tagged_size(entries: list[tuple[int, int]]) -> int:
    """Bytes of a tagged section whose payloads take the given sizes ((tag, size) pairs)."""
    return size_uvarint(len(entries)) + sum(size_uvarint(t) + size_uvarint(n) + n for t, n in entries)


def check_unknown_tags(unknown, known: frozenset) -> list[tuple[int, bytes]]:
    """A value's unknown tags, checked before they are written back: (tag, bytes) pairs, unique tags
    that this version does not know."""
    out = []
    seen = set()
    for item in unknown or ():
        try:
            tag, payload = item
        except (TypeError, ValueError):
            raise EncodeError(f"an unknown tag is a (tag, bytes) pair, not {item!r}", field="_unknown_tags") from None
        if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0 or tag >= 1 << 31:
            raise EncodeError(f"tag {tag!r} is not a tag number", field="_unknown_tags")
        if tag in known or tag in seen:
            raise EncodeError(f"tag {tag} is known here or given twice", field="_unknown_tags")
        if not isinstance(payload, (bytes, bytearray)):
            raise EncodeError(f"tag {tag}'s payload is bytes, not {type(payload).__name__}", field="_unknown_tags")
        seen.add(tag)
        out.append((tag, bytes(payload)))
    return out


def is_default(value, default) -> bool:
    """Whether a tagged field holds its default (and so is not written). A struct (dict) equals its
    default when every field does and it carries no unknown tags."""
    if isinstance(default, dict) and isinstance(value, dict):
        if value.get("_unknown_tags"):
            return False
        return all(k in value and is_default(value[k], d) for k, d in default.items() if not k.startswith("_"))
    if isinstance(default, float) and isinstance(value, float):
        return value == default and str(value) == str(default)  # -0.0 is written: it is not 0.0's bytes
    return value == default and type(value) is type(default)


def compact_prefixed(n: int) -> int:
    """Bytes taken by n bytes of data after a compact length (uvarint n + 1)."""
    return size_uvarint(n + 1) + n
