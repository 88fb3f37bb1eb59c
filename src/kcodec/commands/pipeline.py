"""``kcodec pipeline SRC DEST``: Spark decodes segments into a records table and
a batches table, and prints what they hold and what the same records would
take as v0, v1 and v2 with each compression codec."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from kcodec.commands.common import (
    EXIT_OK,
    MissingExtra,
    UsageError,
    add_json,
    print_json,
    refuse_overlap,
    require_extra,
)


def _option(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, not {text!r}")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--size-sample takes a fraction in (0, 1], not {text!r}")
    return value


def _spark_error(exc: BaseException) -> str:
    """The useful line of a Spark/Py4J failure: the Python error a worker raised, else the first line."""
    text = str(exc)
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("kcodec.", "ValueError:", "FileNotFoundError:", "KcodecError")) or "Error: " in s:
            if "Traceback" not in s:
                return s
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


@contextmanager
def _spark_failures() -> Iterator[None]:
    """A Spark job's failure as kcodec's one line: Java missing is a missing extra (exit 3); a Py4J or Spark
    error (which carries the worker's Python error inside) a KcodecError naming that error."""
    from kcodec.errors import KcodecError
    from kcodec.spark.session import JavaMissingError

    try:
        yield
    except (UsageError, KcodecError):
        raise
    except JavaMissingError as exc:
        raise MissingExtra(str(exc)) from None
    except Exception as exc:
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            raise KcodecError(f"Spark job failed: {_spark_error(exc)}") from None
        raise


def cmd_pipeline(args: argparse.Namespace) -> int:
    require_extra("spark", "pyspark", "pyarrow")
    from kcodec.log.fs import has_glob, resolve, storage_options
    from kcodec.spark.pipeline import render_summary, run_pipeline

    fs, src = resolve(args.src, storage_options(dict(args.option or [])))  # --option s3.endpoint=... too
    if not has_glob(src) and not fs.exists(src):
        raise UsageError(f"{args.src}: no such file or directory")
    if args.png:
        require_extra("chart", "resvg_py")
    refuse_overlap([args.src], [args.dest])  # the tables are overwritten: DEST must not hold SRC
    if args.table_format != "parquet":
        return _table_pipeline(args)
    for given, flag in (
        (args.mode != "append", "--mode"),
        (args.catalog, "--catalog"),
        (args.allow_offsets_backwards, "--allow-offsets-backwards"),
        (args.stream, "--stream"),
    ):
        if given:
            raise UsageError(f"{flag} is for --table-format iceberg or delta")
    options = dict(args.option or [])
    options["onCorrupt"] = args.on_corrupt
    options["isolationLevel"] = args.isolation_level
    if args.no_verify_crc:
        options["verifyCrc"] = "false"
    from kcodec.commands.progress import SparkStages

    with _spark_failures():
        with SparkStages():  # a bar of the running stages' tasks, on a terminal
            summary = run_pipeline(
                args.src,
                args.dest,
                master=args.master,
                conf=dict(args.conf or []),
                fmt=args.format,
                options=options,
                sizes=not args.no_sizes,
                size_sample=args.size_sample,
                log_level="off",
                chart_png=args.png,
                internal_tables=not args.no_internal_tables,
                value_format=args.value_format,
            )
    if args.json:
        print_json(summary.as_dict())
    else:
        print(render_summary(summary))
    return EXIT_OK


def _table_pipeline(args: argparse.Namespace) -> int:
    """``--table-format iceberg|delta``: the records appended to a table, incrementally."""

    require_extra(args.table_format, "pyiceberg" if args.table_format == "iceberg" else "deltalake")
    for given, flag in (
        (args.format != "parquet", "--format"),
        (args.value_format != "binary", "--value-format"),
        (args.png, "--png"),
        (args.size_sample != 1.0, "--size-sample"),
    ):
        if given:
            raise UsageError(
                f"{flag} is for the Parquet folders; --table-format {args.table_format} writes records only"
            )
    from kcodec.spark.lakehouse.job import render_result, run_table_pipeline

    options = dict(args.option or [])
    options["onCorrupt"] = args.on_corrupt
    options["isolationLevel"] = args.isolation_level
    if args.no_verify_crc:
        options["verifyCrc"] = "false"
    if args.stream:
        return _table_stream(args, options)
    with _spark_failures():
        result = run_table_pipeline(
            args.src,
            args.dest,
            table_format=args.table_format,
            mode=args.mode,
            catalog=args.catalog,
            allow_backwards=args.allow_offsets_backwards,
            master=args.master,
            conf=dict(args.conf or []),
            options=options,
            log_level="off",
        )
    if args.json:
        print_json(result.as_dict())
    else:
        print(render_result(result, args.src, args.dest))
    return EXIT_OK


def _table_stream(args: argparse.Namespace, options: dict) -> int:
    """``--stream CHECKPOINT``: a Structured Streaming query (Trigger.AvailableNow) committing each
    micro-batch to the table."""
    from kcodec.spark.lakehouse.job import render_result
    from kcodec.spark.lakehouse.stream import stream_to_table
    from kcodec.spark.session import local_session

    for given, flag in (
        (args.mode != "append", "--mode upsert"),
        (args.allow_offsets_backwards, "--allow-offsets-backwards"),
    ):
        if given:
            raise UsageError(f"{flag} is for a table run, not --stream (a stream appends)")
    with _spark_failures():
        spark = local_session(args.master, "kcodec pipeline --stream", conf=dict(args.conf or []), log_level="off")
        results = stream_to_table(
            args.src,
            args.dest,
            table_format=args.table_format,
            checkpoint=args.stream,
            catalog=args.catalog,
            spark=spark,
            options=options,
        )
    if args.json:
        print_json([r.as_dict() for r in results])
    else:
        if not results:
            print(
                f"kcodec pipeline --stream: {args.src} -> {args.dest}: "
                "nothing new since the checkpoint (no micro-batch ran)"
            )
        for r in results:
            print(render_result(r, args.src, args.dest))
    return EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser(
        "pipeline",
        help="Spark: decode segments into records and batches tables, with a summary",
        description="Runs Spark (local mode on all cores by default) to decode the segments under "
        "SRC (a segment, a partition directory, a log directory of <topic>-<n> "
        "directories, or a glob) into DEST/records and DEST/batches, then prints "
        "records, batches, bytes and compression ratio per topic-partition and what "
        "the same records would take as v0, v1 and v2 with each codec. When SRC holds Kafka's "
        "internal topics, also writes their tables (consumer_offsets, groups, transactions, metadata_records, "
        "metadata_image/*). Needs "
        "kcodec[spark] and Java 17+.",
    )
    p.add_argument("src", metavar="SRC")
    p.add_argument("dest", metavar="DEST", help="output directory (tables are overwritten)")
    p.add_argument(
        "--master",
        default="local[*]",
        help="Spark master URL: local[*] (default: all cores), spark://HOST:PORT, yarn, k8s://... "
        "(executors need kcodec[spark] installed, and SRC and DEST must be paths every executor can read)",
    )
    p.add_argument(
        "--conf",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit --conf takes it (repeatable)",
    )
    p.add_argument("--format", choices=("parquet", "orc", "json"), default="parquet", help="table format")
    p.add_argument(
        "--table-format",
        choices=("parquet", "iceberg", "delta"),
        default="parquet",
        help="iceberg | delta: append the records to DEST's records table, incrementally and exactly once (each "
        "commit stores the next offset per topic-partition; a re-run reads only what came after); needs "
        "kcodec[iceberg] or kcodec[delta]. parquet (default): the folders above, rewritten whole",
    )
    p.add_argument(
        "--mode",
        choices=("append", "upsert"),
        default="append",
        help="with --table-format: append (every record a row) or upsert (for compacted topics: the newest record "
        "per topic, partition and key; a tombstone deletes the key; records with no key go to the records_rejected "
        "table with the reason)",
    )
    p.add_argument(
        "--catalog",
        metavar="URI",
        help="with --table-format iceberg: a pyiceberg catalog URI (sqlite:///..., postgresql://..., http(s):// "
        "for REST); default: an embedded SQLite catalog, DEST/catalog.db",
    )
    p.add_argument(
        "--stream",
        metavar="CHECKPOINT",
        help="with --table-format: a Structured Streaming query (Trigger.AvailableNow, its checkpoint in the "
        "folder CHECKPOINT) committing each micro-batch with its batch id; a batch run again commits nothing",
    )
    p.add_argument(
        "--allow-offsets-backwards",
        action="store_true",
        help="with --table-format: accept a partition whose log now ends before the offset the table holds (a "
        "log restored from an older backup): nothing of it is re-read, the next run continues from its log end",
    )
    p.add_argument(
        "--value-format",
        choices=("binary", "confluent"),
        default="binary",
        help="confluent: also DEST/values/<topic>, each topic's records with Schema Registry values as a typed "
        "value column (value_raw, value_error beside it), and a line per topic: values decoded, not decoded by "
        "reason; schemas from the _schemas-N directory in SRC, or --option schemas=PATH|URL",
    )
    p.add_argument(
        "--on-corrupt",
        choices=("fail", "skip"),
        default="fail",
        help="skip: drop undecodable batches and list what was skipped",
    )
    p.add_argument(
        "--isolation-level",
        choices=("read_uncommitted", "read_committed"),
        default="read_uncommitted",
        help="read_committed drops records of aborted transactions",
    )
    p.add_argument("--no-verify-crc", action="store_true", help="do not check batch CRCs")
    p.add_argument(
        "--no-sizes",
        action="store_true",
        help="skip the v0/v1/v2 x codec comparison (it compresses every batch 10 times)",
    )
    p.add_argument(
        "--size-sample",
        type=_fraction,
        default=1.0,
        metavar="FRACTION",
        help="compress only this fraction of the batches (picked by base offset) for the comparison and "
        "estimate the rest from them; the summary says which was used (default 1: exact)",
    )
    p.add_argument(
        "--option",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="another kafka-segments read option (repeatable)",
    )
    p.add_argument(
        "--png",
        action="store_true",
        help="also write the cost table chart as PNG (DEST/cost_table.png; needs resvg-py), beside the SVG",
    )
    p.add_argument(
        "--no-internal-tables",
        action="store_true",
        help="do not write the tables of Kafka's internal topics (latest consumer offsets, groups, transactions, "
        "the metadata records and the metadata image) when SRC holds them",
    )
    add_json(p, "the summary: per topic-partition counts, the v0/v1/v2 x codec sizes, the internal tables written")
    p.set_defaults(func=cmd_pipeline)
