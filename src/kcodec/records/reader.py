"""Walk log entries in bytes, a file or a stream, and decode them.

Framing follows Kafka's ByteBufferLogInputStream / FileLogInputStream: an
entry is 12 + size bytes; a partial entry at the end of the input is a
truncated tail (lenient mode, the default, reports it and stops; strict mode
raises). A 1 GiB segment is never read into memory: files are read through
bounded pread windows (:mod:`kcodec.records.source`), one entry at a time, and
a file that shrinks while it is read ends there, as a partial tail.

Damage: by default the first entry that does not decode raises its
:class:`~kcodec.errors.DecodeError` (after the good batches before it were
yielded). With ``skip_corrupt=True`` the reader instead goes on after it
(:mod:`kcodec.records.skipping`: by default it resynchronises at the next
position where a whole entry parses and its CRC holds, so nothing readable is
lost), records the bytes passed over in :attr:`BatchReader.skipped` with the
reason, and calls ``on_skip``.

Limits: an entry whose CRC holds but that inflates past ``max_decompressed_size`` is refused by
kcodec's own cap, not damaged (Kafka would read it). Without ``skip_corrupt`` its
:class:`~kcodec.errors.DecompressionLimitError` is raised, unless ``on_refused`` is given; with
``skip_corrupt`` or ``on_refused`` the entry is recorded in :attr:`BatchReader.refused` (and passed to
``on_refused``, or to ``on_skip`` when that is not given) and reading goes on at its end: its bytes are
never taken for damage, resynchronised over or dropped.

Resources: sizes are checked against the bytes that remain before anything is
copied; decompressed output is capped (``max_decompressed_size``, by default
64 times the largest batch accepted, see :func:`default_max_decompressed_size`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from kcodec.errors import BadLengthError, DecompressionLimitError, TruncatedError
from kcodec.records.decode import decode_entry, legacy_run, v2_run
from kcodec.records.framing import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, check_header, entry_size
from kcodec.records.model import Batch, Record
from kcodec.records.prefetch import inflater
from kcodec.records.resync import SkippedRange
from kcodec.records.skipping import DamageSkipper
from kcodec.records.source import (
    WINDOW,
    Input,
    Source,
    is_stream,
    open_input,
    open_stream_input,
    read_up_to,
    spilled_stream,
)
from kcodec.records.transactions import TxnTracker, check_isolation_level, committed_records
from kcodec.runtime import compression

__all__ = [
    "BatchReader",
    "PartialTail",
    "Source",
    "read_batches",
    "read_records",
    "default_max_decompressed_size",
    "shrank_message",
    "DEFAULT_MAX_BATCH_SIZE",
    "MAX_KEPT_RANGES",
]

DEFAULT_MAX_BATCH_SIZE = 2**31 - 1  # no cap beyond the format's own; set lower to bound memory
KAFKA_MAX_MESSAGE_BYTES = 1048588  # Kafka's default message.max.bytes (1 MiB + 12): its largest batch
MAX_KEPT_RANGES = 1000  # skipped ranges a reader lists; it counts the rest (on_skip is told of every one)
DECOMPRESSION_FACTOR = 64  # how much a legitimate batch may inflate, at most


def default_max_decompressed_size(max_batch_size: int = DEFAULT_MAX_BATCH_SIZE) -> int:
    """The decompressed-size cap for a reader accepting batches up to ``max_batch_size`` bytes:
    64 times that size (at least 1 MiB, at most 2 GiB). Without a batch size cap it is 64 times Kafka's
    default largest batch, ``compression.DEFAULT_MAX_DECOMPRESSED_SIZE`` (64 MiB)."""
    if max_batch_size >= DEFAULT_MAX_BATCH_SIZE:
        return compression.DEFAULT_MAX_DECOMPRESSED_SIZE
    return max(1 << 20, min(DECOMPRESSION_FACTOR * max_batch_size, 2**31 - 1))


def _run_at(source: Input, run, pos: int, end: int) -> tuple[object, int, bool]:
    """``run`` over the bytes at hand from ``pos`` (:meth:`BatchReader.entry_runs`). A run that stops at an
    entry those bytes do not hold whole, where the read-ahead window ends before the input does, is said to
    stop there only for that (``full``), and a run that takes nothing for that is tried on a window read
    from ``pos``: an entry cut by a window is taken by the next run, not decoded on its own."""
    view = source.ahead(pos, end - pos)
    for fresh in (False, True):
        made, taken, full = run(view, pos)
        if full or len(view) >= end - pos:
            break
        size = entry_size(bytes(view[taken : taken + LOG_OVERHEAD]))
        if size is not None and size <= len(view) - taken:
            break  # stopped at an entry it does not take
        if taken:
            return made, taken, True
        if fresh:
            break  # an entry larger than a window
        view = source.read(pos, min(end - pos, WINDOW))
    return made, taken, full


def _position(name: str, value) -> int:
    """A ``start`` / ``end`` byte position: an int >= 0 (what the decoders check, said before they run)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadLengthError(f"{name} must be a byte position (an int >= 0), not {value!r}")
    return value


@dataclass(frozen=True)
class PartialTail:
    """Bytes at the end of the input that do not hold a whole entry."""

    position: int
    size: int


class BatchReader:
    """Iterate the batches of one input. After iteration, :attr:`partial_tail`
    says whether the input ended inside an entry (lenient mode), and
    :attr:`skipped` lists the byte ranges passed over (``skip_corrupt``): the first ``MAX_KEPT_RANGES``,
    the others counted in :attr:`more_skipped` (and their bytes in :attr:`more_skipped_bytes`).

    As a context manager (``with read_batches(path) as reader:``) it closes, on leaving, the file and
    memory map of every iteration left unfinished; :meth:`close` does the same."""

    def __init__(
        self,
        source: Source,
        *,
        verify_crc: bool = True,
        strict: bool = False,
        max_decompressed_size: int | None = None,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        start: int = 0,
        end: int | None = None,
        skip_corrupt: bool = False,
        on_skip: Callable[[SkippedRange], None] | None = None,
        resync: bool = True,
        on_refused: Callable[[SkippedRange], None] | None = None,
        decode: Callable[..., Batch] | None = None,
        prefetch: bool | None = None,
    ):
        self.source = source
        self.prefetch = prefetch  # compressed batches inflated ahead on another core (kcodec.records.prefetch)
        self.decode = decode
        self.verify_crc, self.strict = verify_crc, strict
        if max_decompressed_size is None:
            max_decompressed_size = default_max_decompressed_size(max_batch_size)
        self.max_decompressed_size, self.max_batch_size = max_decompressed_size, max_batch_size
        self.start, self.end = _position("start", start), None if end is None else _position("end", end)
        self.skip_corrupt, self.on_skip, self.resync = skip_corrupt, on_skip, resync
        self.partial_tail: PartialTail | None = None
        self.skipped: list[SkippedRange] = []  # the first MAX_KEPT_RANGES (on_skip gets every one)
        self.more_skipped = self.more_skipped_bytes = 0  # ranges skipped after those, and their bytes
        self.on_refused = on_refused
        self.refused: list[SkippedRange] = []  # whole entries refused by max_decompressed_size, not damage
        self.bytes_read = 0  # position after the last whole entry (while a run of v0/v1 messages is yielded: its start)
        self.shrank_to: int | None = None  # the file got shorter while it was read: where it ended
        self._walks: weakref.WeakSet = weakref.WeakSet()  # iterations that may hold a file open

    def __iter__(self) -> Iterator[Batch]:
        walk = self._walk()
        self._walks.add(walk)
        return walk

    def close(self) -> None:
        """Close what unfinished iterations hold open (a file); they end there."""
        for walk in list(self._walks):
            walk.close()
        self._walks.clear()

    def __enter__(self) -> BatchReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _walk(self) -> Iterator[Batch]:
        # the walk's own generator, not one delegating to it: each batch then resumes one frame, not two
        # (a v0/v1 message is a batch of its own: about a tenth of reading uncompressed v1 records)
        if self.skip_corrupt:
            return self._skipping()
        if self.decode is None and not is_stream(self.source):
            return self._decoded_in_runs()
        return self._decoded_entries()

    def _decoded_entries(self) -> Iterator[Batch]:
        for position, entry in self.entries():
            batch = self._decode(position, entry)
            if batch is not None:
                yield batch

    def _decode(self, position: int, entry: bytes) -> Batch | None:
        """The entry decoded; None when it is refused by ``max_decompressed_size`` and ``on_refused`` takes it."""
        try:
            return (self.decode or decode_entry)(
                entry, position, verify_crc=self.verify_crc, max_decompressed_size=self.max_decompressed_size
            )
        except DecompressionLimitError as exc:
            if self.on_refused is None:
                raise
            self._refuse(SkippedRange.from_error(position, position + len(entry), exc))
            return None

    def _decoded_in_runs(self) -> Iterator[Batch]:
        """What decoding every entry of :meth:`entries` yields, with runs of uncompressed v0/v1 messages (one
        Batch each, as Kafka's AbstractLegacyRecordBatch) built by the compiled kernel many at a time
        (:func:`~kcodec.records.decode.legacy_run`). A run stops at the first entry it cannot finish (a
        compressed wrapper, a v2 batch, damage, the end of the bytes at hand); that entry is decoded on its
        own, as :meth:`entries` gives it, so what it raises and where is unchanged. Runs are tried at the
        start and after each uncompressed v0/v1 message: a v2 or compressed log costs one try. Runs of v2 data
        batches (:func:`~kcodec.records.decode.v2_run`) are the same: tried at the start and after each
        run or entry, an entry they do not take decoded on its own."""
        # the caller's bytes: v2 records are read in place (a file's windows are not kept alive by them)
        owner = self.source if type(self.source) is bytes else None
        with open_input(self.source) as source:
            pos, end = self.start, self._end(source.size)
            ahead = inflater(self.max_decompressed_size, self.prefetch, end - pos)
            try:
                runs = v2_runs = True
                while True:
                    if runs:
                        found = legacy_run(source.ahead(pos, end - pos), pos, self.max_batch_size)
                        if found is not None and found[0]:
                            self.bytes_read = pos
                            yield from found[0]
                            pos += found[1]
                            continue
                        runs = found is not None  # None: no compiled kernel
                    if v2_runs:
                        found = v2_run(
                            source.ahead(pos, end - pos),
                            pos,
                            owner,
                            self.verify_crc,
                            self.max_decompressed_size,
                            self.max_batch_size,
                            ahead,
                        )
                        if found is not None and found[0]:
                            self.bytes_read = pos
                            yield from found[0]
                            pos += found[1]
                            continue
                        v2_runs = found is not None
                    entry = self._entry_at(source, pos, end)
                    if entry is None:
                        return
                    batch = self._decode(pos, entry)
                    if batch is not None:
                        yield batch
                        runs = runs and batch.magic < 2 and batch.compression == "none"
                    pos += len(entry)
            finally:
                if ahead is not None:
                    ahead.close()
                self.shrank_to = source.shrank_to

    def entries(self) -> Iterator[tuple[int, bytes]]:
        """(position, bytes) of every whole entry, without decoding it."""
        if is_stream(self.source):
            yield from self._from_stream(self.source)
            return
        with open_input(self.source) as source:
            try:
                yield from self._from_input(source)
            finally:
                self.shrank_to = source.shrank_to

    def entry_runs(self, run: Callable[[memoryview | bytes, int], tuple[object, int, bool]] | None) -> Iterator[tuple]:
        """What :meth:`entries` gives, as ``(position, entry, None)``, except for the runs of entries that
        ``run(bytes at hand, their position)`` takes many at a time: it returns (what it made of them, how
        many bytes they take, whether it stopped only because it took enough), and a run that took any is
        given as ``(position, None, what it made)``. A run that did not stop for that stopped at an entry it
        does not take; that entry is given as :meth:`entries` gives it (so what it raises and where is
        unchanged), and the next run starts after it. A stream, or ``run`` None: just :meth:`entries`."""
        if run is None or is_stream(self.source):
            for position, entry in self.entries():
                yield position, entry, None
            return

        def entry_at(source: Input, pos: int, end: int):
            whole = self._entry_at(source, pos, end)
            return None if whole is None else ((pos, whole, None), pos + len(whole))

        yield from self._runs(run, entry_at)

    def _runs(self, run, step) -> Iterator[tuple]:
        """The walk of :meth:`entry_runs` and :meth:`batch_runs`: runs, and where a run stops at an entry it
        does not take, ``step(input, position, end)``: (what to give, the position after it), None at the end."""
        with open_input(self.source) as source:
            try:
                pos, end = self.start, self._end(source.size)
                while True:
                    made, taken, full = _run_at(source, run, pos, end)
                    if taken:
                        self.bytes_read = pos
                        yield pos, None, made
                        pos += taken
                        if full:
                            continue
                    got = step(source, pos, end)
                    if got is None:
                        return
                    item, pos = got
                    yield item
            finally:
                self.shrank_to = source.shrank_to

    def batch_runs(self, run: Callable[[memoryview | bytes, int], tuple[object, int, bool]] | None) -> Iterator:
        """What iterating gives (the decoded batches, with damage skipped as ``skip_corrupt`` skips it), except
        for the runs of entries ``run`` takes many at a time (as in :meth:`entry_runs`), each given as what
        ``run`` made of them (nothing when it passed them all over). Every entry a run does not take is given
        as iterating gives it (so what it raises or skips, and where, is unchanged); under ``skip_corrupt``
        that is one step of the skipping walk, and the next run is tried after the batch it yields. A stream,
        or ``run`` None: just iterating."""
        if run is None or is_stream(self.source):
            yield from self
            return
        if not self.skip_corrupt:
            for position, entry, made in self.entry_runs(run):
                if entry is None:
                    if made is not None:
                        yield made
                    continue
                batch = self._decode(position, entry)
                if batch is not None:
                    yield batch
            return
        skipper = self._skipper()

        def one_step(source: Input, pos: int, end: int):
            """One step of the skipping walk from ``pos``: the next batch that decodes, damage before it skipped."""
            step = skipper.batches(source, pos, end)
            batch = next(step, None)
            step.close()
            return None if batch is None else ((batch.position, None, batch), batch.position + batch.size)

        for _, _, made in self._runs(run, one_step):
            if made is not None:
                yield made

    # ------------------------------------------------------------------ what the walks report

    def _progress(self, position: int) -> None:
        self.bytes_read = position

    def _tail(self, position: int, available: int) -> None:
        if available <= 0:
            return
        self.partial_tail = PartialTail(position, available)
        if self.strict:
            raise TruncatedError(
                f"input ends inside a log entry: {available} bytes at the end do not hold a whole batch",
                position=position,
            )

    def _refuse(self, refused: SkippedRange) -> None:
        self.refused.append(refused)
        callback = self.on_refused if self.on_refused is not None else self.on_skip
        if callback is not None:
            callback(refused)

    def _skip(self, skipped: SkippedRange) -> None:
        if len(self.skipped) < MAX_KEPT_RANGES:
            self.skipped.append(skipped)
        else:
            self.more_skipped += 1
            self.more_skipped_bytes += skipped.size
        if self.on_skip is not None:
            self.on_skip(skipped)

    # ------------------------------------------------------------------ the walks

    def _skipping(self) -> Iterator[Batch]:
        """Batches that decode, damaged entries skipped (:mod:`kcodec.records.skipping`)."""
        skipper = self._skipper()
        # resynchronising looks ahead: a stream is kept in temporary files from the reader's position to its
        # furthest look-ahead (files are read in windows instead), and its first byte is at position ``start``
        stream = is_stream(self.source)
        opened = open_stream_input(self.source) if is_stream(self.source) else open_input(self.source)
        with opened as source:
            try:
                if stream:
                    yield from skipper.batches(source, 0, self._end(source.size, self.start), shift=self.start)
                else:
                    yield from skipper.batches(source, self.start, self._end(source.size))
            finally:
                self.shrank_to = source.shrank_to

    def _skipper(self) -> DamageSkipper:
        return DamageSkipper(
            self.verify_crc,
            self.max_batch_size,
            self.max_decompressed_size,
            on_skip=self._skip,
            on_tail=self._tail,
            on_progress=self._progress,
            resync=self.resync,
            on_refused=self._refuse,
            decode=self.decode,
        )

    def _end(self, size: int, shift: int = 0) -> int:
        return size if self.end is None else min(self.end - shift, size)

    def _from_input(self, source: Input) -> Iterator[tuple[int, bytes]]:
        pos, end = self.start, self._end(source.size)
        while (entry := self._entry_at(source, pos, end)) is not None:
            yield pos, entry
            pos += len(entry)

    def _entry_at(self, source: Input, pos: int, end: int) -> bytes | None:
        """The whole entry at ``pos``; None at the end of the input (a partial tail reported)."""
        self.bytes_read = pos
        available = end - pos
        if available < HEADER_SIZE_UP_TO_MAGIC:
            self._tail(pos, available)
            return None
        header = bytes(source.read(pos, HEADER_SIZE_UP_TO_MAGIC))
        if len(header) < HEADER_SIZE_UP_TO_MAGIC:  # the file shrank under the reader: it ends here
            self._tail(pos, len(header))
            return None
        total = check_header(header, pos, self.max_batch_size)
        if total > available:
            self._tail(pos, available)
            return None
        entry = source.read(pos, total)
        if len(entry) < total:
            self._tail(pos, len(entry))
            return None
        return bytes(entry)

    def _from_stream(self, stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
        pos = self.start
        while True:
            self.bytes_read = pos
            header = read_up_to(stream, HEADER_SIZE_UP_TO_MAGIC)
            if len(header) < HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, len(header))
                return
            total = check_header(header, pos, self.max_batch_size)
            rest = read_up_to(stream, total - HEADER_SIZE_UP_TO_MAGIC)
            if len(rest) < total - HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, len(header) + len(rest))
                return
            yield pos, header + rest
            pos += total


def shrank_message(size: int) -> str:
    """What to say when a file got shorter while it was read (:attr:`BatchReader.shrank_to`)."""
    return (
        f"the file shrank to {size} bytes while it was read (retention, or a follower truncating its log?): "
        "read up to its new end"
    )


def read_batches(
    source: Source,
    *,
    verify_crc: bool = True,
    strict: bool = False,
    max_decompressed_size: int | None = None,
    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
    start: int = 0,
    end: int | None = None,
    skip_corrupt: bool = False,
    on_skip: Callable[[SkippedRange], None] | None = None,
    resync: bool = True,
    on_refused: Callable[[SkippedRange], None] | None = None,
    decode: Callable[..., Batch] | None = None,
    prefetch: bool | None = None,
) -> BatchReader:
    """Batches of bytes, a memoryview, a file path (a regular file, read with pread) or a binary stream.

    * ``verify_crc``: check every CRC (a mismatch raises CrcMismatchError);
    * ``strict``: a partial entry at the end is an error (default: it is reported as the reader's
      ``partial_tail``, as Kafka's readers ignore it);
    * ``max_decompressed_size``: the cap on what one compressed batch may inflate to (default:
      :func:`default_max_decompressed_size` of ``max_batch_size``);
    * ``max_batch_size``: the largest entry accepted, in bytes;
    * ``start`` / ``end``: byte positions to read between;
    * ``skip_corrupt``: go on after a damaged entry instead of raising; the reader's ``skipped`` lists
      what was passed over, and ``on_skip`` is called with each
      :class:`~kcodec.records.resync.SkippedRange` as it is found;
    * ``resync`` (with ``skip_corrupt``): scan for the next valid entry (the default), or skip a
      damaged entry alone and stop at broken framing (see :mod:`kcodec.records.skipping`);
    * ``on_refused``: called with each entry refused by ``max_decompressed_size``; reading goes on
      after it (a limit kcodec sets for its own safety never makes it drop data Kafka keeps);
    * ``decode``: turns each whole entry into what is yielded (None: :func:`decode_entry`, whose
      signature it has; :func:`kcodec.records.columnar.entry_to_arrow` yields the records as columns);
    * ``prefetch``: inflate the next compressed batches on another core while the kernel decodes
      (:mod:`kcodec.records.prefetch`; None, the default: unless ``KCODEC_PREFETCH=0``, where two cores are usable).

    The reader is also a context manager that closes the file it maps."""
    return BatchReader(
        source,
        verify_crc=verify_crc,
        strict=strict,
        max_decompressed_size=max_decompressed_size,
        max_batch_size=max_batch_size,
        start=start,
        end=end,
        skip_corrupt=skip_corrupt,
        on_skip=on_skip,
        resync=resync,
        on_refused=on_refused,
        decode=decode,
        prefetch=prefetch,
    )


def read_records(source: Source, *, isolation_level: str = "read_uncommitted", **options) -> Iterator[Record]:
    """Every record of every batch, in order; ``options`` are :func:`read_batches`'.

    ``isolation_level="read_committed"`` returns what a consumer with that isolation.level gets: no
    control records, none of an aborted transaction, none of a transaction whose marker is not in the
    input (Kafka holds those back behind the last stable offset). Aborted transactions are found
    from the ABORT markers first (kcodec.records.transactions), so the input is read twice; a stream is
    copied to a temporary file for that (memory holds a window of it, the disk all of it); its first byte is
    at position ``start``, as for :func:`read_batches`."""
    if not check_isolation_level(isolation_level):
        for batch in read_batches(source, **options):
            yield from batch.records
        return
    if is_stream(source):
        with spilled_stream(source, options.get("start", 0)) as spilled:
            yield from _committed(spilled, options)
        return
    yield from _committed(source, options)


def _committed(source, options: dict) -> Iterator[Record]:
    """:func:`read_records`' read_committed for a source that can be read twice."""
    tracker = TxnTracker({}, 0)  # the input is the log from its start: an ABORT without a start is empty
    aborted = []
    with read_batches(source, **options) as first_pass:
        for batch in first_pass:
            txn = tracker.observe(batch)
            if txn is not None:
                aborted.append((txn.producer_id, txn.first_offset, txn.last_offset))
    with read_batches(source, **options) as reader:
        yield from committed_records(reader, aborted, tracker.ongoing)
