"""The segments -> tables job behind ``kcodec pipeline``.

Spark decodes every segment under SRC through the ``kafka-segments`` data
source into two tables under DEST (Parquet by default):

* ``records``: one row per record, the data source's columns;
* ``batches``: one row per batch (position, size, codec, records, compressed
  and uncompressed bytes, CRC validity, producer fields, and ``sizeAs``:
  what the batch's records would take as v0, v1 and v2 with each codec,
  from the generated size calculators).

The summary is computed by Spark from the written tables: records, batches,
bytes and compression ratio per topic-partition, and the v0 / v1 / v2 x codec
comparison on the real records.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from kcodec.spark.sizes import COMBINATIONS, label

__all__ = ["PartitionSummary", "Summary", "run_pipeline", "render_summary", "FORMATS"]

FORMATS = ("parquet", "orc", "json")


@dataclass
class PartitionSummary:
    topic: str | None
    partition: int | None
    batches: int
    records: int  # data records (control records excluded)
    control_records: int
    rows: int  # rows in the records table
    bytes: int  # on disk, every batch
    compressed_bytes: int  # records regions as stored
    uncompressed_bytes: int  # records regions decompressed
    data_bytes: int  # on disk, data batches only (what the size comparison compares with)
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return (
            f"{self.topic if self.topic is not None else '?'}-{self.partition if self.partition is not None else '?'}"
        )

    @property
    def ratio(self) -> float | None:
        return self.uncompressed_bytes / self.compressed_bytes if self.compressed_bytes else None


@dataclass
class Summary:
    source: str
    dest: str
    format: str
    master: str
    records_table: str
    batches_table: str
    partitions: list[PartitionSummary]
    skipped: list[dict] = field(default_factory=list)
    sizes_computed: bool = True

    def total(self) -> PartitionSummary:
        t = PartitionSummary("total", None, 0, 0, 0, 0, 0, 0, 0, 0, {})
        for p in self.partitions:
            for name in (
                "batches",
                "records",
                "control_records",
                "rows",
                "bytes",
                "compressed_bytes",
                "uncompressed_bytes",
                "data_bytes",
            ):
                setattr(t, name, getattr(t, name) + getattr(p, name))
            for k, v in p.sizes.items():
                t.sizes[k] = t.sizes.get(k, 0) + v
        return t

    def as_dict(self) -> dict:
        out = asdict(self)
        out["total"] = asdict(self.total())
        return out


def _join(dest: str, name: str) -> str:
    return dest.rstrip("/") + "/" + name


def run_pipeline(
    source: str,
    dest: str,
    *,
    spark=None,
    master: str = "local[*]",
    conf: dict | None = None,
    fmt: str = "parquet",
    options: dict | None = None,
    sizes: bool = True,
    log_level: str = "error",
) -> Summary:
    """Decode ``source`` into ``dest``/records and ``dest``/batches and summarize.

    ``options`` are read options of the data source (``onCorrupt``,
    ``isolationLevel``, ``verifyCrc`` ...). A ``spark`` session may be given;
    otherwise one is started on ``master`` with the Spark settings ``conf``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    from pyspark.sql import functions as F

    if spark is None:
        from kcodec.spark.session import local_session

        spark = local_session(master, "kcodec pipeline", conf=conf, log_level=log_level)
    else:
        from kcodec.spark import register

        register(spark)
    options = {str(k): str(v) for k, v in (options or {}).items()}
    options.setdefault("minPartitions", str(spark.sparkContext.defaultParallelism))
    records_path, batches_path = _join(dest, "records"), _join(dest, "batches")
    report_path = None
    if options.get("onCorrupt", "fail").lower() == "skip" and "corruptReportPath" not in options:
        report_path = _join(dest, "_corrupt")
        options["corruptReportPath"] = report_path
        from kcodec.log.fs import resolve

        fs, p = resolve(report_path)
        fs.delete_dir(p)
    reader = spark.read.format("kafka-segments").options(**options)
    reader.load(source).write.mode("overwrite").format(fmt).save(records_path)
    batch_options = {k: v for k, v in options.items() if k not in ("corruptReportPath",)}
    (
        spark.read.format("kafka-segments")
        .options(**batch_options)
        .option("view", "batches")
        .option("sizes", str(sizes).lower())
        .load(source)
        .write.mode("overwrite")
        .format(fmt)
        .save(batches_path)
    )

    batches = spark.read.format(fmt).load(batches_path)
    records = spark.read.format(fmt).load(records_path)
    data = ~F.col("isControl")
    per_tp = (
        batches.groupBy("topic", "partition")
        .agg(
            F.count(F.lit(1)).alias("batches"),
            F.sum(F.when(data, F.col("records")).otherwise(0)).alias("records"),
            F.sum(F.when(data, 0).otherwise(F.col("records"))).alias("control_records"),
            F.sum("size").alias("bytes"),
            F.sum("compressedBytes").alias("compressed_bytes"),
            F.sum("uncompressedBytes").alias("uncompressed_bytes"),
            F.sum(F.when(data, F.col("size")).otherwise(0)).alias("data_bytes"),
        )
        .collect()
    )
    rows = {(r["topic"], r["partition"]): r["count"] for r in records.groupBy("topic", "partition").count().collect()}
    size_rows: dict[tuple, dict[str, int]] = {}
    if sizes:
        for r in (
            batches.select("topic", "partition", F.explode("sizeAs").alias("k", "v"))
            .groupBy("topic", "partition", "k")
            .agg(F.sum("v").alias("v"))
            .collect()
        ):
            size_rows.setdefault((r["topic"], r["partition"]), {})[r["k"]] = int(r["v"])
    parts = []
    for r in per_tp:
        key = (r["topic"], r["partition"])
        order = {label(m, c): i for i, (m, c) in enumerate(COMBINATIONS)}
        sz = dict(sorted(size_rows.get(key, {}).items(), key=lambda kv: order.get(kv[0], 99)))
        parts.append(
            PartitionSummary(
                r["topic"],
                r["partition"],
                int(r["batches"]),
                int(r["records"] or 0),
                int(r["control_records"] or 0),
                int(rows.get(key, 0)),
                int(r["bytes"] or 0),
                int(r["compressed_bytes"] or 0),
                int(r["uncompressed_bytes"] or 0),
                int(r["data_bytes"] or 0),
                sz,
            )
        )
    parts.sort(key=lambda p: (p.topic or "", -1 if p.partition is None else p.partition))
    skipped = _read_reports(report_path) if report_path else []
    return Summary(source, dest, fmt, spark.sparkContext.master, records_path, batches_path, parts, skipped, sizes)


def _read_reports(path: str) -> list[dict]:
    from kcodec.log.fs import resolve

    fs, p = resolve(path)
    if not fs.is_dir(p):
        return []
    out = []
    for e in fs.list(p):
        if not e.is_dir and e.path.endswith(".jsonl") and not fs.name(e.path).startswith("."):
            out += [json.loads(line) for line in fs.read_bytes(e.path).decode().splitlines() if line.strip()]
    return sorted(out, key=lambda d: (d["segment"], d["position"]))


def _n(v: int) -> str:
    return f"{v:,}"


def render_summary(s: Summary) -> str:
    lines = [
        f"kcodec pipeline: {s.source} -> {s.dest} ({s.format}, Spark {s.master})",
        f"  records table  {s.records_table}  ({_n(sum(p.rows for p in s.partitions))} rows)",
        f"  batches table  {s.batches_table}  ({_n(sum(p.batches for p in s.partitions))} rows)",
        "",
    ]
    head = ("topic-partition", "batches", "records", "control", "bytes on disk", "compressed", "uncompressed", "ratio")
    table = [head]
    for p in s.partitions + [s.total()]:
        name = "total" if p.topic == "total" and p.partition is None else p.name
        table.append(
            (
                name,
                _n(p.batches),
                _n(p.records),
                _n(p.control_records),
                _n(p.bytes),
                _n(p.compressed_bytes),
                _n(p.uncompressed_bytes),
                "-" if p.ratio is None else f"{p.ratio:.2f}x",
            )
        )
    lines += _columns(table, left=1)
    lines.append(
        "  (compressed / uncompressed: bytes of the records regions as stored / once decompressed; "
        "ratio = uncompressed / compressed)"
    )
    if s.sizes_computed:
        total = s.total()
        lines += [
            "",
            "The same records in each format and codec (generated size calculators; data batches only,",
            f"grouped as on disk; v0/v1 drop headers, v0 timestamps). On disk now: {_n(total.data_bytes)} bytes.",
            "",
        ]
        names = [p.name for p in s.partitions] if len(s.partitions) <= 4 else []
        table = [("format", "codec", *names, "total", "vs on disk")]
        for magic, codec in COMBINATIONS:
            k = label(magic, codec)
            t = total.sizes.get(k)
            ratio = "-" if not t or not total.data_bytes else f"{t / total.data_bytes:.2f}x"
            table.append(
                (
                    f"v{magic}",
                    codec,
                    *[_n(p.sizes.get(k, 0)) for p in s.partitions if names],
                    "-" if t is None else _n(t),
                    ratio,
                )
            )
        lines += _columns(table, left=2)
    if s.skipped:
        lines += ["", f"onCorrupt=skip skipped {len(s.skipped)} region(s):"]
        for d in s.skipped:
            size = "the rest of its split" if d.get("bytes") is None else f"{d['bytes']} bytes"
            lines.append(f"  {d['segment']} @ {d['position']}: {size} ({d['kind']}: {d['error']})")
    return "\n".join(lines)


def _columns(rows: list[tuple], left: int) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [str(c).ljust(w) if i < left else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out
