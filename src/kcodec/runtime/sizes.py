"""Size helpers that generated size functions call."""

from kcodec.runtime.varint import size_uvarint, size_varint, size_varlong

__all__ = ["size_varint", "size_varlong", "size_uvarint", "varint_prefixed", "uvarint_prefixed"]


def varint_prefixed(n: int) -> int:
    """Bytes taken by n bytes of data after a zigzag varint length."""
    return size_varint(n) + n


def uvarint_prefixed(n: int) -> int:
    return size_uvarint(n) + n
