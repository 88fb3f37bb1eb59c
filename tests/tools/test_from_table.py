"""``kcodec write --from-table``: partition directories rebuilt from tables of kcodec's records rows that
pyarrow, pyiceberg and delta-rs wrote; the segments compared with the originals by sha256, and read back by
kafka-python and aiokafka."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

import aiokafka.record.default_records as aio_default  # noqa: E402
import aiokafka.record.legacy_records as aio_legacy  # noqa: E402
from kafka.record import MemoryRecords as KpMemoryRecords  # noqa: E402

from kcodec.records.encode import encode_batch  # noqa: E402
from kcodec.records.model import TimestampType  # noqa: E402
from kcodec.records.reader import read_batches  # noqa: E402
from kcodec.tools import from_table  # noqa: E402
from kcodec.tools.from_table import TableError, exact_columns, open_table, rebuild  # noqa: E402
from tests.helpers.client_logs import client_log  # noqa: E402
from tests.helpers.paths import TESTS  # noqa: E402
from tests.helpers.records_table import TABLE_FORMATS, records_table, write_table  # noqa: E402

SAMPLES = TESTS.parent / "samples" / "data"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def logs(root: Path) -> dict[str, str]:
    """{partition/segment.log: sha256} of every segment under ``root``."""
    return {f"{p.parent.name}/{p.name}": sha256(p) for p in sorted(root.glob("*/*.log"))}


def kafka_python_view(path: Path) -> list[tuple]:
    """Every record as kafka-python reads the segment: (offset, timestamp, type, key, value, headers)."""
    out = []
    records = KpMemoryRecords(path.read_bytes())
    while records.has_next():
        batch = records.next_batch()
        for r in batch:
            out.append((r.offset, r.timestamp, r.timestamp_type, r.key, r.value, list(r.headers)))
    return out


def aiokafka_view(path: Path) -> list[tuple]:
    """The same by aiokafka's batch readers (its MemoryRecords reads every entry as v2), v2 CRCs checked."""
    out = []
    data, at = path.read_bytes(), 0
    while at < len(data):
        end = at + 12 + int.from_bytes(data[at + 8 : at + 12], "big")
        entry, magic, at = data[at:end], data[at + 16], end
        if magic == 2:
            batch = aio_default.DefaultRecordBatch(entry)
            assert batch.validate_crc()
        else:
            batch = aio_legacy.LegacyRecordBatch(entry, magic)
        for r in batch:
            out.append((r.offset, r.timestamp, r.timestamp_type, r.key, r.value, list(r.headers)))
    return out


def rebuilt(table: pa.Table, tmp_path: Path, kind: str = "parquet"):
    name, catalog = write_table(kind, table, tmp_path / "table")
    return rebuild(open_table(name, catalog), tmp_path / "out")


# ----------------------------------------------------------------------------- the bundled samples


@pytest.mark.parametrize("kind", TABLE_FORMATS)
def test_samples_come_back_byte_for_byte(kind, tmp_path, monkeypatch):
    """Every sample segment (v0/v1 messages and wrappers, v2 batches in every codec, transactions with their
    markers, a LogAppendTime batch) has the original's sha256 after a round trip through the table."""
    monkeypatch.setattr(from_table, "WINDOW_ROWS", 37)  # windows that cut batches in two
    reports, lacking = rebuilt(records_table(SAMPLES), tmp_path, kind)
    assert lacking == []
    assert logs(tmp_path / "out") == logs(SAMPLES)
    assert len(logs(SAMPLES)) == 10
    for r in reports:
        assert r.segments_identical and r.identical == r.batches and r.reencoded == r.unchecked == 0
    assert sum(r.records for r in reports) == 1782  # control records included
    # the indexes are rebuilt beside them, and readable
    for seg in (tmp_path / "out").glob("*/*.log"):
        assert seg.with_suffix(".index").exists() and seg.with_suffix(".timeindex").exists()
        original = SAMPLES / seg.parent.name / seg.name
        assert kafka_python_view(seg) == kafka_python_view(original)
        assert aiokafka_view(seg) == aiokafka_view(original)


def test_a_table_without_control_records_says_where_segments_differ(tmp_path):
    """A table without the markers (kcodec pipeline's default) rebuilds every batch it holds identically,
    but orders-0's segments differ from the first batch after a missing marker."""
    reports, _ = rebuilt(records_table(SAMPLES, include_control=False), tmp_path)
    by = {f"{r.topic}-{r.partition}": r for r in reports}
    assert all(r.identical == r.batches for r in reports)
    assert by["orders-0"].moved is not None and not by["orders-0"].segments_identical
    assert all(by[p].segments_identical for p in ("clicks-0", "legacy-0", "orders-1"))
    markers = [
        b.base_offset for s in sorted((SAMPLES / "orders-0").glob("*.log")) for b in read_batches(s) if b.is_control
    ]
    assert by["orders-0"].moved == min(o for o in range(markers[0] + 1, 10**6) if o not in markers)


def test_an_older_table_is_rebuilt_record_for_record(tmp_path):
    """Without the exact columns: same records, CRC-valid, and the report says identity was not checked."""
    reports, lacking = rebuilt(records_table(SAMPLES, drop=exact_columns()), tmp_path)
    assert lacking == list(exact_columns())
    assert all(r.unchecked == r.batches and r.identical == 0 for r in reports)
    for seg in sorted((tmp_path / "out").glob("*/*.log")):
        assert all(b.crc_valid for b in read_batches(seg, strict=True))
    original = [v for p in sorted(SAMPLES.glob("*/*.log")) for v in kafka_python_view(p)]
    again = [v for p in sorted((tmp_path / "out").glob("*/*.log")) for v in kafka_python_view(p)]
    # v2 LogAppendTime batches read the same (the append time); only their stored producer times are lost
    assert again == original


# ----------------------------------------------------------------------------- logs other clients wrote


@pytest.mark.parametrize("kind", TABLE_FORMATS)
def test_a_log_the_python_clients_wrote(kind, tmp_path):
    src = tmp_path / "src" / "compacted-3"
    client_log(src)
    reports, _ = rebuilt(records_table(src.parent), tmp_path, kind)
    (report,) = reports
    out = tmp_path / "out" / "compacted-3"
    first, second = "00000000000000000000.log", "00000000000000000100.log"
    # uncompressed: the same bytes, gaps and lastOffsetDelta included
    assert sha256(out / first) == sha256(src / first)
    # compressed: CRC-valid, the same records for both clients, whether or not gzip wrote the same stream
    assert all(b.crc_valid for b in read_batches(out / second, strict=True))
    for name in (first, second):
        assert kafka_python_view(out / name) == kafka_python_view(src / name)
        assert aiokafka_view(out / name) == aiokafka_view(src / name)
    assert [b.last_offset for b in read_batches(out / first)][1] == 27  # 7 + lastOffsetDelta 20
    assert report.batches == 4 + 3 + 2 + 3  # v0/v1 uncompressed messages are an entry each
    assert report.identical + report.reencoded == report.batches
    assert report.identical >= 9  # every uncompressed one
    assert report.segments_identical == (sha256(out / second) == sha256(src / second))


def test_kcodec_only_batch_fields_come_back(tmp_path):
    """What the clients cannot write: a delete horizon and LogAppendTime (uncompressed and zstd), with
    the producers' own timestamps still stored under the append time."""
    src = tmp_path / "src" / "t-0"
    src.mkdir(parents=True)
    recs = [{"key": b"k%d" % i, "value": b"v" * i, "timestamp": 1_000 + i, "offset": 2 * i} for i in range(5)]
    lat = {"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": 9_999}
    data = b"".join(
        [
            encode_batch(recs, base_offset=0, delete_horizon_ms=5_000),
            encode_batch([dict(r, offset=r["offset"] + 10) for r in recs], **lat),
            encode_batch([dict(r, offset=r["offset"] + 20) for r in recs], compression="zstd", **lat),
        ]
    )
    (src / "00000000000000000000.log").write_bytes(data)
    (report,), _ = rebuilt(records_table(src.parent), tmp_path)
    assert report.identical == 3 and report.segments_identical
    assert sha256(tmp_path / "out" / "t-0" / "00000000000000000000.log") == sha256(src / "00000000000000000000.log")


# ----------------------------------------------------------------------------- refusals


def test_duplicate_offsets_are_refused(tmp_path):
    table = records_table(SAMPLES / "orders-1")
    with pytest.raises(TableError, match=r"offset 0 appears more than once in orders-1"):
        rebuilt(pa.concat_tables([table, table.slice(0, 1)]), tmp_path)
    assert not (tmp_path / "out" / "orders-1").exists()


def test_offsets_out_of_step_with_their_batches_are_refused(tmp_path):
    """A row whose offset puts it among another batch's rows: the offsets are not monotonic with the
    batch positions, which cannot be written back."""
    table = records_table(SAMPLES / "orders-1")
    positions = table.column("batchPosition").to_pylist()
    offsets = table.column("offset").to_pylist()
    at = offsets.index(60)  # a record of the second batch given the third batch's position
    positions[at] = positions[offsets.index(100)]
    table = table.set_column(table.schema.get_field_index("batchPosition"), "batchPosition", pa.array(positions))
    with pytest.raises(TableError, match=r"offsets are not monotonic with their batches: offset"):
        rebuilt(table, tmp_path)


def test_missing_columns_are_named(tmp_path):
    table = records_table(SAMPLES / "orders-1").drop_columns(["baseOffset", "headers"])
    with pytest.raises(TableError, match=r"not a table of kcodec's records rows: no column headers, baseOffset"):
        rebuilt(table, tmp_path)


def test_tables_that_are_not_there(tmp_path):
    with pytest.raises(TableError, match=r"no such table"):
        open_table(str(tmp_path / "nothing"))
    name, uri = write_table("iceberg", records_table(SAMPLES / "orders-1"), tmp_path)
    with pytest.raises(TableError, match=r"kafka\.other: not in the catalog 'kcodec' at sqlite"):
        open_table("kafka.other", uri)
    with pytest.raises(TableError, match=r"kafka\.records: not in the catalog 'elsewhere'"):
        open_table(name, uri, "elsewhere")


def test_a_pipeline_dest_is_found_by_its_catalog_file(tmp_path):
    """``kcodec pipeline --table-format iceberg`` leaves DEST/catalog.db holding ``kcodec.records``: DEST alone
    names that table (a Delta DEST: its ``records`` folder)."""
    from pyiceberg.catalog.sql import SqlCatalog

    table = records_table(SAMPLES / "orders-1")
    catalog = SqlCatalog("kcodec", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("kcodec")
    catalog.create_table("kcodec.records", schema=table.schema).append(table)
    reports, _ = rebuild(open_table(str(tmp_path)), tmp_path / "restored")
    assert [r.records for r in reports] == [table.num_rows]


def test_a_missing_library_names_its_extra(tmp_path, monkeypatch):
    path, _ = write_table("delta", records_table(SAMPLES / "orders-1"), tmp_path)
    monkeypatch.setitem(sys.modules, "deltalake", None)
    with pytest.raises(TableError, match=r"needs deltalake \(the delta extra\): pip install 'kcodec\[delta\]'$"):
        open_table(path)


def test_an_output_that_holds_segments_is_refused(tmp_path):
    out = tmp_path / "out" / "orders-1"
    shutil.copytree(SAMPLES / "orders-1", out)
    with pytest.raises(TableError, match=r"orders-1 already holds segments"):
        rebuilt(records_table(SAMPLES / "orders-1"), tmp_path)


def test_an_iceberg_metadata_file_without_its_catalog(tmp_path):
    """A table's metadata JSON alone (what a backup of the warehouse keeps) is enough."""
    from pyiceberg.catalog import load_catalog

    name, uri = write_table("iceberg", records_table(SAMPLES / "orders-0"), tmp_path / "lake")
    metadata = load_catalog("kcodec", uri=uri).load_table(name).metadata_location
    assert metadata.endswith(".metadata.json")
    (report,), lacking = rebuild(open_table(metadata), tmp_path / "out")
    assert lacking == [] and report.segments_identical and report.records == 602
    assert logs(tmp_path / "out") == {k: v for k, v in logs(SAMPLES).items() if k.startswith("orders-0/")}


def test_a_table_with_some_of_the_exact_columns_uses_them(tmp_path):
    """Without storedTimestampMs only the LogAppendTime batch loses its bytes, and the CRC check says so."""
    (report,), lacking = rebuilt(records_table(SAMPLES / "orders-1", drop=("storedTimestampMs",)), tmp_path)
    assert lacking == ["storedTimestampMs"]
    assert (report.identical, report.reencoded, report.unchecked) == (9, 1, 0)
    assert report.moved == 350 and not report.segments_identical  # the batch after the LogAppendTime one


class Killed(BaseException):
    """Stands for kill -9 at a step of the rebuild."""


def test_a_rebuild_killed_before_its_commit_leaves_nothing(tmp_path, monkeypatch):
    built = []
    real = from_table.rebuild_partition

    def dies_at_the_third(*args):
        if len(built) == 2:
            raise Killed
        built.append(args[1])
        return real(*args)

    monkeypatch.setattr(from_table, "rebuild_partition", dies_at_the_third)
    with pytest.raises(Killed):
        rebuilt(records_table(SAMPLES), tmp_path)
    assert built == ["clicks", "legacy"] and list((tmp_path / "out").iterdir()) == []


def test_a_rebuild_killed_while_publishing_is_finished_by_the_next_run(tmp_path, monkeypatch):
    from kcodec.log import commit

    def step(name: str) -> None:
        if name == "legacy-0 moved in":
            raise Killed

    monkeypatch.setattr(commit, "_after_step", step)
    table = records_table(SAMPLES)
    with pytest.raises(Killed):
        rebuilt(table, tmp_path)
    monkeypatch.setattr(commit, "_after_step", lambda name: None)
    # the commit record was written: the next run into OUT publishes the rest before anything else
    with pytest.raises(TableError, match="already holds segments"):
        rebuild(open_table(str(tmp_path / "table" / "records")), tmp_path / "out")
    assert logs(tmp_path / "out") == logs(SAMPLES)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["clicks-0", "legacy-0", "orders-0", "orders-1"]
