"""The records of a batch that holds very many of them, decoded a chunk at a time.

A legal v2 batch can hold millions of tiny records in a few KB of zstd (a 7-byte record with null key and
value inflates 9 M-fold within the 64 MiB decompression cap); one Record object each would take gigabytes.
Above :data:`CHUNKED_RECORD_COUNT` records the decoder gives a :class:`ChunkedRecords` instead of a list:
every record was decoded once, to check the batch (so errors are raised when the batch is decoded, as for
any other), but only the positions of chunk starts were kept, and iteration or indexing decodes again one
chunk of :data:`CHUNK` records at a time. Memory is bounded by the decompressed bytes plus one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from kcodec.records.model import Record

__all__ = ["CHUNK", "CHUNKED_RECORD_COUNT", "ChunkedRecords"]

CHUNK = 4096  # records decoded at once
CHUNKED_RECORD_COUNT = 65_536  # batches with more records than this are decoded chunk by chunk

#: decode ``n`` records starting at byte ``pos``, the first of them the ``index``-th of its batch:
#: (records, position after them)
DecodeChunk = Callable[[int, int, int], tuple[Sequence[Record], int]]


class ChunkedRecords(Sequence[Record]):
    """A read-only sequence of ``count`` records decoded on demand by ``decode``, a chunk at a time."""

    __slots__ = ("_decode", "_count", "_starts", "end")

    def __init__(self, decode: DecodeChunk, start: int, count: int):
        """Decode every record once (errors are raised here), keeping where each chunk starts; ``end`` is
        the position after the last record."""
        self._decode, self._count = decode, count
        self._starts: list[int] = []
        pos = start
        for index in range(0, count, CHUNK):
            self._starts.append(pos)
            _, pos = decode(pos, min(CHUNK, count - index), index)
        self.end = pos

    def __len__(self) -> int:
        return self._count

    def _chunk(self, k: int) -> Sequence[Record]:
        index = k * CHUNK
        return self._decode(self._starts[k], min(CHUNK, self._count - index), index)[0]

    def __iter__(self) -> Iterator[Record]:
        for k in range(len(self._starts)):
            yield from self._chunk(k)

    @overload
    def __getitem__(self, i: int) -> Record: ...
    @overload
    def __getitem__(self, i: slice) -> list[Record]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("record index out of range")
        return self._chunk(i // CHUNK)[i % CHUNK]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or len(other) != self._count:
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{self._count} records, decoded {CHUNK} at a time>"
