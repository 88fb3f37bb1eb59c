"""Derived fields checked against the bytes: lengths against what their fields cover, CRCs against
the covered bytes."""

from __future__ import annotations

from dataclasses import dataclass

from kcodec.runtime.crc import CRC_FUNCTIONS
from kcodec.tools.inspect.spans import BAD, Span, byte_range


@dataclass
class DeclaredLength:
    """A length field's claim: its bytes run from ``start`` to ``end`` (exclusive)."""

    span: Span
    start: int
    end: int
    length: int


def declare_length(lspan: Span, pos: int, region_end: int) -> DeclaredLength | None:
    """The claim of the length field ``lspan`` for the fields from ``pos``; None (and the length
    marked) when it is negative. A claim past ``region_end`` is marked truncated."""
    length = lspan.value
    if length < 0:
        lspan.mark(BAD, f"negative length {length}")
        return None
    declared = DeclaredLength(lspan, pos, pos + length, length)
    if declared.end > region_end:
        lspan.mark(
            BAD,
            f"truncated: length says {length} (bytes {byte_range(pos, declared.end)}), only "
            f"{region_end - pos} bytes left",
        )
    return declared


def settle_length(declared: DeclaredLength, buf, pos: int, path: str, space: str) -> tuple[Span | None, int]:
    """After the covered fields were read up to ``pos``: the span of the bytes the length claims and no
    field accounts for (None when they agree), and where the entity ends."""
    lspan, cstart, dend, length = declared.span, declared.start, declared.end, declared.length
    if pos < dend:
        lspan.mark(BAD, f"length says {length}, the fields cover {pos - cstart}")
        gap = Span(
            pos, dend, f"{path}.(unread)" if path else "(unread)", kind="unread", raw=bytes(buf[pos:dend]), space=space
        )
        gap.mark(BAD, f"{dend - pos} bytes the fields do not account for")
        return gap, dend
    lspan.notes[-1] += f": bytes {byte_range(cstart, dend)} ({length} bytes) OK"
    return None, pos


def check_crc(cspan: Span, algorithm: str, buf, start: int, end: int, truncated: bool) -> None:
    """Compare the stored CRC of ``cspan`` with the one of bytes ``start``..``end``."""
    stored = cspan.value
    computed = CRC_FUNCTIONS[algorithm](buf[start:end])
    what = f"{algorithm} of bytes {byte_range(start, end)}: stored {stored:#010x}, computed {computed:#010x}"
    if truncated:
        cspan.mark(BAD, f"{what}: cannot check, the covered bytes are truncated")
    elif computed == stored:
        cspan.notes.append(f"{what} OK")
    else:
        cspan.mark(BAD, f"BAD crc: {what}")
