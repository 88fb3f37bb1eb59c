"""The source over a Kafka 0.7 partition: rows as ``kcodec dump --json`` reads the same segments, with the
logical offsets of ``kcodec convert --from 0.7``'s translation table; what cannot apply is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.records.kafka07 import encode_kafka07
from kcodec.spark.options import OptionError
from kcodec.spark.planning import kafka07_dirs
from kcodec.tools.migrate07 import translation_table

FORMAT = "kafka-segments"


def _partition(tmp_path: Path) -> Path:
    """clicks-3: a magic-0 and a magic-1 message, a gzip set of three; then a snappy set and a torn write."""
    part = tmp_path / "clicks-3"
    part.mkdir()
    first = (
        encode_kafka07([b"hello"], magic=0)
        + encode_kafka07([b"world"])
        + encode_kafka07([b"x", b"y", b"z"], compression="gzip")
    )
    (part / "00000000000000000000.kafka").write_bytes(first)
    second = encode_kafka07([b"more", b"last"], compression="snappy") + encode_kafka07([b"torn"])[:7]
    (part / f"{len(first):020d}.kafka").write_bytes(second)
    return part


def _dumped(part: Path, capsys) -> list[dict]:
    """One dict per message a consumer sees, from ``kcodec dump --json`` of the directory."""
    capsys.readouterr()
    assert main(["dump", "--json", "--bytes-encoding", "utf8", str(part)]) == 0
    out = []
    for line in capsys.readouterr().out.splitlines():
        entry = json.loads(line)
        if entry.get("partialEntry"):
            continue
        for m in entry.get("messages") or [entry]:
            out.append({**m, "wrapper": entry})
    return out


def _read(spark, path, **options):
    reader = spark.read.format(FORMAT)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(str(path))


def test_a_0_7_partition_reads_as_dump_shows_it_with_logical_offsets(spark, tmp_path, capsys):
    part = _partition(tmp_path)
    df = _read(spark, tmp_path)  # a broker's log directory holding the partition
    names = [f.name for f in df.schema.fields]
    assert names[-2:] == ["byteOffset", "nextByteOffset"]
    rows = sorted(df.collect(), key=lambda r: r.offset)
    dumped = _dumped(part, capsys)
    table = translation_table(part)  # what convert --from 0.7 numbers the messages
    logical = [table.logical(m["wrapper"]["offset"]) + m.get("inner", 0) for m in dumped]
    assert len(rows) == len(dumped) == 7
    got = [
        (r.topic, r.partition, r.offset, r.byteOffset, r.nextByteOffset, r.value.decode(), r.magic, r.compression)
        + (r.batchPosition, Path(r.segment).name, r.baseOffset, r.crcValid)
        for r in rows
    ]
    want = [
        ("clicks", 3, n, m["offset"], m["nextOffset"], m["payload"], m["wrapper"]["magic"], m["wrapper"]["compression"])
        + (m["wrapper"]["position"], Path(m["wrapper"]["file"]).name, table.logical(m["wrapper"]["offset"]), True)
        for n, m in zip(logical, dumped)
    ]  # fmt: skip
    assert got == want
    assert logical == list(range(7))
    assert {(r.key, r.timestamp, r.timestampType, r.headers, r.producerId, r.isControl) for r in rows} == {
        (None, None, -1, None, -1, False)
    }


def test_what_cannot_apply_to_0_7_is_refused_and_damage_follows_on_corrupt(spark, tmp_path):
    part = _partition(tmp_path)
    for option, value in (("startingOffset", 2), ("isolationLevel", "read_committed"), ("view", "batches")):
        with pytest.raises(Exception, match=f"Kafka 0.7 log .*{option}.* cannot apply") as info:
            _read(spark, part, **{option: value})
        assert "\n" not in str(info.value).strip()
    with pytest.raises(Exception, match="Kafka 0.7 log, which is not streamed"):
        spark.readStream.format(FORMAT).load(str(part))
    first = part / "00000000000000000000.kafka"
    data = bytearray(first.read_bytes())
    second = len(encode_kafka07([b"hello"], magic=0))  # where the magic-1 entry starts; its payload at +10
    data[second + 10] ^= 0x01  # its CRC no longer holds
    first.write_bytes(bytes(data))
    with pytest.raises(Exception, match=r"00000000000000000000\.kafka: Record is corrupt .*at byte 20, field crc"):
        _read(spark, part).collect()
    # skip: the rest of the damaged segment is left out, the next segment is read
    kept = sorted((r.offset, r.byteOffset, r.value) for r in _read(spark, part, onCorrupt="skip").collect())
    base = len(data)
    assert kept == [(0, 0, b"hello"), (1, base, b"more"), (2, base, b"last")]


def test_which_paths_read_as_0_7(tmp_path, samples):
    part = _partition(tmp_path)
    assert kafka07_dirs(str(part)) == kafka07_dirs(str(tmp_path)) == [str(part)]
    assert kafka07_dirs(str(samples)) is None
    with pytest.raises(OptionError, match="is a Kafka 0.7 segment: load its partition directory"):
        kafka07_dirs(str(part / "00000000000000000000.kafka"))
    (tmp_path / "orders-1").symlink_to(samples / "orders-1")
    with pytest.raises(OptionError, match="holds Kafka 0.7 partitions .clicks-3. and later ones .orders-1."):
        kafka07_dirs(str(tmp_path))
