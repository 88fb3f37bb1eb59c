"""Run every row, interleaved, and keep the median.

Each row is warmed up once on the workload's first batch (imports, lazy
tables, and a first check that it works), then every repeat runs every row
once over the whole workload, in an order rotated by a different amount each
repeat, so that whatever else the machine does is shared between
implementations instead of landing on one of them. The garbage collector stays
enabled (as in an application), the workload itself is frozen out of it
(:func:`gc.freeze`), and a collection runs before each timed run. On glibc, malloc's
mmap and trim thresholds are pinned for the timed rows (:func:`pin_malloc`).
"""

from __future__ import annotations

import ctypes
import gc
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kcodec.bench.implementations import ADAPTERS, OPERATIONS, Unavailable, codecs_for, magic_of
from kcodec.bench.names import IMPLEMENTATIONS
from kcodec.bench.workload import Workload


@dataclass
class Result:
    implementation: str
    operation: str
    codec: str
    records: int = 0  # records handled by one run
    raw_bytes: int = 0  # the uncompressed log bytes MB/s is computed on
    times: list[float] = field(default_factory=list)  # seconds, one per repeat
    status: str = "ok"  # ok, n/a (cannot exist here), error (failed while running)
    reason: str = ""
    extra: dict = field(default_factory=dict)  # e.g. peak memory

    @property
    def key(self) -> tuple[str, str, str]:
        return self.implementation, self.operation, self.codec

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.times)

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.times) if self.ok else None

    @property
    def records_per_s(self) -> float | None:
        m = self.median_s  # None unless ok
        return self.records / m if m is not None and m > 0 else None

    @property
    def mb_per_s(self) -> float | None:
        m = self.median_s  # None unless ok
        return self.raw_bytes / m / 1e6 if m is not None and m > 0 else None


@dataclass(frozen=True)
class Case:
    implementation: str
    operation: str
    codec: str

    @property
    def magic(self) -> int:
        return magic_of(self.operation)


def plan(
    codecs: Iterable[str],
    implementations: Iterable[str] = IMPLEMENTATIONS,
    operations: Iterable[str] = tuple(OPERATIONS),
) -> list[Case]:
    """Every (implementation, operation, codec) row that has an adapter, in table order."""
    codecs, implementations, operations = tuple(codecs), set(implementations), set(operations)
    cases = []
    for op in OPERATIONS:
        if op not in operations:
            continue
        for codec in codecs_for(op, codecs):
            for impl in IMPLEMENTATIONS:
                if impl in implementations and (impl, op) in ADAPTERS:
                    cases.append(Case(impl, op, codec))
    return cases


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: glibc's mallopt parameters (malloc.h) and the values the timed rows run with
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
PINNED_MMAP_THRESHOLD, PINNED_TRIM_THRESHOLD = 64 << 20, 128 << 20


def pin_malloc() -> bool:
    """Fix glibc malloc's mmap and trim thresholds, which it otherwise raises as large blocks are freed: one
    row's frees then decided whether the next row's large allocations came from the heap or from fresh pages
    faulted in (aiokafka's decode of a compressed log took 100 or 160 ms per 200k records, 31,000 page faults
    a run, by what had run before it). True when pinned; False where the C library has no mallopt."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mmap = mallopt(M_MMAP_THRESHOLD, PINNED_MMAP_THRESHOLD)
    return mmap == 1 and mallopt(M_TRIM_THRESHOLD, PINNED_TRIM_THRESHOLD) == 1


def run(
    workload: Workload, cases: list[Case], repeats: int, progress: Callable[[str], None] | None = None
) -> list[Result]:
    say = progress or (lambda message: None)
    results: dict[Case, Result] = {}
    runs: dict[Case, Callable[[], int]] = {}
    head = workload.head(1)
    pin_malloc()
    for case in cases:
        raw = workload.raw_bytes_v1 if case.magic == 1 else workload.raw_bytes_v2
        result = results[case] = Result(case.implementation, case.operation, case.codec, workload.records, raw)
        factory = ADAPTERS[(case.implementation, case.operation)]
        try:
            got = factory(head, case.magic, case.codec)()
            if got != head.records:
                raise AssertionError(f"handled {got} records, expected {head.records}")
            runs[case] = factory(workload, case.magic, case.codec)
        except Unavailable as exc:
            result.status, result.reason = "n/a", str(exc)
        except Exception as exc:  # a row that breaks is reported, not fatal
            result.status, result.reason = "error", _describe(exc)

    gc.collect()
    gc.freeze()  # the workload and the prepared inputs are never garbage: keep them out of every collection
    try:
        order = [c for c in cases if c in runs]
        for r in range(repeats):
            shift = (r * len(order)) // repeats if order else 0
            started = time.perf_counter()
            for case in order[shift:] + order[:shift]:
                if case not in runs:
                    continue
                result = results[case]
                gc.collect()
                try:
                    t0 = time.perf_counter()
                    got = runs[case]()
                    elapsed = time.perf_counter() - t0
                    if got != workload.records:
                        raise AssertionError(f"handled {got} records, expected {workload.records}")
                except Exception as exc:
                    result.status, result.reason, result.times = "error", _describe(exc), []
                    del runs[case]
                    continue
                result.times.append(elapsed)
            say(f"repeat {r + 1}/{repeats}: {len(runs)} rows in {time.perf_counter() - started:.1f} s")
    finally:
        gc.unfreeze()
    return [results[c] for c in cases]
