"""`kcodec convert --from 0.7`: a 0.7 partition (byte offsets) becomes a partition with logical offsets, an
offset translation table and, from 0.7's ZooKeeper consumer positions, `__consumer_offsets` commits.
The migrated log is read back by kafka-python (nobody here wrote it) as well as by kcodec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.errors import KcodecError
from kcodec.internal_topics.commits import java_string_hash, offsets_partition_for
from kcodec.internal_topics.registry import decode_internal
from kcodec.records.kafka07 import encode_kafka07
from kcodec.records.reader import read_batches
from kcodec.tools.migrate07 import read_consumer_positions


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def partition(tmp_path: Path) -> Path:
    """clicks-0 on 0.7 broker 3: entries at byte offsets 0, 15 (plain), 30 (gzip x3), then 86 (snappy), and a
    torn write 0.7's recovery drops."""
    part = tmp_path / "clicks-0"
    part.mkdir()
    first = encode_kafka07([b"hello", b"world"]) + encode_kafka07([b"x", b"y", b"z"], compression="gzip")
    (part / "00000000000000000000.kafka").write_bytes(first)
    second = encode_kafka07([b"more"], compression="snappy") + encode_kafka07([b"torn"])[:7]
    (part / f"{len(first):020d}.kafka").write_bytes(second)
    return part


ZK = """# exported from ZooKeeper: path value
/consumers/analytics/offsets/clicks/3-0 30
/consumers/billing/offsets/clicks/3-0=132
/consumers/other/offsets/views/3-0 0
"""


def _kafka_python_values(path: Path) -> list[tuple[int, bytes]]:
    from kafka.record import MemoryRecords

    records = MemoryRecords(path.read_bytes())
    out = []
    while records.has_next():
        batch = records.next_batch()
        out += [(r.offset, r.value) for r in batch]
    return out


@pytest.mark.parametrize("magic", [1, 2])
def test_a_0_7_partition_migrates_with_its_table_and_commits(tmp_path, capsys, magic):
    part = partition(tmp_path)
    (tmp_path / "zk.txt").write_text(ZK)
    out, offsets = tmp_path / "clicks-0-v2", tmp_path / "offsets"
    code, stdout, err = run(
        capsys,
        "convert", "--from", "0.7", str(part), str(out), "--magic", str(magic),
        "--consumer-offsets", str(tmp_path / "zk.txt"), "--offsets-dir", str(offsets),
        "--commit-timestamp", "1700000000000", "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(stdout)
    codecs = ["none", "gzip", "snappy"] if magic == 2 else ["none", "none", "gzip", "snappy"]  # v1: plain entries
    assert (report["entries"], report["records"], report["batches"], report["droppedTailBytes"]) == (
        4,
        6,
        len(codecs),
        7,
    )
    log = out / "00000000000000000000.log"
    expected = [(0, b"hello"), (1, b"world"), (2, b"x"), (3, b"y"), (4, b"z"), (5, b"more")]
    assert _kafka_python_values(log) == expected
    batches = list(read_batches(log))
    assert [b.compression for b in batches] == codecs  # each 0.7 set keeps its codec
    assert [(r.offset, r.key, r.value) for b in batches for r in b.records] == [(o, None, v) for o, v in expected]
    table = (tmp_path / "clicks-0-v2.offsets.csv").read_text().splitlines()
    assert table == ["byte_offset,offset,messages", "0,0,1", "15,1,1", "30,2,3", "86,5,1", "132,6,0"]
    assert report["commits"] == [
        {"group": "analytics", "byteOffset": 30, "offset": 2, "offsetsPartition": offsets_partition_for("analytics")},
        {"group": "billing", "byteOffset": 132, "offset": 6, "offsetsPartition": offsets_partition_for("billing")},
    ]
    committed = {}
    for group in ("analytics", "billing"):
        seg = offsets / f"__consumer_offsets-{offsets_partition_for(group)}" / "00000000000000000000.log"
        for batch in read_batches(seg):
            for r in batch.records:
                rec = decode_internal("consumer_offsets", r.key, r.value)
                key, value = rec.key.value, rec.value.value
                committed[key.group] = (key.topic, key.partition, value.offset, value.commit_timestamp)
    assert committed == {"analytics": ("clicks", 0, 2, 1700000000000), "billing": ("clicks", 0, 6, 1700000000000)}


def test_one_codec_for_every_batch_and_a_new_topic_name(tmp_path, capsys):
    part = partition(tmp_path)
    (tmp_path / "zk.json").write_text(json.dumps({"/consumers/g/offsets/clicks/3-0": "86"}))
    out = tmp_path / "new"
    code, _, err = run(
        capsys,
        "convert", "--from", "0.7", str(part), str(out), "--magic", "2", "--compression", "zstd",
        "--consumer-offsets", str(tmp_path / "zk.json"), "--offsets-dir", str(tmp_path / "o"),
        "--topic", "clicks-v2", "--partition", "7", "--translation-table", str(tmp_path / "t.csv"),
    )  # fmt: skip
    assert code == 0, err
    assert {b.compression for b in read_batches(out / "00000000000000000000.log")} == {"zstd"}
    seg = tmp_path / "o" / f"__consumer_offsets-{offsets_partition_for('g')}" / "00000000000000000000.log"
    (batch,) = read_batches(seg)
    rec = decode_internal("consumer_offsets", batch.records[0].key, batch.records[0].value)
    assert (rec.key.value.topic, rec.key.value.partition, rec.value.value.offset) == ("clicks-v2", 7, 5)


def test_a_position_inside_an_entry_writes_nothing(tmp_path, capsys):
    part = partition(tmp_path)
    (tmp_path / "zk.txt").write_text("/consumers/bad/offsets/clicks/3-0 31\n")
    out = tmp_path / "out"
    code, _, err = run(
        capsys, "convert", "--from", "0.7", str(part), str(out), "--magic", "2",
        "--consumer-offsets", str(tmp_path / "zk.txt"), "--offsets-dir", str(tmp_path / "o"),
    )  # fmt: skip
    assert code == 3
    assert "group bad: position 31 of clicks-0 (broker 3) is not where a message of the migrated log starts" in err
    assert not out.exists() and not (tmp_path / "o").exists() and not (tmp_path / "out.offsets.csv").exists()


def test_positions_of_two_brokers_need_broker(tmp_path, capsys):
    part = partition(tmp_path)
    (tmp_path / "zk.txt").write_text("/consumers/a/offsets/clicks/3-0 0\n/consumers/a/offsets/clicks/4-0 15\n")
    argv = ["convert", "--from", "0.7", str(part), str(tmp_path / "out"), "--magic", "2"]
    argv += ["--consumer-offsets", str(tmp_path / "zk.txt"), "--offsets-dir", str(tmp_path / "o")]
    code, _, err = run(capsys, *argv)
    assert code == 3 and "on brokers [3, 4]: say which broker's log this is (--broker)" in err
    code, out, err = run(capsys, *argv, "--broker", "4")
    assert code == 0 and "committed a: byte offset 15 -> offset 1" in out


def test_bad_positions_files_and_usage(tmp_path, capsys):
    bad = tmp_path / "zk.txt"
    bad.write_text("/consumers/g/offsets/t/0 12\n")
    with pytest.raises(KcodecError, match=r"line 1: '/consumers/g/offsets/t/0' is not /consumers/<group>"):
        read_consumer_positions(bad)
    bad.write_text("/consumers/g/offsets/t/1-0 -3\n")
    with pytest.raises(KcodecError, match="is not a byte offset"):
        read_consumer_positions(bad)
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "convert", "--from", "0.7", str(tmp_path / "empty"), str(tmp_path / "o"), "--magic", "2")
    assert code == 2 and "not a Kafka 0.7 partition directory" in err
    code, _, err = run(capsys, "convert", str(bad), str(tmp_path / "x.log"), "--magic", "2", "--broker", "1")
    assert code == 2 and "--broker applies to --from 0.7" in err


def test_the_coordinator_partition_is_javas_string_hash():
    assert java_string_hash("hello") == 99162322  # "hello".hashCode() in Java
    assert java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE: abs() is & 0x7fffffff
    assert offsets_partition_for("polygenelubricants") == 0


def _log_dir(tmp_path: Path) -> Path:
    """One 0.7 broker's log.dir: clicks-0 (as above) and clicks-1."""
    logs = tmp_path / "kafka-logs"
    logs.mkdir()
    partition(logs)
    (logs / "clicks-1").mkdir()
    (logs / "clicks-1" / "00000000000000000000.kafka").write_bytes(encode_kafka07([b"p", b"q"]))
    return logs


def test_a_whole_log_dir_migrates_with_a_partition_mapping(tmp_path, capsys):
    logs = _log_dir(tmp_path)
    (tmp_path / "zk.txt").write_text("/consumers/g/offsets/clicks/3-0 30\n/consumers/g/offsets/clicks/3-1 11\n")
    out = tmp_path / "new-logs"
    code, stdout, err = run(
        capsys, "convert", "--from", "0.7", str(logs), str(out), "--magic", "2", "--map", "clicks-1=clicks-5",
        "--consumer-offsets", str(tmp_path / "zk.txt"), "--offsets-dir", str(tmp_path / "o"), "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(stdout)
    assert [p["output"] for p in report["partitions"]] == [str(out / "clicks-0"), str(out / "clicks-5")]
    assert sorted(p.name for p in out.iterdir()) == ["clicks-0", "clicks-5"]
    assert (tmp_path / "new-logs.offsets" / "clicks-5.csv").read_text().splitlines() == [
        "byte_offset,offset,messages",
        "0,0,1",
        "11,1,1",
        "22,2,0",
    ]
    assert [(c["offset"], c["byteOffset"]) for c in report["commits"]] == [(2, 30), (1, 11)]
    seg = tmp_path / "o" / f"__consumer_offsets-{offsets_partition_for('g')}" / "00000000000000000000.log"
    keys = [decode_internal("consumer_offsets", r.key, r.value).key.value for b in read_batches(seg) for r in b.records]
    assert [(k.topic, k.partition) for k in keys] == [("clicks", 0), ("clicks", 5)]


def test_damage_in_one_partition_leaves_no_log_dir_behind(tmp_path, capsys):
    logs = _log_dir(tmp_path)
    seg = logs / "clicks-1" / "00000000000000000000.kafka"
    seg.write_bytes(seg.read_bytes()[:-1] + b"!")  # a bad CRC: 0.7's recovery would truncate there
    out = tmp_path / "new-logs"
    code, _, err = run(capsys, "convert", "--from", "0.7", str(logs), str(out), "--magic", "2")
    assert code == 3 and "Record is corrupt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kafka-logs"]  # no output, tables or staging left
    code, _, err = run(capsys, "convert", "--from", "0.7", str(logs), str(out), "--magic", "2", "--map", "x-0=1")
    assert code == 3 and "no 0.7 partition x-0 to map" in err
    code, _, err = run(capsys, "convert", "--from", "0.7", str(logs), str(out), "--magic", "2", "--map", "nonsense")
    assert code == 2 and "expected OLD=NEW" in err
