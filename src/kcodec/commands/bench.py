"""``kcodec bench``: kcodec against aiokafka, kafka-python and the bare primitives, on one workload."""

from __future__ import annotations

import argparse
import sys
import time

from kcodec.bench.names import IMPLEMENTATIONS, STREAM_OPERATION
from kcodec.commands.common import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    UsageError,
    compression_choices,
    non_negative_int,
    positive_int,
    require_extra,
)

_LIBRARIES = {"aiokafka": "aiokafka", "kafka-python": "kafka"}  # implementation -> module it imports
FULL_RECORDS, QUICK_RECORDS = 200_000, 10_000
FULL_SEGMENT_MIB, QUICK_SEGMENT_MIB = 1024, 64
SPARK_RECORDS = 1_000_000  # the pipeline target is for a segment of at least a million records


def _choices(values: list[str] | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Repeated and/or comma-separated choices, kept in ``allowed`` order."""
    if not values:
        return allowed
    chosen = {v.strip() for item in values for v in item.split(",") if v.strip()}
    unknown = chosen - set(allowed)
    if unknown:
        raise UsageError(f"unknown {what} {', '.join(sorted(unknown))} (known: {', '.join(allowed)})")
    return tuple(a for a in allowed if a in chosen)


def cmd_bench(args: argparse.Namespace) -> int:
    from kcodec.bench import (
        compact_rows,
        lakehouse_rows,
        memory,
        report,
        runner,
        spark_rows,
        spark_value_rows,
    )
    from kcodec.bench.workload import build_workload

    plain, named_only = report.PLAIN_OPERATIONS, report.NAMED_ONLY_OPERATIONS
    if args.list_operations:
        for names, heading in ((plain, "a plain run measures"), (named_only, "only when named (minutes each)")):
            print(f"{heading}:")
            for op, what in names.items():
                print(f"  {op:<26} {what}")
        return EXIT_OK

    compressions = _choices(args.codecs, compression_choices(), "codec")
    impls = _choices(args.only, IMPLEMENTATIONS, "implementation")
    require_extra("bench", *(module for impl, module in _LIBRARIES.items() if impl in impls))
    chosen = _choices(args.operations, tuple(plain) + tuple(named_only), "operation")
    if not args.operations:
        chosen = tuple(op for op in chosen if op not in named_only)
    records = args.records or (QUICK_RECORDS if args.quick else FULL_RECORDS)
    segment_mib = (
        args.segment_mib if args.segment_mib is not None else (QUICK_SEGMENT_MIB if args.quick else FULL_SEGMENT_MIB)
    )

    started = time.perf_counter()

    def say(message: str) -> None:
        print(f"kcodec bench: {message} [{time.perf_counter() - started:.0f} s]", file=sys.stderr, flush=True)

    machine = report.machine_info()
    say(f"building the workload: {records:,} records, batches of {args.batch_size:,}, codecs {', '.join(compressions)}")
    workload = build_workload(records, args.batch_size, codecs=compressions, seed=args.seed, command=args.entry_point)
    info = {
        "records": workload.records,
        "batch_size": workload.batch_size,
        "seed": workload.seed,
        "batches": workload.batch_count,
        "raw_bytes_v2": workload.raw_bytes_v2,
        "raw_bytes_v1": workload.raw_bytes_v1,
        "v2_sizes": {c: len(b) for c, b in workload.v2.items()},
        "v1_sizes": {c: len(b) for c, b in workload.v1.items()},
        "quick": bool(args.quick),
    }
    cases = runner.plan(workload.codecs if args.codecs is None else compressions, impls, chosen)
    say(f"{len(cases)} rows x {args.repeats} repeats")
    results = runner.run(workload, cases, args.repeats, say)

    stream = None
    stream_impls = [i for i in memory.STREAMS if i.split("-stream")[0] in impls]
    if segment_mib and stream_impls and STREAM_OPERATION in chosen:
        entries = memory.measure(workload, segment_mib << 20, stream_impls, say)
        results += report.stream_results(entries)
        stream = {"mib": max(e.get("bytes", 0) for e in entries) / 2**20}
        info["segment_bytes"] = max(e.get("bytes", 0) for e in entries)

    chosen_spark = [op for op in spark_rows.OPERATIONS if op in chosen and "kcodec" in impls]
    chosen_values = [op for op in spark_value_rows.OPERATIONS if op in chosen and "kcodec" in impls]
    spark_records = args.spark_records or (records if args.quick else SPARK_RECORDS)
    if chosen_spark:
        results += spark_rows.measure(chosen_spark, spark_records, min(args.repeats, 3), say)
    if chosen_values:
        results += spark_value_rows.measure(chosen_values, spark_records, min(args.repeats, 3), say)
    if chosen_spark or chosen_values:
        info["spark_records"] = spark_records
    chosen_tables = [op for op in lakehouse_rows.OPERATIONS if op in chosen and "kcodec" in impls]
    if chosen_tables:
        results += lakehouse_rows.measure(chosen_tables, spark_records, min(args.repeats, 3), say)
        info["table_records"] = spark_records

    chosen_partition = [op for op in compact_rows.OPERATIONS if op in chosen and "kcodec" in impls]
    if chosen_partition:
        partition_mib = args.partition_mib or (
            compact_rows.QUICK_PARTITION_MIB if args.quick else compact_rows.FULL_PARTITION_MIB
        )
        results += compact_rows.measure(chosen_partition, partition_mib, args.repeats, args.entry_point, say)
        info["partition_mib"] = partition_mib

    machine["load_average_end"] = report.load_average()
    print(report.markdown(results, machine, info, args.repeats, stream), end="")
    if args.json:
        report.write_json(args.json, results, machine, info, args.repeats, stream)
    say("done")
    return EXIT_CHECK_FAILED if any(r.status == "error" for r in results) else EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="benchmark kcodec against aiokafka, kafka-python and the bare primitives",
        description="Build one workload deterministically (200,000 records in v2 batches of 1,000, every codec, "
        "and the same records as v1 message sets), then measure decode, decode with CRC "
        "verification, decode into Arrow, encode, CRC verification alone and peak memory for "
        "kcodec, aiokafka (C extension) and kafka-python, plus the bare primitives (crc32c, each "
        "codec's decompression, a memory copy). Implementations are interleaved in one process; "
        "each row is the median of the repeats. Prints a markdown table; exit status 1 if a row "
        "failed while running (a row that cannot exist here is reported as n/a).",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"a smaller workload ({QUICK_RECORDS:,} records, a {QUICK_SEGMENT_MIB} MiB segment) "
        "for smoke checks: under a minute",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write the results as JSON: {machine, workload, targets, rows}, one object per row "
        "(implementation, operation, codec, records_per_s, mb_per_s, ratio_vs_aiokafka, ...)",
    )
    p.add_argument(
        "--repeats", type=positive_int, default=5, metavar="N", help="repeats per row; the median is kept (default 5)"
    )
    p.add_argument(
        "--codecs",
        nargs="+",
        metavar="CODEC",
        help=f"only these codecs ({', '.join(compression_choices())}; space or comma separated)",
    )
    p.add_argument(
        "--only",
        action="append",
        metavar="IMPL",
        help=f"only these implementations ({', '.join(IMPLEMENTATIONS)}; repeatable or comma "
        "separated). Ratios need aiokafka among them",
    )
    p.add_argument(
        "--operations",
        action="append",
        metavar="OP",
        help="only these operations (repeatable or comma separated; --list-operations names every one with what it "
        "measures). The Spark, table-format and partition rows take minutes and run only when named",
    )
    p.add_argument(
        "--list-operations",
        action="store_true",
        help="print every operation, what it measures and whether a plain run includes it, then exit",
    )
    p.add_argument(
        "--spark-records",
        type=positive_int,
        metavar="N",
        help=f"records in the segment of the Spark rows (default {SPARK_RECORDS:,}; --quick: --records)",
    )
    p.add_argument(
        "--segment-mib",
        type=non_negative_int,
        metavar="MIB",
        help=f"size of the segment streamed for peak memory (default {FULL_SEGMENT_MIB}, "
        f"--quick {QUICK_SEGMENT_MIB}; 0 skips it)",
    )
    p.add_argument(
        "--partition-mib",
        type=positive_int,
        metavar="MIB",
        help="size of the partition of the compact_partition and verify_partition rows (default 1024: about "
        "20 M records over 10 M keys; --quick 32)",
    )
    # For the tests and experiments: not part of the documented interface.
    p.add_argument("--records", type=positive_int, help=argparse.SUPPRESS)
    p.add_argument("--batch-size", type=positive_int, default=1_000, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=non_negative_int, default=20_240_601, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_bench)
