"""Compressed v2 batches inflated ahead, on another core, while the kernel decodes the batches before them.

The kernel's batch walks (:func:`~kcodec.records.decode.v2_run` for Records,
:func:`~kcodec.records.columnar.segment_run` for Arrow columns) call kcodec's decompressor for each
compressed batch on the thread that decodes. Given an :class:`Inflater`, they first ask it for the batch's
records: a worker thread has inflated the next few batches of the bytes at hand with the same decompressor,
the same codec and the same ``max_decompressed_size``, while the walk decoded the ones before. Python's
decompressors (zlib, lz4.block, zstandard's reader, cramjam's snappy) release the GIL while they work, and the
Arrow walk releases it while it decodes a batch's records, so the two run on two cores.

Results do not change: the kernel takes inflated records only for an entry whose bytes equal the ones the
worker inflated, and whatever went wrong ahead (damage, a decompression bomb past the limit, no memory) is not
kept as an answer: the walk then calls the decompressor itself at that batch, as without an Inflater, and that
call raises (or the general path does) the same error at the same place.

Only batches with at least :data:`MIN_STORED` bytes of compressed records are inflated ahead (the kernel does not
ask for smaller ones): for a small batch the hand-off costs about what it saves.

Bounds: at most :data:`AHEAD_BATCHES` batches are queued or inflated ahead of the walk, and none is started
while :data:`AHEAD_BYTES` of inflated records wait to be taken; each is capped by ``max_decompressed_size`` as
the walk's own are. Threads: :data:`WORKERS` per walk, started at its first compressed batch (an uncompressed
log starts none), gone once the walk is closed or after :data:`IDLE_SECONDS` without work (an abandoned
iterator leaves nothing running). Nothing is shared across walks, so a fork never inherits a pool; a walk
continued in a forked child inflates on its own thread.

By default only gzip batches are inflated ahead (:data:`DEFAULT_CODECS` says why); ``prefetch=True`` or
``KCODEC_PREFETCH=1`` hands over every codec's. Off where fewer than two cores are usable
(``os.sched_getaffinity``), with ``KCODEC_PREFETCH=0`` in the environment, or with ``prefetch=False``
(``read_batches``, ``read_records``, ``read_arrow``; the keyword wins over the environment).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections import deque

from kcodec.records.framing import (
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    SIZE_OFFSET,
    V2_ATTRIBUTES_LOW_BYTE,
    V2_CODEC_NAMES,
    V2_COMPRESSION_MASK,
    V2_CONTROL_MASK,
    V2_MIN_BATCH_LENGTH,
    V2_OVERHEAD,
    V2_RECORDS_OFFSET,
)
from kcodec.runtime import compression

__all__ = [
    "AHEAD_BATCHES",
    "AHEAD_BYTES",
    "DEFAULT_CODECS",
    "ENV",
    "IDLE_SECONDS",
    "MIN_STORED",
    "WORKERS",
    "Inflater",
    "inflater",
    "setting",
    "usable_cores",
    "wanted",
]

ENV = "KCODEC_PREFETCH"  # "0"/"off"/"false"/"no": never inflate ahead; "1"/"on"/"true"/"yes": whatever the load
AHEAD_BATCHES = 4  # batches queued, being inflated or inflated and not yet taken
AHEAD_BYTES = 8 << 20  # no batch is started while this many inflated bytes wait to be taken
WORKERS = 1  # with the walk's own thread, which inflates a batch itself when no worker has started it
#: the fewest compressed bytes of records a batch has to be inflated ahead: a smaller one is inflated where it is
#: decoded (handing it to a thread, some 10 us of locks, queues and Python, would cost about what it saves)
MIN_STORED = 32 << 10
IDLE_SECONDS = 1.0  # a worker with nothing to do for this long ends
#: the codecs inflated ahead by default. On the 2-vCPU machines kcodec is measured on, two threads get about one
#: core's throughput for most work, but gzip's inflating (latency-bound) gains: two inflated at once took 1/1.5 of
#: the time, and Records on gzip came 1.54x faster. lz4, snappy and zstd decompress at about memory speed there,
#: and handing them over cost more than it saved (Arrow columns 0.83-0.88x). ``prefetch=True`` or
#: ``KCODEC_PREFETCH=1`` inflates every codec ahead (where a second core is really free, they gain too).
DEFAULT_CODECS = frozenset({"gzip"})

_OFF = ("0", "off", "false", "no")
_ON = ("1", "on", "true", "yes")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def setting() -> bool | None:
    """What ``KCODEC_PREFETCH`` says: off ("0", "off", "false", "no"), on whatever the load ("1", "on", "true",
    "yes"), or None (unset or anything else: decided by the load)."""
    value = os.environ.get(ENV, "").strip().lower()
    return False if value in _OFF else True if value in _ON else None


def wanted(prefetch: bool | None = None) -> bool:
    """Whether a walk inflates ahead: never with fewer than two usable cores; else ``prefetch`` when it is given,
    else what ``KCODEC_PREFETCH`` says (:func:`setting`), else yes (for :data:`DEFAULT_CODECS`)."""
    if usable_cores() < 2:
        return False
    if prefetch is None:
        prefetch = setting()
    return True if prefetch is None else bool(prefetch)


def inflater(limit: int, prefetch: bool | None = None, size: int | None = None) -> Inflater | None:
    """An :class:`Inflater` for a walk whose decompressed-size cap is ``limit``, or None where :func:`wanted`
    says no or the walk's ``size`` bytes (when known) cannot hold two batches worth inflating ahead."""
    if size is not None and size < 2 * MIN_STORED:
        return None
    if not wanted(prefetch):
        return None
    forced = (setting() if prefetch is None else prefetch) is True
    return Inflater(limit, codecs=None if forced else DEFAULT_CODECS)


class _Job:
    __slots__ = ("position", "entry", "codec", "claim", "done", "records")

    def __init__(self, position: int, entry: memoryview, codec: str):
        self.position, self.entry, self.codec = position, entry, codec
        self.claim = threading.Lock()  # taken by the one thread that inflates it (a worker, or the walk's)
        self.done = threading.Lock()  # held until it is inflated
        self.done.acquire()
        self.records: bytes | None = None


class Inflater:
    """``inflated(position) -> (entry, records) or None`` for the kernel's walks (see the module): the
    compressed v2 batch at ``position`` of the input, and its records as kcodec's decompressor gives them.
    :meth:`over` tells it the bytes the next kernel call walks; :meth:`close` ends its threads. Only the walk's
    thread calls it; a job is inflated by whichever thread claims it first, so the walk never waits for a
    job no worker has started, and while it waits for one a worker is inflating, it inflates the next itself
    (two batches inflated at once: gzip's inflating is most of a read)."""

    def __init__(
        self, limit: int, workers: int = WORKERS, min_stored: int | None = None, codecs: frozenset[str] | None = None
    ):
        self.limit, self.workers = limit, workers
        self.codecs = codecs  # the codecs whose batches are inflated ahead (None: every codec)
        # the kernel asks only for batches with this many compressed bytes of records
        self.min_stored = MIN_STORED if min_stored is None else min_stored
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # jobs for the workers, in order
        self._ahead: deque[_Job] = deque()  # every job not yet taken, in the input's order
        self._jobs: dict[int, _Job] = {}  # position -> job, for the ones in _ahead
        self._threads: list[threading.Thread] = []
        self._view = memoryview(b"")
        self._base = self._scan = 0  # the view's position; where the next entry to look at is
        self._pid = os.getpid()
        self._closed = False

    def over(self, view, base: int) -> Inflater:
        """The bytes (from position ``base``) the next kernel call walks: batches ahead are looked for there."""
        view = memoryview(view)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        self._view, self._base = view, base
        if not base <= self._scan < base + len(view):
            self._scan = base
        return self

    def __call__(self, position: int) -> tuple[memoryview, bytes] | None:
        if self._closed or self._pid != os.getpid():  # a forked child has none of the threads
            return None
        self._forget_before(position)
        if self._scan < position:
            self._scan = position
        self._fill()
        job = self._jobs.get(position)
        if job is None:
            return None
        if job.claim.acquire(False):  # no worker has started it: inflated here rather than waited for
            records = self._inflate(job)
        else:
            if not job.done.acquire(False):  # a worker is inflating it: the next one is inflated here meanwhile
                for later in self._ahead:
                    if later is not job and later.claim.acquire(False):
                        try:
                            later.records = self._inflate(later)
                        finally:
                            later.done.release()
                        break
                job.done.acquire()
            records = job.records
        self._forget_before(position + 1)
        self._fill()
        return None if records is None else (job.entry, records)

    def close(self) -> None:
        """No more batches: the threads end (a batch being inflated is finished and dropped)."""
        self._closed = True
        self._ahead.clear()
        self._jobs.clear()
        self._view = memoryview(b"")
        while not self._queue.empty():  # no job left holding the caller's bytes
            with contextlib.suppress(queue.Empty):
                self._queue.get_nowait()
        for _ in self._threads:
            self._queue.put(None)
        self._threads.clear()

    def _forget_before(self, position: int) -> None:
        """Jobs for entries before ``position``: the walk went past them (or decoded them another way)."""
        ahead = self._ahead
        while ahead and ahead[0].position < position:
            job = ahead.popleft()
            del self._jobs[job.position]
            job.claim.acquire(False)  # a worker that has not started it leaves it
            job.records = None

    def _fill(self) -> None:
        """Jobs for the compressed v2 batches after the ones queued, as far as the view holds whole entries
        and the bounds allow."""
        view, base, ahead = self._view, self._base, self._ahead
        while len(ahead) < AHEAD_BATCHES:
            if ahead and sum(len(job.records or b"") for job in ahead) >= AHEAD_BYTES:
                return
            at = self._scan - base
            if at < 0 or len(view) - at < V2_OVERHEAD or view[at + MAGIC_OFFSET] != 2:
                return
            length = int.from_bytes(view[at + SIZE_OFFSET : at + SIZE_OFFSET + 4], "big", signed=True)
            size = LOG_OVERHEAD + length
            if length < V2_MIN_BATCH_LENGTH or size > len(view) - at:
                return  # the walk ends there too; a later view may hold it whole
            attributes = view[at + V2_ATTRIBUTES_LOW_BYTE]
            codec_id = attributes & V2_COMPRESSION_MASK
            codec = V2_CODEC_NAMES[codec_id] if codec_id < len(V2_CODEC_NAMES) else None
            if (
                codec is not None
                and codec != "none"
                and (self.codecs is None or codec in self.codecs)
                and not attributes & V2_CONTROL_MASK
                and size - V2_RECORDS_OFFSET >= self.min_stored
            ):
                job = _Job(self._scan, view[at : at + size], codec)
                ahead.append(job)
                self._jobs[job.position] = job
                self._queue.put(job)
                self._threads = [t for t in self._threads if t.is_alive()]
                if len(self._threads) < self.workers:
                    thread = threading.Thread(target=self._work, name="kcodec-inflate", daemon=True)
                    try:
                        thread.start()
                    except RuntimeError:  # no thread to be had: the walk inflates every batch itself
                        self.workers = 0
                    else:
                        self._threads.append(thread)
            self._scan += size

    def _work(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                return
            if job is None or self._closed:
                return
            if job.claim.acquire(False):
                try:
                    job.records = self._inflate(job)
                finally:
                    job.done.release()
            job = None  # not kept (with the bytes it holds) while waiting for the next

    def _inflate(self, job: _Job) -> bytes | None:
        try:
            return compression.decompress(job.codec, job.entry[V2_RECORDS_OFFSET:], magic=2, max_size=self.limit)
        except Exception:  # the walk calls the decompressor itself at this batch, which raises it there
            return None
