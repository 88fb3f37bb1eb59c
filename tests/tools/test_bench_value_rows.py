"""The Spark value rows of ``kcodec bench`` without starting Spark: their workload is a log directory whose
values kcodec and fastavro decode alike, and their two targets are checked on the rows' own numbers."""

from __future__ import annotations

import io

import fastavro

from kcodec.bench import report, spark_value_rows, value_rows
from kcodec.bench.runner import Result
from kcodec.log.partition import Partition
from kcodec.values.decoder import ValueDecoder
from kcodec.values.frame import HEADER_SIZE
from kcodec.values.sources import open_schema_source


def test_the_workload_is_framed_avro_values_with_their_schema(tmp_path) -> None:
    root = spark_value_rows.make_workload(tmp_path, 2_500)
    assert spark_value_rows.make_workload(tmp_path, 2_500) == root  # made once, then reused
    values = [r.value for r in Partition(root / f"{spark_value_rows.TOPIC}-0").iter_records()]
    assert len(values) == 2_500
    decoder = ValueDecoder(open_schema_source(str(root / "schemas.json")))
    decoded, errors = decoder.decode_chunk(values, topic=spark_value_rows.TOPIC)
    assert errors == [None] * 2_500
    schema = fastavro.parse_schema(value_rows.SCHEMA)
    assert decoded == [fastavro.schemaless_reader(io.BytesIO(v[HEADER_SIZE:]), schema, None) for v in values]


def test_the_two_targets() -> None:
    def row(impl, op, seconds):
        return Result(impl, op, "none", 100_000, 1, times=[seconds])

    results = [
        row("primitive", "spark_avro_values", 1.0),
        row(spark_value_rows.SPARK, "spark_avro_values", 2.5),  # 0.4x fastavro's loop
        row(spark_value_rows.BYTES_READ, "spark_avro_values", 0.5),
        row(spark_value_rows.SPARK, "pipeline_avro_values", 10.0),
        row(spark_value_rows.PLAIN_PIPELINE, "pipeline_avro_values", 6.0),  # 0.6x
    ]
    got = {t["target"]: (t["verdict"], round(t["measured"], 2)) for t in report.targets(results, None)}
    assert got["Avro values decoded in the Spark source vs fastavro's own loop"] == ("FAIL", 0.4)
    assert got["pipeline with typed values vs the pipeline without decoding"] == ("PASS", 0.6)
    failed = [*results[:1], Result(spark_value_rows.SPARK, "spark_avro_values", "none", status="error", reason="x")]
    (target,) = report.targets(failed, None)
    assert target["verdict"] == "n/a" and target["note"] == "error: x"
    assert "spark_avro_values: framed Avro values" in report.markdown(
        results, report.machine_info(), {"records": 1, "batch_size": 1, "seed": 1, "raw_bytes_v2": 1,
                                         "raw_bytes_v1": 1, "v2_sizes": {}, "batches": 1}, 1, None
    )  # fmt: skip
