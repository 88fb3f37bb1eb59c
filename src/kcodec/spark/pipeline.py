"""The segments -> tables job behind ``kcodec pipeline``.

Spark decodes every segment under SRC through the ``kafka-segments`` data
source into two tables under DEST (Parquet by default):

* ``records``: one row per record, the data source's columns;
* ``batches``: one row per batch (position, size, codec, records, compressed
  and uncompressed bytes, CRC validity, producer fields, and ``sizeAs``:
  what the batch's records would take as v0, v1 and v2 with each codec,
  :mod:`kcodec.spark.cost_table`).

The summary is computed by Spark from the written tables: records, batches,
bytes and compression ratio per topic-partition, and the v0 / v1 / v2 x codec
comparison on the real records: exact, or with ``size_sample`` below 1 the
compressed sizes estimated from that fraction of the batches.

With ``value_format="confluent"``, each topic's records with typed Schema Registry values go to
``values/<topic>`` (:func:`write_value_tables`).

When SRC holds Kafka's internal topics, their tables are written too
(:mod:`kcodec.spark.internal_tables`: the latest consumer offsets, groups and
transactions, the metadata records and the metadata image), unless
``internal_tables`` is False.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from dataclasses import asdict, dataclass, field

from kcodec.spark.cost_table import COMBINATIONS, estimate, label
from kcodec.spark.internal_tables import InternalTable, join_path, write_internal_tables
from kcodec.spark.options import default

__all__ = ["PartitionSummary", "Summary", "ValueTable", "run_pipeline", "render_summary", "FORMATS"]

FORMATS = ("parquet", "orc", "json")
UNLISTED = "unlisted"  # a value_error whose reason is no kind of kcodec.values.errors (a summary says it)


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
class ValueTable:
    """A topic's records with typed values (``value_format="confluent"``), and how its values decoded."""

    topic: str
    path: str | None  # None: no subject <topic>-value in the schemas, no table written
    rows: int = 0
    decoded: int = 0
    raw: dict[str, int] = field(default_factory=dict)  # reason (value_error's kind) -> rows
    note: str = ""


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
    size_sample: float = 1.0  # below 1: compressed sizes estimated from this fraction of the batches
    sampled_batches: int | None = None  # when sampling: data batches that got compressed sizes
    sized_batches: int | None = None  # when sampling: data batches
    charts: list[str] = field(default_factory=list)  # the cost table as pictures, beside the tables
    internal_tables: list[InternalTable] = field(default_factory=list)  # of the internal topics SRC holds
    value_tables: list[ValueTable] = field(default_factory=list)  # --value-format confluent: one per topic

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
    size_sample: float = 1.0,
    log_level: str = "error",
    chart_png: bool = False,
    internal_tables: bool = True,
    value_format: str = "binary",
) -> Summary:
    """Decode ``source`` into ``dest``/records and ``dest``/batches and summarize.

    ``options`` are read options of the data source (``onCorrupt``,
    ``isolationLevel``, ``verifyCrc`` ...). A ``spark`` session may be given;
    otherwise one is started on ``master`` with the Spark settings ``conf``. ``size_sample`` below 1
    computes compressed sizes for that fraction of the batches only and
    estimates the rest (uncompressed sizes stay exact). With sizes, the cost
    table is also drawn as ``dest``/cost_table.svg (and .png with ``chart_png``). With ``internal_tables``,
    the tables of the internal topics ``source`` holds are written too. ``value_format="confluent"`` writes,
    per topic with a ``<topic>-value`` subject in the schemas (the ``schemas`` option, or the ``_schemas-N``
    directory in ``source``), ``dest``/values/<topic>: its records with the typed ``value`` column."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if not 0 < size_sample <= 1:
        raise ValueError(f"size_sample must be in (0, 1], not {size_sample!r}")
    from pyspark.sql import functions as F

    if spark is None:
        from kcodec.spark.session import local_session

        spark = local_session(master, "kcodec pipeline", conf=conf, log_level=log_level)
    else:
        from kcodec.spark.source import register

        register(spark)
    options = {str(k): str(v) for k, v in (options or {}).items()}
    options.setdefault("minPartitions", str(spark.sparkContext.defaultParallelism))
    records_path, batches_path = join_path(dest, "records"), join_path(dest, "batches")
    report_path = None
    if options.get("onCorrupt", default("onCorrupt")).lower() == "skip" and "corruptReportPath" not in options:
        report_path = join_path(dest, "_corrupt")
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
        .option("sizeSample", str(size_sample))
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
    size_rows, sampled_batches, sized_batches = _size_totals(batches, size_sample) if sizes else ({}, None, None)
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
    internal: list[InternalTable] = []
    if internal_tables:
        view_options = dict(batch_options)
        if report_path:  # the views' own skips only: damaged batches are in the records read's report
            views_report = view_options["corruptReportPath"] = join_path(dest, "_corrupt_views")
            from kcodec.log.fs import resolve

            fs, p = resolve(views_report)
            fs.delete_dir(p)
        internal = write_internal_tables(spark, source, dest, fmt, view_options)
        if report_path:
            skipped += [d for d in _read_reports(views_report) if d["kind"] == "internal_record"]
    values = (
        write_value_tables(spark, source, dest, fmt, batch_options, sorted({p.topic for p in parts if p.topic}))
        if value_format == "confluent"
        else []
    )
    summary = Summary(
        source,
        dest,
        fmt,
        spark.sparkContext.master,
        records_path,
        batches_path,
        parts,
        skipped,
        sizes,
        size_sample,
        sampled_batches,
        sized_batches,
        internal_tables=internal,
        value_tables=values,
    )
    if sizes:
        summary.charts = _write_charts(summary, dest, png=chart_png)
    return summary


def write_value_tables(spark, source: str, dest: str, fmt: str, options: dict, topics: list[str]) -> list[ValueTable]:
    """Each topic's records with typed values, and the count of values decoded and left raw by reason."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from kcodec.spark.value_columns import schema_source
    from kcodec.values.errors import error_kinds

    schemas = schema_source(options.get("schemas"), source)
    reason = F.substring_index(F.col("value_error"), ":", 1)  # value_error is "<kind>: <message>"
    kinds = error_kinds()
    out = []
    for topic in topics:
        if schemas.latest(f"{topic}-value") is None:
            out.append(
                ValueTable(topic, None, note=f"no subject {topic}-value in {schemas.description}: left as bytes")
            )
            continue
        reader = spark.read.format("kafka-segments").options(**options).option("subscribe", topic)
        df = reader.option("valueFormat", "confluent").load(source)
        path = join_path(join_path(dest, "values"), topic)
        # the counts are taken as the table is written (one pass over the values, no second read of it)
        observed = Observation(f"values of {topic}")
        counts = [F.count(F.when(reason == kind, 1)).alias(kind) for kind in kinds]
        counts.append(F.count(F.when(~reason.isin(*kinds), 1)).alias(UNLISTED))  # none expected: said if any
        rows, decoded = F.count(F.lit(1)).alias("_rows"), F.count("value").alias("_decoded")
        df.observe(observed, rows, decoded, *counts).write.mode("overwrite").format(fmt).save(path)
        got = observed.get
        table = ValueTable(topic, path, int(got["_rows"]), int(got["_decoded"]))
        table.raw = {kind: int(got[kind]) for kind in (*kinds, UNLISTED) if got[kind]}
        table.raw = dict(sorted(table.raw.items()))
        out.append(table)
    return out


def _size_totals(batches, size_sample: float) -> tuple[dict[tuple, dict[str, int]], int | None, int | None]:
    """Per topic-partition, the cost table's totals; and with sampling, how many
    data batches got compressed sizes (those whose ``sizeAs`` has every key) of how many."""
    from pyspark.sql import functions as F

    picked = F.size("sizeAs") == len(COMBINATIONS)
    sums: dict[tuple, dict[str, int]] = {}
    sampled_sums: dict[tuple, dict[str, int]] = {}
    sampled_batches = sized_batches = 0
    for r in (
        batches.where(F.col("sizeAs").isNotNull())
        .select("topic", "partition", picked.alias("picked"), F.explode("sizeAs").alias("k", "v"))
        .groupBy("topic", "partition", "picked", "k")
        .agg(F.sum("v").alias("v"), F.count(F.lit(1)).alias("n"))
        .collect()
    ):
        key, k, v = (r["topic"], r["partition"]), r["k"], int(r["v"])
        if k.endswith("/none"):
            sums.setdefault(key, {})[k] = sums.get(key, {}).get(k, 0) + v
        if k == label(2, "none"):
            sized_batches += int(r["n"])
        if r["picked"]:
            sampled_sums.setdefault(key, {})[k] = v
            if k == label(2, "none"):
                sampled_batches += int(r["n"])
    if size_sample >= 1:
        return sampled_sums, None, None  # every batch has every size: the sums are exact
    totals = {key: estimate(all_sums, sampled_sums.get(key, {})) for key, all_sums in sums.items()}
    return totals, sampled_batches, sized_batches


def _write_charts(s: Summary, dest: str, *, png: bool) -> list[str]:
    """The cost table as an SVG (and PNG) chart beside the tables; their paths."""
    from kcodec.log.fs import resolve
    from kcodec.tools.cost_chart import cost_chart_svg, svg_to_png

    total = s.total()
    svg = cost_chart_svg(
        total.sizes,
        total.data_bytes,
        f"{_n(total.records)} records as v0, v1 and v2 with each codec",
        estimated=s.size_sample < 1,
    )
    outputs = [(join_path(dest, "cost_table.svg"), svg.encode())]
    if png:
        outputs.append((join_path(dest, "cost_table.png"), svg_to_png(svg)))
    fs, _ = resolve(dest)
    for path, data in outputs:
        with fs.open_output(resolve(path)[1]) as out:
            out.write(data)
    return [path for path, _ in outputs]


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


def _count(v: int, noun: str) -> str:
    """``1 row``, ``2 rows``, ``1,000 rows``."""
    return f"{_n(v)} {noun}{'' if v == 1 else 's'}"


def _prose(text: str, width: int, indent: str = "") -> list[str]:
    """A paragraph of the summary wrapped at word boundaries (a terminal would cut words)."""
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent, break_long_words=False)


def render_summary(s: Summary, width: int | None = None) -> str:
    """The summary as ``kcodec pipeline`` prints it; prose wrapped at ``width`` (default: the terminal's, at
    most 100 columns), tables as wide as they need."""
    if width is None:
        width = min(shutil.get_terminal_size((100, 24)).columns, 100)
    lines = [
        f"kcodec pipeline: {s.source} -> {s.dest} ({s.format}, Spark {s.master})",
        f"  records table  {s.records_table}  ({_count(sum(p.rows for p in s.partitions), 'row')})",
        f"  batches table  {s.batches_table}  ({_count(sum(p.batches for p in s.partitions), 'row')})",
        "",
    ]
    total = s.total()
    control = total.bytes != total.data_bytes  # control batches: said only where there are some
    head = ("topic-partition", "batches", "records", "control", "on disk", "compressed", "uncompressed", "ratio")
    table: list[tuple[str, ...]] = [head]
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
    on_disk = "every batch, control batches included" if control else "every batch"
    lines += _prose(
        f"(on disk: {on_disk}; compressed / uncompressed: bytes of the records regions as stored / once "
        "decompressed; ratio = uncompressed / compressed)",
        width,
        "  ",
    )
    if s.sizes_computed:
        scope = "data batches only, grouped as on disk" if control else "grouped as on disk"
        now = f"On disk now: {_count(total.data_bytes, 'byte')}."
        if control:
            now = (
                f"On disk now, data batches only: {_count(total.data_bytes, 'byte')} (the {_n(total.bytes)} above "
                f"include control batches: {_count(total.bytes - total.data_bytes, 'byte')})."
            )
        lines += [
            "",
            *_prose(
                f"The same records in each format and codec ({scope}; v0/v1 drop headers, v0 timestamps). {now}",
                width,
            ),
            *_prose(_sizes_method(s), width),
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
    for chart in s.charts:
        lines.append(f"  chart: {chart}")
    if s.internal_tables:
        lines += ["", "Kafka's internal topics:"]
        path_width = max(len(it.path) for it in s.internal_tables)
        for it in s.internal_tables:
            lines.append(f"  {it.path.ljust(path_width)}  {_count(it.rows, 'row')}  ({it.source})")
    if s.value_tables:
        lines += ["", "Schema Registry values (--value-format confluent):"]
        for v in s.value_tables:
            if v.path is None:
                lines.append(f"  {v.topic}: {v.note}")
                continue
            raw = ", ".join(f"{reason} {_n(n)}" for reason, n in v.raw.items())
            left = f"; not decoded: {raw}" if raw else ""
            lines.append(f"  {v.topic}: {_n(v.decoded)} of {_count(v.rows, 'row')} decoded{left}  -> {v.path}")
    if s.skipped:
        regions = sum(d.get("regions", 1) for d in s.skipped)  # a split's summary line stands for many
        lines += ["", f"onCorrupt=skip skipped {regions} region(s):"]
        for d in s.skipped:
            size = "the rest of its split" if d.get("bytes") is None else f"{d['bytes']} bytes"
            lines.append(f"  {d['segment']} @ {d['position']}: {size} ({d['kind']}: {d['error']})")
    return "\n".join(lines)


def _sizes_method(s: Summary) -> str:
    if s.size_sample >= 1:
        return "Exact: every batch encoded in each format and compressed with each codec."
    return (
        f"Compressed sizes estimated from a {s.size_sample:.0%} sample of the batches "
        f"({_n(s.sampled_batches or 0)} of {_n(s.sized_batches or 0)} data batches, --size-sample {s.size_sample:g}), "
        "scaled by each format's uncompressed bytes; uncompressed sizes exact."
    )


def _columns(rows: list[tuple], left: int) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [str(c).ljust(w) if i < left else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out
