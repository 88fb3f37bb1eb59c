"""The skip-on-damage policy: read on past entries that do not decode, and say what was passed over.

One implementation for every reader that goes on after damage (``read_batches(skip_corrupt=True)``,
``kcodec dump --skip-corrupt``, ``kcodec verify``, Spark's ``onCorrupt=skip``), in two strengths:

* ``resync=True``: after a damaged entry, scan forward for the next position where a whole entry parses
  and its CRC holds (:mod:`kcodec.records.resync`) and go on from there; the bytes in between are one
  skipped range. An entry whose CRC fails but holds a valid entry inside it had its framing damaged, and
  is skipped up to that entry. Nothing readable is lost.
* ``resync=False``: an entry whose framing holds (size and magic plausible, all its bytes present) but
  that does not decode is skipped alone; broken framing skips the rest of the input
  (:attr:`SkippedRange.rest`), as no later boundary can be trusted.

Either way, bytes at the end that do not hold a whole entry are a partial tail, not a skipped range.

An entry whose CRC holds but that inflates past ``max_decompressed_size`` is not damage: Kafka would read
it, only kcodec's own cap refuses it. It is reported to ``on_refused`` (a :class:`SkippedRange` whose
``refused`` is true) and reading goes on at its end, with no resynchronisation.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Generator
from dataclasses import dataclass

from kcodec.errors import (
    BadLengthError,
    CrcMismatchError,
    DecodeError,
    DecompressionLimitError,
    record_corrupt_message,
)
from kcodec.records.decode import decode_entry
from kcodec.records.framing import HEADER_SIZE_UP_TO_MAGIC, LEGACY_CRC_OFFSET, SIZE_OFFSET, V2_CRC_OFFSET, check_header
from kcodec.records.model import Batch
from kcodec.records.resync import SkippedRange, find_next_entry
from kcodec.records.source import Input

__all__ = ["DamageSkipper"]

_I64 = struct.Struct(">q")


@dataclass
class DamageSkipper:
    """Walks one :class:`~kcodec.records.source.Input`, yielding the batches that decode and reporting the
    ranges skipped; an entry is read when it is reached, so a file is never held whole.

    Positions reported are ``shift`` + positions in the input. ``on_skip`` gets each
    :class:`SkippedRange`, ``on_tail`` (position, bytes) a partial tail, ``on_progress`` the position after
    the last whole entry."""

    verify_crc: bool
    max_batch_size: int
    max_decompressed_size: int
    on_skip: Callable[[SkippedRange], None]
    on_tail: Callable[[int, int], None]
    on_progress: Callable[[int], None]
    resync: bool = True
    on_refused: Callable[[SkippedRange], None] | None = None  # None: refused entries go to on_skip
    decode: Callable[..., Batch] | None = None  # decode_entry's signature (None: decode_entry itself)

    def batches(self, source: Input, pos: int, end: int, shift: int = 0) -> Generator[Batch, None, None]:
        while True:
            self.on_progress(pos + shift)
            source.forget(pos)  # nothing before pos is read again (a stream drops what it kept of it)
            available = min(end - pos, source.reach(pos, HEADER_SIZE_UP_TO_MAGIC))
            if available < HEADER_SIZE_UP_TO_MAGIC:
                self.on_tail(pos + shift, available)
                return
            header = bytes(source.read(pos, HEADER_SIZE_UP_TO_MAGIC))
            if len(header) < HEADER_SIZE_UP_TO_MAGIC:  # the file shrank under the reader: it ends here
                self.on_tail(pos + shift, len(header))
                return
            try:
                total = check_header(header, pos + shift, self.max_batch_size)
            except DecodeError as exc:
                if not self.resync:
                    return self._skip_rest(source, pos, end, shift, exc)
                nxt = self._skip_to_next(source, pos, end, shift, exc)
                if nxt is None:
                    return
                pos = nxt
                continue
            available = min(end - pos, source.reach(pos, total))  # a stream is read ahead only this far
            if total > available:
                found = self._next(source, pos + 1, end) if self.resync else None
                if found is None:  # nothing readable after it: a partial tail, as without skipping
                    self.on_tail(pos + shift, available)
                    return
                err: DecodeError = BadLengthError(
                    f"size says the entry takes {total} bytes, past the end of the input ({available} bytes "
                    f"left); a valid batch starts at byte {found + shift}",
                    position=pos + shift + SIZE_OFFSET,
                    base_offset=_I64.unpack_from(header, 0)[0],
                    field="size",
                )
                self._report(source, pos, found, end, shift, err)
                pos = found
                continue
            entry = source.read(pos, total)
            if len(entry) < total:
                self.on_tail(pos + shift, len(entry))
                return
            try:
                batch = (self.decode or decode_entry)(
                    bytes(entry),
                    pos + shift,
                    verify_crc=self.verify_crc,
                    max_decompressed_size=self.max_decompressed_size,
                )
            except DecompressionLimitError as exc:  # kcodec's cap, not damage: keep going at the entry's end
                refused = SkippedRange.from_error(pos + shift, pos + total + shift, exc)
                (self.on_refused or self.on_skip)(refused)
                pos += total
                continue
            except DecodeError as exc:
                if not self.resync:
                    self._report(source, pos, pos + total, end, shift, exc)
                    pos += total
                    continue
                nxt = self._skip_to_next(source, pos, end, shift, exc)
                if nxt is None:
                    return
                pos = nxt
                continue
            del entry
            if not batch.crc_valid and self.resync and batch.computed_crc is not None:
                # a damaged size can swallow the entries after it: a valid entry starting inside a batch
                # whose CRC fails says the batch's framing, not the entry, is wrong
                found = self._next(source, pos + 1, end, before=pos + total)
                if found is not None:
                    err = CrcMismatchError(
                        f"{record_corrupt_message(batch.crc, batch.computed_crc)} and a valid batch starts "
                        f"inside it, at byte {found + shift}",
                        position=pos + shift + (V2_CRC_OFFSET if batch.magic == 2 else LEGACY_CRC_OFFSET),
                        base_offset=batch.base_offset,
                        field="crc",
                    )
                    self._report(source, pos, found, end, shift, err)
                    pos = found
                    continue
            yield batch
            pos += total

    def _next(self, source: Input, start: int, end: int, before: int | None = None) -> int | None:
        return find_next_entry(
            source,
            start,
            end,
            before=before,
            max_batch_size=self.max_batch_size,
            max_decompressed_size=self.max_decompressed_size,
        )

    def _skip_to_next(self, source: Input, pos: int, end: int, shift: int, exc: DecodeError) -> int | None:
        """Skip from ``pos`` to the next valid entry (returned), or to the end (None)."""
        found = self._next(source, pos + 1, end)
        self._report(source, pos, found, end, shift, exc)
        return found

    def _skip_rest(self, source: Input, pos: int, end: int, shift: int, exc: DecodeError) -> None:
        end = source.end_by(end)  # a stream is read to its end, its bytes dropped as they come
        self.on_skip(SkippedRange.from_error(pos + shift, end + shift, exc, rest=True))
        self.on_progress(end + shift)

    def _report(self, source: Input, pos: int, found: int | None, end: int, shift: int, exc: DecodeError) -> None:
        if found is None:
            end = source.end_by(end)  # nothing found: the scan read a stream to its end
        self.on_skip(SkippedRange.from_error(pos + shift, (end if found is None else found) + shift, exc))
        if found is None:
            self.on_progress(end + shift)
