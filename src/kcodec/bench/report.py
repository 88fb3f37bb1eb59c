"""The machine, the markdown table, the target checks and the JSON rows."""

from __future__ import annotations

import json
import os
import platform
from importlib import metadata

from kcodec.bench import compact_rows, lakehouse_rows, spark_rows, spark_value_rows
from kcodec.bench.implementations import (
    OPERATIONS,
    REFERENCE_OPERATION,
    aiokafka_extension,
    compressor,
    decompressor,
    encode_levels,
)
from kcodec.bench.names import STREAM_DESCRIPTION, STREAM_OPERATION
from kcodec.bench.runner import Result
from kcodec.bench.spark_rows import implementation as spark_implementation
from kcodec.bench.spark_rows import parquet_implementation as spark_parquet_implementation
from kcodec.bench.spark_value_rows import targets as spark_value_targets

#: Every operation with what it measures: those a run without --operations includes, in table order ...
PLAIN_OPERATIONS = {**OPERATIONS, STREAM_OPERATION: STREAM_DESCRIPTION}
#: ... and those that run only when named (they start Spark or build a 1 GiB partition: minutes each).
NAMED_ONLY_OPERATIONS = {
    **spark_rows.OPERATIONS,
    **spark_value_rows.OPERATIONS,
    **lakehouse_rows.OPERATIONS,
    **compact_rows.OPERATIONS,
}
LIBRARIES = ("kcodec", "aiokafka", "kafka-python", "pyarrow", "crc32c", "lz4", "zstandard", "cramjam", "python-snappy")


# ---------------------------------------------------------------------------- machine


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def kcodec_backend() -> str:
    """Which decoders kcodec uses here (KCODEC_BACKEND, compiled kernel or Python)."""
    try:
        from kcodec.generated.fast.kernel import active_backend, compiled_kernel
        from kcodec.runtime.kernel import backend_setting
    except ImportError:
        return "python (no backend selection in this kcodec)"
    try:
        setting, active = backend_setting(), active_backend()
    except ImportError as exc:
        return f"unavailable ({exc})"
    where = getattr(compiled_kernel(), "__file__", None) if active == "c" else None
    return f"{active} (KCODEC_BACKEND={setting}" + (f", {os.path.basename(where)})" if where else ")")


def kcodec_prefetch() -> str:
    """Whether kcodec's readers inflate compressed batches ahead on a second core here (kcodec.records.prefetch),
    as a walk started now decides it."""
    from kcodec.records import prefetch

    if prefetch.usable_cores() < 2:
        return "off (one usable core)"
    if prefetch.setting() is not None:
        which = "every codec" if prefetch.setting() else "off"
        return f"{which} ({prefetch.ENV}={os.environ[prefetch.ENV]})"
    codecs = ", ".join(sorted(prefetch.DEFAULT_CODECS))
    return f"{codecs} (a worker thread inflates those batches ahead; {prefetch.ENV}=1: every codec, =0: off)"


def machine_info() -> dict:
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    compiled, where = aiokafka_extension()
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {
        "load_average": load_average(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "libraries": versions,
        "kcodec_backend": kcodec_backend(),
        "kcodec_prefetch": kcodec_prefetch(),
        "aiokafka_c_extension": compiled,
        "aiokafka_classes": where,
    }


# ---------------------------------------------------------------------------- rows


def stream_results(entries: list[dict]) -> list[Result]:
    """The peak-memory runs as rows (one run each, not a median)."""
    out = []
    for e in entries:
        r = Result(
            e["implementation"],
            STREAM_OPERATION,
            "none",
            e.get("records", 0),
            e.get("bytes", 0),
            status=e["status"],
            reason=e.get("reason", ""),
        )
        if e["status"] == "ok":
            r.times = [e["seconds"]]
            r.extra = {
                "peak_rss_mib": round(e["peak_rss_kib"] / 1024, 1),
                "peak_anon_mib": round(e["peak_anon_kib"] / 1024, 1),
                "baseline_rss_mib": round(e["baseline_rss_kib"] / 1024, 1),
                "segment_mib": round(e["bytes"] / 2**20, 1),
                "how": e["how"],
            }
        else:
            r.extra = {"segment_mib": round(e.get("bytes", 0) / 2**20, 1), "how": e.get("how", "")}
        out.append(r)
    return out


def _index(results: list[Result]) -> dict[tuple[str, str, str], Result]:
    return {r.key: r for r in results}


def ratio(result: Result, index) -> float | None:
    if not result.ok:
        return None
    ref_impl = "aiokafka"
    ref_op = STREAM_OPERATION if result.operation == STREAM_OPERATION else REFERENCE_OPERATION.get(result.operation)
    ref = None if ref_op is None else index.get((ref_impl, ref_op, result.codec))
    if ref is None or not ref.ok:
        return None
    return result.records_per_s / ref.records_per_s


def row_dict(result: Result, index) -> dict:
    r = ratio(result, index)
    d = {
        "implementation": result.implementation,
        "operation": result.operation,
        "codec": result.codec,
        "records_per_s": _rounded(result.records_per_s, 1) if result.ok else None,
        "mb_per_s": _rounded(result.mb_per_s, 2) if result.ok else None,
        "ratio_vs_aiokafka": round(r, 3) if r is not None else None,
        "status": result.status,
        "reason": result.reason or None,
        "format": "v1" if result.operation.startswith("v1_") else "v2",
        "median_s": result.median_s,
        "repeats": len(result.times),
        "times_s": list(result.times),
        "records": result.records,
        "raw_bytes": result.raw_bytes,
    }
    d.update(result.extra)
    return d


# ---------------------------------------------------------------------------- targets


#: issue 24's floors where a codec's own is not the rest's (1.5x Records, 4x Arrow): gzip's inflate alone
#: is most of aiokafka's decode time
RECORDS_FLOOR = {"gzip": 1.2}
ARROW_FLOOR = {"gzip": 1.8}


def targets(results: list[Result], stream_mib: float | None) -> list[dict]:
    """The issue's targets, each checked on this run's numbers."""
    ix = _index(results)
    out = []

    def check(name: str, codec: str, value: float | None, required: str, passed: bool | None, why: str = ""):
        out.append(
            {
                "target": name,
                "codec": codec,
                "measured": value,
                "required": required,
                "verdict": "n/a" if passed is None else ("PASS" if passed else "FAIL"),
                "note": why,
            }
        )

    codecs = [r.codec for r in results if r.operation == "decode" and r.implementation == "aiokafka"]
    for codec in ("gzip", "zstd"):
        enc, alone = ix.get(("kcodec", "encode", codec)), ix.get(("primitive", "compress", codec))
        if enc is not None and alone is not None:
            v = _quotient(enc.median_s, alone.median_s)
            why = "" if v is not None else _why(enc if not enc.ok else alone)
            check("encode time vs the compressor alone at the same level", codec, v, "<= 1.15x", _at_most(v, 1.15), why)
    for codec in codecs:
        r = ix.get(("kcodec", "decode_crc", codec))
        v = ratio(r, ix) if r else None
        floor = RECORDS_FLOOR.get(codec, 1.5)
        check(
            "decode with CRC verification vs aiokafka with CRC verification",
            codec,
            v,
            f">= {floor}x",
            None if v is None else v >= floor,
            "" if v is not None else _why(r),
        )
    for codec in codecs:
        r = ix.get(("kcodec", "decode_arrow", codec))
        v = ratio(r, ix) if r else None
        floor = ARROW_FLOOR.get(codec, 4)
        check(
            "decode into Arrow columns vs aiokafka decode",
            codec,
            v,
            f">= {floor}x",
            None if v is None else v >= floor,
            "" if v is not None else _why(r),
        )
    for codec in codecs:
        r = ix.get(("kcodec", "encode", codec))
        v = ratio(r, ix) if r else None
        check(
            "encode vs aiokafka (same level)",
            codec,
            v,
            ">= 1.5x",
            None if v is None else v >= 1.5,
            "" if v is not None else _why(r),
        )
    for codec in [r.codec for r in results if r.operation == "crc" and r.implementation == "kcodec"]:
        r, p = ix.get(("kcodec", "crc", codec)), ix.get(("primitive", "crc32c", codec))
        v = _quotient(r.records_per_s, p.records_per_s) if r and p and r.ok and p.ok else None
        check(
            "CRC verification of the whole log vs raw crc32c over it",
            codec,
            v,
            ">= 0.5x",
            None if v is None else v >= 0.5,
            "" if v is not None else _why(r if not (r and r.ok) else p),
        )
    for op, what in (("decode", "records"), ("decode_arrow", "Arrow columns")):
        for codec in [r.codec for r in results if r.operation == "decompress" and r.implementation == "primitive"]:
            r, p = ix.get(("kcodec", op, codec)), ix.get(("primitive", "decompress", codec))
            if r is None:
                continue
            v = _quotient(r.median_s, p.median_s) if p and r.ok and p.ok else None
            check(
                f"compressed decode ({what}) time vs decompression alone",
                codec,
                v,
                "<= 1.3x",
                None if v is None else v <= 1.3,
                "" if v is not None else _why(r if not r.ok else p),
            )
    _spark_targets(ix, check)
    lakehouse_rows.targets(ix, check)
    compact_rows.targets(ix, check)
    spark_value_targets(ix, check)
    r = ix.get(("kcodec", STREAM_OPERATION, "none"))
    if r is not None:
        v = r.extra.get("peak_rss_mib") if r.ok else None
        size = f"{stream_mib:,.0f} MiB" if stream_mib else "the"
        note, verdict = ("", None) if v is None else ("", v < 200)
        if v is None:
            note = _why(r)
        elif stream_mib is not None and stream_mib < 1024:
            note, verdict = f"the target is for a 1 GiB segment; this one is {size}", None
        check(f"streaming a {size} segment with read_batches(path): peak RSS", "none", v, "< 200 MiB", verdict, note)
    return out


def _spark_targets(ix, check) -> None:
    """The issue's pipeline and Spark read targets, when those (opt-in) rows ran."""
    one, two = spark_implementation(1), spark_implementation(2)
    for impl in (one, two):
        with_sizes, without = ix.get((impl, "pipeline", "none")), ix.get((impl, "pipeline_no_sizes", "none"))
        if with_sizes is not None and without is not None:
            v = with_sizes.median_s / without.median_s if with_sizes.ok and without.ok else None
            why = "" if v is not None else _why(with_sizes if not with_sizes.ok else without)
            check(f"pipeline time with the cost table vs without ({impl})", "none", v, "<= 4x", _at_most(v, 4), why)
    for impl, cores in ((one, 1), (two, 2)):
        r = ix.get((impl, "pipeline_no_sizes", "none"))
        if r is not None:
            v = r.records_per_s / cores / 1e6 if r.ok else None
            check(
                f"pipeline without the cost table, M records/s per core ({impl})",
                "none",
                v,
                ">= 1 M/s",
                None if v is None else v >= 1,
                "" if v is not None else _why(r),
            )
    for op in ("pipeline_no_sizes", "pipeline", "spark_read"):
        a, b = ix.get((one, op, "none")), ix.get((two, op, "none"))
        if a is not None and b is not None:
            v = b.records_per_s / a.records_per_s if a.ok and b.ok else None
            why = "" if v is not None else _why(a if not a.ok else b)
            check(f"{op}: local[2] vs local[1]", "none", v, ">= 1.7x", None if v is None else v >= 1.7, why)
    parquet = spark_parquet_implementation(2)
    for op, limit in (("spark_noop", 1.2), ("spark_to_parquet", 1.05)):
        source, rival = ix.get((two, op, "none")), ix.get((parquet, op, "none"))
        if source is not None and rival is not None:
            v = _quotient(source.median_s, rival.median_s)
            why = "" if v is not None else _why(source if not source.ok else rival)
            check(
                f"{op}: kafka-segments time vs Spark's Parquet ({two})",
                "none",
                v,
                f"<= {limit}x",
                _at_most(v, limit),
                why,
            )
    arrow = ix.get(("kcodec", "decode_arrow", "none"))
    for impl, cores in ((one, 1), (two, 2)):
        r = ix.get((impl, "spark_read", "none"))
        if r is not None:
            v = r.records_per_s / cores / arrow.records_per_s if r.ok and arrow is not None and arrow.ok else None
            check(
                f"Spark read per core vs read_arrow ({impl})",
                "none",
                v,
                ">= 0.5x",
                None if v is None else v >= 0.5,
                "" if v is not None else (_why(r) if not r.ok else "needs the decode_arrow row"),
            )


def _rounded(x: float | None, digits: int) -> float | None:
    """A rate rounded for the JSON (None for a result with no time to divide by)."""
    return None if x is None else round(x, digits)


def _quotient(a: float | None, b: float | None) -> float | None:
    """a / b of two results' figures (every figure of a result that is ok is there)."""
    return None if a is None or b is None else a / b


def _at_most(v: float | None, limit: float) -> bool | None:
    return None if v is None else v <= limit


def _why(r: Result | None) -> str:
    if r is None:
        return "not measured in this run"
    return f"{r.status}: {r.reason}" if r.reason else r.status


# ---------------------------------------------------------------------------- markdown


def _load(values) -> str:
    return "n/a" if not values else ", ".join(f"{v:.2f}" for v in values)


def _num(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def markdown(results: list[Result], machine: dict, workload: dict, repeats: int, stream: dict | None) -> str:
    ix = _index(results)
    lines = ["# kcodec bench", ""]
    libs = ", ".join(f"{k} {v}" for k, v in machine["libraries"].items() if v)
    ext = (
        "C extension in use (" + machine["aiokafka_classes"] + ")"
        if machine["aiokafka_c_extension"]
        else "C extension NOT in use (" + machine["aiokafka_classes"] + "): its numbers are the pure-Python ones"
    )
    lines += [
        f"- machine: {machine['cpu']}, {machine['cores']} cores ({machine['usable_cores']} usable), "
        f"{machine['platform']}",
        f"- Python: {machine['python']}",
        f"- load average (1, 5, 15 min) at the start: {_load(machine.get('load_average'))}, at the end: "
        f"{_load(machine.get('load_average_end'))} (other work on the machine adds noise to every row)",
        f"- libraries: {libs}",
        f"- kcodec backend: {machine.get('kcodec_backend', 'unknown')}",
        f"- kcodec inflating ahead: {machine.get('kcodec_prefetch', 'unknown')}",
        f"- aiokafka: {ext}",
        f"- workload: {workload['records']:,} records in v2 batches of {workload['batch_size']:,} "
        f"(seed {workload['seed']}); key 16 random bytes, value 200 bytes (100 random, 100 repetitive "
        f"text), one header `h` of 8 bytes; uncompressed log {workload['raw_bytes_v2'] / 1e6:,.1f} MB (v2), "
        f"{workload['raw_bytes_v1'] / 1e6:,.1f} MB (v1)"
        + "".join(f"; {c} {n / 1e6:,.1f} MB" for c, n in workload["v2_sizes"].items() if c != "none"),
        f"- timing: median of {repeats} repeat(s), every row run once per repeat in a rotated order"
        + (" (fewer than 5 repeats: a smoke run, not a measurement)" if repeats < 5 else ""),
        "",
    ]
    lines += [
        "| implementation | operation | codec | records/s | MB/s | × aiokafka | notes |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        rt = ratio(r, ix)
        note = ""
        if r.status != "ok":
            note = f"{r.status}: {r.reason}"
        elif r.operation == STREAM_OPERATION:
            note = (
                f"peak RSS {r.extra['peak_rss_mib']:,.0f} MiB, peak anonymous {r.extra['peak_anon_mib']:,.0f} MiB "
                f"(after imports {r.extra['baseline_rss_mib']:,.0f} MiB); one run"
            )
        cells = [
            r.implementation,
            r.operation,
            r.codec,
            _num(r.records_per_s),
            _num(r.mb_per_s, 1),
            "n/a" if rt is None else f"{rt:.2f}×",
            note.replace("|", "\\|"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    t = targets(results, stream["mib"] if stream else None)
    if t:
        lines += [
            "",
            "## Targets (from this run)",
            "",
            "| target | codec | measured | required | verdict | note |",
            "| --- | --- | ---: | --- | --- | --- |",
        ]
        for c in t:
            m = c["measured"]
            if m is None:
                shown = "n/a"
            elif "RSS" in c["target"]:
                shown = f"{m:,.0f} MiB"
            else:
                shown = f"{m:.2f} M/s" if "records/s" in c["target"] else f"{m:.2f}×"
            lines.append(
                f"| {c['target']} | {c['codec']} | {shown} | {c['required']} | {c['verdict']} | "
                f"{c['note'].replace('|', chr(92) + '|')} |"
            )
    lines += ["", "Notes:", ""]
    lines.append(
        "- MB/s is computed on the uncompressed record bytes: the size of the uncompressed v2 log "
        "(v1 rows: the uncompressed v1 message sets), the same for every codec, so MB/s compares like "
        "records/s does; MB = 10^6 bytes. Stream rows: the segment file's bytes."
    )
    lines.append(
        "- × aiokafka: this row's records/s ÷ aiokafka's for the same codec and operation "
        "(decode_arrow, decompress and memcpy: aiokafka's decode; crc32c: aiokafka's crc; verify: aiokafka's "
        "decode with CRC checks; dump_json and the Spark rows have no equivalent)."
    )
    described = {**PLAIN_OPERATIONS, **NAMED_ONLY_OPERATIONS}
    for op in dict.fromkeys(r.operation for r in results):
        if op in described:
            lines.append(f"- {op}: {described[op]}.")
    if stream:
        lines.append(
            f"- {STREAM_OPERATION}: a child process decodes every record of a {stream['mib']:,.0f} MiB "
            "uncompressed segment file (CRC verified); peak RSS is VmHWM, which includes file pages "
            "mapped into the process; peak anonymous is the largest RssAnon sampled. kcodec: "
            "read_batches(path) (mmap); kcodec-stream: read_batches(open file); aiokafka / kafka-python: "
            "MemoryRecords over 1 MiB reads of whole batches."
        )
    lines.append(
        "- encode levels: "
        + "; ".join(f"{k}: {v}" for k, v in encode_levels().items())
        + ". The decode workload is written by kcodec at the kcodec levels."
    )
    names = []
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        try:
            names.append(f"{codec} {decompressor(codec)[1]}")
        except Exception:
            pass
    lines.append(
        "- decompress (primitive): " + ", ".join(names) + "; crc32c: the crc32c package; memcpy: a "
        "slice assignment into a preallocated bytearray."
    )
    if any(r.operation == "compress" for r in results):
        made = [f"{r.codec} {compressor(r.codec)[1]}" for r in results if r.operation == "compress" and r.ok]
        lines.append("- compress (primitive): " + ", ".join(made) + ".")
    lines.append(
        "- The garbage collector stays enabled; a collection runs before every timed run. On glibc, malloc's mmap and "
        "trim thresholds are pinned (64 and 128 MiB) for the timed rows, so that no row's speed depends on which row "
        "freed a large block before it."
    )
    return "\n".join(lines) + "\n"


def write_json(
    path: str, results: list[Result], machine: dict, workload: dict, repeats: int, stream: dict | None
) -> None:
    ix = _index(results)
    doc = {
        "machine": machine,
        "workload": workload,
        "repeats": repeats,
        "targets": targets(results, stream["mib"] if stream else None),
        "rows": [row_dict(r, ix) for r in results],
    }
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=2) + "\n")
