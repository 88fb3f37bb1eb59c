"""The order the suite's files start in: the longest first. Under pytest-xdist (``make test``:
``--dist loadfile``) a file runs whole on one worker, so a long file started last runs alone at the end
while the other workers idle; started first, it runs beside the short ones. pytest-xdist would otherwise
order files by their number of tests, which puts a one-test file of minutes (the Spark cluster, the
Spark bench rows) last: tests/conftest.py turns that off and sorts by this list."""

from __future__ import annotations

from pathlib import Path

# longest first: each file's total time in a --durations=0 run of the whole suite on two workers
# (2026-11-27); a file missing here starts after these, in collection order
SLOWEST_FILES = (
    "spark/test_spark_cluster.py",
    "spark/test_spark_write.py",
    "spark/test_spark_options.py",
    "cli/test_cli_record_count_bomb.py",
    "spark/test_spark_read.py",
    "spark/test_spark_bench.py",
    "cli/test_progress.py",
    "spark/test_spark_confluent_values.py",
    "cli/test_install.py",
    "cli/test_cli_hostile_files.py",
    "cli/test_json.py",
    "cli/test_cli_rules.py",
    "spark/test_spark_streaming.py",
    "records/test_legacy_wrapper_chunks.py",
    "spark/test_spark_cost_table.py",
    "spark/test_spark_pipeline.py",
    "internal_topics/test_metadata_image_memory.py",
    "codegen/test_codegen.py",
    "backends/test_compiled_kernel.py",
    "spark/test_spark_sink.py",
    "spark/test_spark_views.py",
    # then the files that ended the runs, started alone after the short ones (a worker idled meanwhile):
    # slower ones from that run and, for files newer than it, from the slowest 40 of a quiet make test
    "internal_topics/test_metadata_tables.py",
    "tools/test_dump_snapshots.py",
    "spark/test_spark_lakehouse_stream.py",
    "cli/test_write_streaming.py",
    "spark/test_spark_pipeline_internal.py",
    "spark/test_spark_confluent_unions_wkt.py",
    "spark/test_spark_lakehouse.py",
    "spark/test_spark_commit.py",
    "codegen/test_kitchen_sink.py",
    "tools/test_bench.py",
    "spark/test_spark_cost_table_encoders.py",
    "tools/test_fuzz.py",
    "spark/test_spark_s3.py",
    "spark/test_spark_from_table.py",
    "spark/test_spark_skip_report_bounded.py",
    "spark/test_spark_splits.py",
    "cli/test_cli_errors.py",
    "cli/test_output_safety.py",
    "codegen/test_flexible.py",
    "test_docs.py",
)


def start_rank(path: Path, tests: Path) -> int:
    """Where the file at ``path`` starts: its place in SLOWEST_FILES, after them when it is not listed."""
    try:
        return SLOWEST_FILES.index(path.relative_to(tests).as_posix())
    except ValueError:
        return len(SLOWEST_FILES)
