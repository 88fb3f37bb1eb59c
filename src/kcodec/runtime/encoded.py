"""Arrays handed to the generated encoders already encoded.

A writer that encodes the elements of an array itself (the compiled kernel's
v2 record writer, say) passes an :class:`EncodedArray` where the generated
encoder expects the list of elements: the encoder writes the count prefix from
``len()`` and the bytes as they are, and still does everything around them
(lengths, compression, CRCs).
"""

from __future__ import annotations

__all__ = ["EncodedArray"]


class EncodedArray:
    """``count`` elements of an array, encoded back to back in ``data``."""

    __slots__ = ("data", "count")

    def __init__(self, data: bytes, count: int):
        if type(data) is not bytes:
            raise TypeError(f"EncodedArray data must be bytes, not {type(data).__name__}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TypeError(f"EncodedArray count must be an int >= 0, not {count!r}")
        self.data = data
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"EncodedArray({self.count} elements, {len(self.data)} bytes)"
