"""The sink's pieces without a Spark session: option mapping, the v2 size estimate, the commit's
second look in ErrorIfExists / Ignore, the partition count from directories."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

from kcodec.errors import PathExistsError
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.framing import V2_OVERHEAD
from kcodec.records.sizing import v2_fixed_size_of, v2_record_size
from kcodec.spark.options import OptionError
from kcodec.spark.sink import producer_settings
from kcodec.spark.write import WriteOptions, commit_job, new_job_id, with_partition_counts, write_task


def test_producer_names_map_onto_kcodecs():
    s = producer_settings({"kafka.compression.type": "gzip", "kafka.compression.gzip.level": "3"})
    assert (s["compression"], s["compression_level"]) == ("gzip", 3)
    # a level for another codec is not this one's (the producer ignores it too)
    assert producer_settings({"compression": "lz4", "kafka.compression.zstd.level": "9"})["compression_level"] is None
    assert producer_settings({"kafka.batch.size": "0"})["records_per_batch"] == 1
    s = producer_settings({"kafka.batch.size": "4096"})
    assert s["batch_limit"] == 4096 and s["records_per_batch"] > 10**9
    with pytest.raises(OptionError, match="disagree"):
        producer_settings({"compression": "lz4", "kafka.compression.type": "gzip"})
    with pytest.raises(OptionError, match="give one"):
        producer_settings({"batchbytes": "10", "kafka.batch.size": "10"})
    with pytest.raises(OptionError, match="linger.ms must be >= 0"):
        producer_settings({"kafka.linger.ms": "-1"})


@pytest.mark.parametrize("n", [1, 2, 7, 130])
def test_v2_size_estimate_is_the_encoded_size(n):
    recs = [
        NewRecord(
            None if i % 3 == 0 else b"k" * i, b"v" * (i * 11), (("h", b"x" * i),) if i % 2 else (), 1000 + i * 999
        )
        for i in range(n)
    ]
    estimate = V2_OVERHEAD + sum(
        v2_record_size(i, r.timestamp - recs[0].timestamp, v2_fixed_size_of(r.key, r.value, r.headers))
        for i, r in enumerate(recs)
    )
    assert estimate == len(encode_batch(recs, magic=2))


def _rows(n=4):
    import pyarrow as pa

    return pa.RecordBatch.from_pydict({"value": [b"v%d" % i for i in range(n)], "topic": ["t"] * n})


def test_commit_looks_again_in_errorifexists_and_ignore(tmp_path):
    for mode in ("errorifexists", "ignore"):
        out = tmp_path / mode
        opts = WriteOptions(str(out), num_partitions=1, save_mode=mode)
        job = new_job_id()
        chunks = write_task(iter([_rows()]), opts, job, 0, 0)
        (out / "t-0").mkdir()  # another writer's data appears while the job runs
        (out / "t-0" / "00000000000000000000.log").write_bytes(b"")
        if mode == "ignore":
            assert commit_job(chunks, opts, job, overwrite=False) == {}
        else:
            with pytest.raises(PathExistsError, match="gained data"):
                commit_job(chunks, opts, job, overwrite=False)
        assert sorted(p.name for p in out.iterdir()) == ["t-0"]  # staging gone, the other data kept
        assert (out / "t-0" / "00000000000000000000.log").read_bytes() == b""


def test_partition_counts_from_directories(tmp_path):
    for name in ("t-0", "t-3", "u-1", "_kcodec_staging"):
        (tmp_path / name).mkdir()
    opts = with_partition_counts(WriteOptions(str(tmp_path)))
    assert dict(opts.partition_counts) == {"t": 4, "u": 2}
    with pytest.raises(OptionError, match="already has 4 partitions"):
        with_partition_counts(WriteOptions(str(tmp_path), num_partitions=2))
    assert with_partition_counts(WriteOptions(str(tmp_path), num_partitions=2), overwrite=True).num_partitions == 2
