"""Peak memory while streaming a large segment file, measured in a child process.

The parent writes one segment file (the workload's uncompressed v2 log,
repeated with base offsets rewritten so offsets keep increasing) into a
temporary directory, runs one child per implementation, and deletes the file.
Each child imports its library, notes its RSS, decodes every record of the file
(touching offset, timestamp, key, value and headers), and reports:

* ``peak_rss`` -- ``VmHWM`` from ``/proc/self/status``: the peak resident set,
  which counts file pages mapped into the process as well as allocated memory;
* ``peak_anon`` -- the largest ``RssAnon`` sampled every few batches: the
  memory the process allocated itself (heap, buffers), without mapped file pages;
* ``baseline_rss`` -- ``VmRSS`` after the imports, before the file is opened.

Run as ``python -m kcodec.bench.memory IMPLEMENTATION PATH``; prints one JSON object.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

#: How each implementation streams the file.
STREAMS = {
    "kcodec": "kcodec.read_batches(path): the file memory-mapped",
    "kcodec-stream": "kcodec.read_batches(open(path, 'rb')): one entry read at a time",
    "aiokafka": "MemoryRecords over 1 MiB reads of whole batches (a consumer's fetches)",
    "kafka-python": "MemoryRecords over 1 MiB reads of whole batches (a consumer's fetches)",
}
SAMPLE_EVERY = 8  # batches between RssAnon samples
FETCH_BYTES = 1 << 20  # max.partition.fetch.bytes default
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


# ---------------------------------------------------------------------------- the child


def _status_kib(*names: str) -> dict[str, int]:
    out = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name in names:
                    out[name] = int(rest.split()[0])
    except OSError:
        pass
    return out


class _Sampler:
    def __init__(self):
        self.peak_anon = 0
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.count % SAMPLE_EVERY == 0:
            self.sample()

    def sample(self) -> None:
        anon = _status_kib("RssAnon").get("RssAnon", 0)
        if anon > self.peak_anon:
            self.peak_anon = anon


def _fetches(path: str):
    """Whole batches, about FETCH_BYTES at a time, as a consumer's fetch responses bring them."""
    with open(path, "rb") as f:
        pending = b""
        while True:
            chunk = f.read(FETCH_BYTES)
            data = pending + chunk if pending else chunk
            if not data:
                return
            end = 0
            while len(data) - end >= 12:
                size = 12 + _I32.unpack_from(data, end + 8)[0]
                if end + size > len(data):
                    break
                end += size
            if end:
                yield data[:end]
            pending = data[end:]
            if not chunk:
                if pending:
                    raise ValueError(f"{len(pending)} bytes at the end are not a whole batch")
                return


def _stream(impl: str, path: str, sampler: _Sampler) -> int:
    n = 0
    if impl in ("kcodec", "kcodec-stream"):
        from kcodec.records.reader import read_batches

        def batches():
            if impl == "kcodec":
                yield from read_batches(path, verify_crc=True)
            else:
                with open(path, "rb") as f:
                    yield from read_batches(f, verify_crc=True)

        for batch in batches():
            for r in batch.records:
                r.offset
                r.timestamp
                r.key
                r.value
                r.headers
                n += 1
            sampler.tick()
        return n
    if impl == "aiokafka":
        from aiokafka.record.memory_records import MemoryRecords
    elif impl == "kafka-python":
        from kafka.record.memory_records import MemoryRecords
    else:
        raise SystemExit(f"unknown implementation {impl!r}")
    for data in _fetches(path):
        records = MemoryRecords(data)
        while True:
            batch = records.next_batch()
            if batch is None:
                break
            if not batch.validate_crc():
                raise ValueError("CRC mismatch")
            for r in batch:
                r.offset
                r.timestamp
                r.key
                r.value
                r.headers
                n += 1
            sampler.tick()
    return n


def _preload(impl: str) -> None:
    if impl.startswith("kcodec"):
        import kcodec.records.decode as decode
        import kcodec.records.reader  # noqa: F401

        decode.fast_decoders()
    elif impl == "aiokafka":
        import aiokafka.record.memory_records  # noqa: F401
    elif impl == "kafka-python":
        import kafka.record.memory_records  # noqa: F401


def child_main(argv: list[str]) -> int:
    impl, path = argv
    _preload(impl)
    baseline = _status_kib("VmRSS").get("VmRSS", 0)
    sampler = _Sampler()
    sampler.sample()
    t0 = time.perf_counter()
    n = _stream(impl, path, sampler)
    seconds = time.perf_counter() - t0
    sampler.sample()
    hwm = _status_kib("VmHWM").get("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "implementation": impl,
                "records": n,
                "seconds": seconds,
                "bytes": os.path.getsize(path),
                "baseline_rss_kib": baseline,
                "peak_rss_kib": hwm,
                "peak_anon_kib": sampler.peak_anon,
            }
        )
    )
    return 0


# ---------------------------------------------------------------------------- the parent


def write_segment(path: str, log: bytes, batch_ends: list[int], records_per_log: int, size: int) -> tuple[int, int]:
    """Write ``log`` repeatedly until ``size`` bytes; returns (records, bytes) written."""
    repeats = max(1, -(-size // len(log)))
    starts = [0] + batch_ends[:-1]
    first_offsets = [_I64.unpack_from(log, s)[0] for s in starts]
    buf = bytearray(log)
    with open(path, "wb") as f:
        for k in range(repeats):
            shift = k * records_per_log
            for s, base in zip(starts, first_offsets):
                _I64.pack_into(buf, s, base + shift)  # the base offset is outside the CRC
            f.write(buf)
    return repeats * records_per_log, repeats * len(log)


def measure(workload, size: int, implementations, progress=None) -> list[dict]:
    """One dict per implementation: the child's report, or status/reason when it could not run."""
    say = progress or (lambda message: None)
    out = []
    with tempfile.TemporaryDirectory(prefix="kcodec-bench-") as tmp:
        path = os.path.join(tmp, "00000000000000000000.log")
        records, written = write_segment(path, workload.v2["none"], workload.v2_ends["none"], workload.records, size)
        say(f"peak memory: streaming a {written / 2**20:,.0f} MiB segment ({records:,} records)")
        for impl in implementations:
            entry = {"implementation": impl, "records": records, "bytes": written, "how": STREAMS[impl]}
            proc = subprocess.run(
                [sys.executable, "-m", "kcodec.bench.memory", impl, path], capture_output=True, text=True
            )
            if proc.returncode != 0:
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                missing = next((ln for ln in lines if "ModuleNotFoundError" in ln or "ImportError" in ln), None)
                entry["status"] = "n/a" if missing else "error"
                entry["reason"] = (missing or (lines[-1] if lines else f"exit status {proc.returncode}")).strip()
            else:
                report = json.loads(proc.stdout.strip().splitlines()[-1])
                entry.update(report)
                entry["status"] = "ok"
                if report["records"] != records:
                    entry["status"] = "error"
                    entry["reason"] = f"decoded {report['records']} records, expected {records}"
            out.append(entry)
    return out


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
