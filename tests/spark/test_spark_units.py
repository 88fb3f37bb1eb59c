"""The Spark package's pieces that run without Spark: import hygiene, path
discovery (on kcodec.log's listing), split planning, the size comparison."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kcodec.log.index import read_offset_index
from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch
from kcodec.records.reader import read_batches


def test_importing_kcodec_does_not_import_pyspark():
    code = (
        "import sys, kcodec, kcodec.spark; kcodec.read_batches; "
        "assert 'pyspark' not in sys.modules and 'pyarrow' not in sys.modules, "
        "[m for m in sys.modules if m.startswith(('pyspark', 'pyarrow'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "magic,codec",
    [(m, c) for m in (0, 1) for c in ("none", "gzip", "snappy", "lz4")]
    + [(2, c) for c in ("none", "gzip", "snappy", "lz4", "zstd")],
)
def test_sizes_equal_the_encoded_bytes(magic, codec):
    """size_as gives, for the format and codec a batch is in, exactly its bytes."""
    from kcodec.spark.cost_table import size_as

    recs = [
        {
            "key": b"k%d" % i,
            "value": b"value %d " % i * 7,
            "timestamp": 1_700_000_000_000 + i,
            "headers": [("h", b"x")] if magic == 2 else [],
        }
        for i in range(25)
    ]
    data = encode_batch(recs, magic=magic, compression=codec, base_offset=100, allow_lossy=True)
    if magic == 2 or codec != "none":
        (batch,) = list(read_batches(data))
        assert size_as(batch)[f"v{magic}/{codec}"] == len(data)
    else:  # one entry per record: the records of all entries
        batches = list(read_batches(data))
        assert sum(size_as(b)[f"v{magic}/none"] for b in batches) == len(data)


@pytest.fixture
def big_partition(tmp_path):
    d = tmp_path / "big-3"
    with SegmentWriter(d, segment_bytes=60_000, index_interval_bytes=500) as w:
        for b in range(60):
            w.append(encode_batch([{"value": bytes([b]) * 300, "timestamp": 1000 + b}] * 5, base_offset=b * 5))
    return d


def test_discover_paths(big_partition, tmp_path):
    from kcodec.spark.planning import discover

    (parts,) = discover(str(big_partition))
    assert (parts.topic, parts.partition, len(parts.segments)) == ("big", 3, 2)
    assert all(s.has(".index") and s.has(".timeindex") and not s.has(".txnindex") for s in parts.segments)
    assert [p.topic for p in discover(str(tmp_path))] == ["big"]
    assert len(discover(f"file://{big_partition}/*.log")[0].segments) == 2
    (one,) = discover(str(sorted(big_partition.glob("*.log"))[1]), topic="t")
    assert one.topic == "t" and len(one.segments) == 1 and one.segments[0].base_offset > 0
    (tmp_path / "_kcodec_staging" / "x-0").mkdir(parents=True)
    (tmp_path / "gone-1.abc-delete").mkdir()
    assert [p.path for p in discover(str(tmp_path))] == [str(big_partition)]
    with pytest.raises(FileNotFoundError):
        discover(str(tmp_path / "nothing*"))


def test_discovery_skips_and_reports_names_that_are_not_kafkas(big_partition, capsys):
    """Spark lists segments with kcodec.log: a 123.log, 21 digits or Arabic-Indic digits are never planned,
    whether found in the directory or matched by a glob, and each is reported on stderr."""
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    real = sorted(str(p) for p in big_partition.glob("*.log"))
    stray = ["123.log", "0" * 21 + ".log", "\u0660" * 20 + ".log"]
    for name in stray:
        (big_partition / name).write_bytes(encode_batch([{"value": b"x", "timestamp": 1}], base_offset=7))
    for path in (str(big_partition), f"{big_partition}/*.log"):
        (part,) = discover(path)
        assert sorted(str(s.log) for s in part.segments) == real
        assert sorted(part.skipped) == sorted(stray)
        assert sorted({s.log for s in plan([part], ReadOptions(path))}) == real
        err = capsys.readouterr().err
        assert all(f"skipped {big_partition}/{name}: not a Kafka segment name" in err for name in stray)
    (big_partition.parent / "123.log").write_bytes(b"")  # beside partition directories: still a log directory
    assert [p.path for p in discover(str(big_partition.parent))] == [str(big_partition)]
    assert "not a Kafka segment name" in capsys.readouterr().err


def test_splits_cut_at_checked_index_positions(big_partition):
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    opts = ReadOptions(str(big_partition), split_bytes=10_000)
    splits = plan(discover(str(big_partition)), opts)
    assert len(splits) > 4
    for seg_log in {s.log for s in splits}:
        mine = [s for s in splits if s.log == seg_log]
        positions = {e.position for e in read_offset_index(seg_log.replace(".log", ".index"))}
        assert mine[0].start == 0 and mine[-1].end is None
        for a, b in zip(mine, mine[1:]):
            assert a.end == b.start and b.start in positions
        # the ranges hold whole batches and together all of them
        got = [bt.base_offset for s in mine for bt in read_batches(seg_log, start=s.start, end=s.end, strict=True)]
        assert got == [bt.base_offset for bt in read_batches(seg_log)]


def test_stale_index_is_not_trusted(big_partition):
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan

    first = sorted(big_partition.glob("*.index"))[0]
    data = bytearray(first.read_bytes())
    data[4:8] = (int.from_bytes(data[4:8], "big") + 3).to_bytes(4, "big")  # first entry's position is off
    data[12:16] = (int.from_bytes(data[12:16], "big") + 3).to_bytes(4, "big")
    first.write_bytes(bytes(data))
    splits = plan(discover(str(big_partition)), ReadOptions(str(big_partition), split_bytes=10_000))
    for s in splits:
        list(read_batches(s.log, start=s.start, end=s.end, strict=True))  # every range still whole batches
    opts = ReadOptions(str(big_partition), starting_offset=12)
    (s, *_) = plan(discover(str(big_partition)), opts)
    assert s.start == 0  # the seek entry does not match its batch: read from the start


@pytest.fixture
def through_pyarrow(monkeypatch):
    """file:// paths go through pyarrow.fs (the code path of s3://, hdfs:// ...) instead of plain os calls."""
    pytest.importorskip("pyarrow")
    from kcodec.log import fs as kfs
    from kcodec.spark import planning, read, write

    real = kfs.resolve

    def resolve(path, storage=()):
        path = str(path)
        if path.startswith("file://"):
            return kfs.ArrowFS("file:///", storage), path
        return real(path, storage)

    for module in (kfs, planning, read, write):
        monkeypatch.setattr(module, "resolve", resolve)
    monkeypatch.setattr(kfs, "filesystem_of", lambda p, storage=(): resolve(p, storage)[0])
    return resolve


def _all_rows(path: str, **options):
    from kcodec.spark.arrow import RECORD_COLUMNS
    from kcodec.spark.options import ReadOptions
    from kcodec.spark.planning import discover, plan
    from kcodec.spark.read import read_split

    opts = ReadOptions(path, **options)
    cols = [(c, True) for c in RECORD_COLUMNS]
    rows = []
    for split in plan(discover(path), opts):
        for rb in read_split(split, opts, cols):
            rows += rb.to_pylist()
    for r in rows:
        r["segment"] = r["segment"].replace("file://", "")
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))


def test_remote_filesystem_code_path_reads_the_same(through_pyarrow):
    from .conftest import SAMPLES

    local = _all_rows(str(SAMPLES), split_bytes=3000, read_committed=True)
    remote = _all_rows(f"file://{SAMPLES}/*-[01]", split_bytes=3000, read_committed=True)
    assert len(remote) == len(local) > 1000 and remote == local
    window = _all_rows(f"file://{SAMPLES}/orders-1", starting_offset=230, ending_offset=260)
    assert [r["offset"] for r in window] == list(range(230, 260))


def test_remote_filesystem_code_path_writes(through_pyarrow, tmp_path):
    import pyarrow as pa

    from kcodec.spark.write import WriteOptions, commit_job, new_job_id, write_task

    uri = f"file://{tmp_path}/out"
    opts = WriteOptions(uri, compression="lz4", records_per_batch=10, segment_bytes=600)
    rb = pa.RecordBatch.from_pydict(
        {"value": [b"v%d" % i for i in range(50)], "topic": ["t"] * 50, "partition": [i % 2 for i in range(50)]}
    )
    job = new_job_id()
    chunks = write_task(iter([rb]), opts, job, 0, 0) + write_task(iter([rb]), opts, job, 1, 0)
    commit_job(chunks, opts, job, overwrite=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["t-0", "t-1"]
    rows = _all_rows(uri)
    assert [r["offset"] for r in rows if r["partition"] == 0] == list(range(50))
    assert [r["value"] for r in rows if r["partition"] == 1][:3] == [b"v1", b"v3", b"v5"]


def test_a_format_not_found_names_the_workers_python_and_the_fix():
    """DATA_SOURCE_NOT_FOUND for kafka-segments when Spark's Python workers run an interpreter without kcodec:
    kcodec.spark.loadcheck says which interpreter and which setting, in one line."""
    from kcodec.spark import loadcheck

    class Context:
        def __init__(self, conf):
            self.conf = conf

        def getConf(self):
            return self.conf

    class Session:
        def __init__(self, conf):
            self.sparkContext = Context(conf)

    class Reader:
        def __init__(self, conf):
            self._spark = Session(conf)

    missing = Reader({"spark.pyspark.python": "/nonexistent/bin/python3"})
    cause = loadcheck._not_found_cause(missing)
    assert isinstance(cause, loadcheck.WorkersPythonError)
    text = str(cause)
    assert "/nonexistent/bin/python3" in text and "spark.pyspark.python" in text and sys.executable in text
    assert "\n" not in text
    assert loadcheck._not_found_cause(Reader({"spark.pyspark.python": sys.executable})) is None  # this one has it
