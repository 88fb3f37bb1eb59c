"""`kcodec dump` takes kafka-dump-log's options and habits: --files, --max-bytes, the index options,
--skip-record-metadata as Kafka applies it, key/value decoders, files told apart by name, stdin;
and the CLI around it: `kcodec` alone prints the help, `kcodec completion` prints a script."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.log.index import read_offset_index
from tests.helpers.batches import COMMIT_BATCH, V2_BATCH
from tests.helpers.shell import bash_complete

LOG = "00000000000000000000.log"
KCODEC = Path(sys.executable).with_name("kcodec")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_segment(tmp_path: Path, capsys, lines: list[dict], *options) -> Path:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    log = tmp_path / LOG
    code, _, err = run(capsys, "write", log, "-i", src, *options)
    assert code == 0, err
    return log


def batch_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if "position:" in ln]


# ---------------------------------------------------------------------------- --files


def test_files_option_beside_positional_files(tmp_path, capsys):
    (tmp_path / LOG).write_bytes(V2_BATCH)
    other = tmp_path / "00000000000000000100.log"
    other.write_bytes(V2_BATCH)
    code, out, err = run(capsys, "dump", "--files", f"{tmp_path / LOG},{other}", tmp_path / LOG)
    assert code == 0, err
    dumping = [ln for ln in out.splitlines() if ln.startswith("Dumping")]
    # positional files first, then --files in the order given
    assert dumping == [f"Dumping {tmp_path / LOG}", f"Dumping {tmp_path / LOG}", f"Dumping {other}"]


def test_no_input_is_a_usage_error(capsys):
    code, out, err = run(capsys, "dump")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "--files" in err


# ---------------------------------------------------------------------------- --max-bytes


def test_max_bytes_reads_only_whole_batches_within_the_limit(tmp_path, capsys):
    log = tmp_path / LOG
    second = (1).to_bytes(8, "big") + V2_BATCH[8:]
    log.write_bytes(V2_BATCH + second + V2_BATCH[:30])
    code, out, _ = run(capsys, "dump", log, "--max-bytes", len(V2_BATCH) + 10)
    assert code == 0
    assert len(batch_lines(out)) == 1
    assert "invalid bytes" not in out  # as Kafka: no trailing-bytes report under --max-bytes
    _, out, _ = run(capsys, "dump", log, "--max-bytes", 2 * len(V2_BATCH))
    assert len(batch_lines(out)) == 2
    _, out, _ = run(capsys, "dump", log)
    assert out.splitlines()[-1] == f"Found 30 invalid bytes at the end of {LOG}"


def test_max_bytes_applies_to_standard_input(tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(V2_BATCH * 3)))
    code, out, _ = run(capsys, "dump", "-", "--max-bytes", 2 * len(V2_BATCH) + 5)
    assert code == 0 and len(batch_lines(out)) == 2


# ---------------------------------------------------------------------------- --skip-record-metadata


def test_skip_record_metadata_also_drops_control_record_lines(tmp_path, capsys):
    log = tmp_path / LOG
    log.write_bytes(V2_BATCH + (1).to_bytes(8, "big") + COMMIT_BATCH[8:])
    code, out, _ = run(capsys, "dump", log, "--print-data-log", "--skip-record-metadata")
    assert code == 0
    lines = out.splitlines()
    # a data record keeps only its data; a control record's line is empty, as kafka-dump-log prints it
    assert lines[3] == "| key: key payload: value"
    assert lines[5] == ""
    assert "endTxnMarker" not in out
    _, out, _ = run(capsys, "dump", log, "--deep-iteration", "--skip-record-metadata")
    assert out.splitlines()[3] == ""  # nothing left of a record line without --print-data-log


# ---------------------------------------------------------------------------- decoders


DATA = [
    {"key": "k1", "value": '{ "a" : [1, 2] }', "timestamp": 1},
    {"key": None, "value": "plain", "timestamp": 2},
]


@pytest.mark.parametrize(
    "decoder, key, value",
    [
        ("string", "k1", '{ "a" : [1, 2] }'),
        ("hex", b"k1".hex(), b'{ "a" : [1, 2] }'.hex()),
        ("base64", base64.b64encode(b"k1").decode(), base64.b64encode(b'{ "a" : [1, 2] }').decode()),
    ],
)
def test_builtin_decoders(tmp_path, capsys, decoder, key, value):
    log = write_segment(tmp_path, capsys, DATA[:1])
    code, out, _ = run(capsys, "dump", log, "--key-decoder", decoder, "--value-decoder", decoder)
    assert code == 0  # a decoder implies --print-data-log
    assert out.splitlines()[3].endswith(f"headerKeys: [] key: {key} payload: {value}")


def test_json_decoder_compacts_and_names_the_offset_it_fails_at(tmp_path, capsys):
    log = write_segment(tmp_path, capsys, DATA)
    code, out, err = run(capsys, "dump", log, "--value-decoder", "json")
    assert code == 3
    assert out.splitlines()[3].endswith('key: k1 payload: {"a":[1,2]}')
    assert len(err.splitlines()) == 1
    assert "value decoder json failed on the record at offset 1" in err and "--skip-corrupt" not in err


def test_entry_point_decoder(tmp_path, capsys, monkeypatch):
    (tmp_path / "mydecoders.py").write_text(
        "def upper(b):\n    return b.decode().upper()\n\ndef broken(b):\n    raise RuntimeError('nope')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    log = write_segment(tmp_path, capsys, DATA)
    code, out, _ = run(capsys, "dump", log, "--value-decoder", "mydecoders:upper")
    assert code == 0 and out.splitlines()[4].endswith("headerKeys: [] payload: PLAIN")
    code, _, err = run(capsys, "dump", log, "--key-decoder", "mydecoders:broken")
    assert code == 3 and err.strip().endswith("key decoder mydecoders:broken failed on the record at offset 0: nope")


@pytest.mark.parametrize("spec", ["yaml", "nosuchmodule_kcodec:f", "json:nothere", "os:sep", "mod:"])
def test_bad_decoder_spec_is_a_usage_error(tmp_path, capsys, spec):
    (tmp_path / LOG).write_bytes(V2_BATCH)
    code, out, err = run(capsys, "dump", tmp_path / LOG, "--value-decoder", spec)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and spec in err


# ---------------------------------------------------------------------------- index options


@pytest.fixture
def indexed(tmp_path, capsys):
    lines = [{"key": str(i), "value": "v" * 300, "timestamp": 1000 + i} for i in range(40)]
    write_segment(tmp_path, capsys, lines, "--batch-size", "5", "--index")
    return tmp_path / "00000000000000000000.index", tmp_path / "00000000000000000000.timeindex"


def test_verify_index_only_prints_no_entries(indexed, capsys):
    code, out, err = run(capsys, "dump", *indexed, "--verify-index-only")
    assert code == 0 and err == ""
    assert out.splitlines() == [f"Dumping {indexed[0]}", f"Dumping {indexed[1]}"]
    index = indexed[0]
    first = read_offset_index(index)[0]
    data = bytearray(index.read_bytes())
    data[0:4] = (3).to_bytes(4, "big")  # the first entry now names an offset its batch does not end at
    index.write_bytes(bytes(data))
    code, out, err = run(capsys, "dump", index, "--verify-index-only")
    assert out.splitlines() == [f"Dumping {index}"]
    assert err.splitlines()[:2] == [f"Mismatches in :{index}", f"  Index offset: 3, log offset: {first.offset}"]


def test_index_sanity_check(indexed, capsys):
    index, timeindex = indexed
    code, out, _ = run(capsys, "dump", index, timeindex, "--index-sanity-check")
    assert code == 0
    assert out.splitlines() == [
        f"Dumping {index}",
        f"{index} passed sanity check.",
        f"Dumping {timeindex}",
        f"{timeindex} passed sanity check.",
    ]
    good = index.read_bytes()
    index.write_bytes(good + b"\0\0\0")  # not a multiple of the entry size
    code, out, err = run(capsys, "dump", index, "--index-sanity-check")
    assert code == 1 and "passed" not in out
    assert len(err.splitlines()) == 1 and "is corrupt, found" in err and "multiple of 8" in err
    # entries out of order in between pass, as the broker's OffsetIndex/TimeIndex.sanityCheck lets them
    index.write_bytes(good[8:16] + good[:8] + good[16:])
    code, out, _ = run(capsys, "dump", index, "--index-sanity-check")
    assert code == 0 and out.splitlines()[-1] == f"{index} passed sanity check."
    data = bytearray(timeindex.read_bytes())
    first, last = data[:8], data[-12:-4]
    data[12:20] = (0).to_bytes(8, "big")  # a timestamp going back in the middle: Kafka's check passes
    timeindex.write_bytes(bytes(data))
    code, out, _ = run(capsys, "dump", timeindex, "--index-sanity-check")
    assert code == 0 and out.splitlines()[-1] == f"{timeindex} passed sanity check."
    assert first <= last
    data[-12:-4] = (0).to_bytes(8, "big")  # last timestamp below the first
    timeindex.write_bytes(bytes(data))
    code, _, err = run(capsys, "dump", timeindex, "--index-sanity-check")
    assert code == 1 and "less than the first timestamp" in err


def test_time_index_order_is_reported_only_where_kafka_reports_it(indexed, capsys):
    """DumpLogSegments checks a time index entry's order only when its batch is found (last offset = the
    entry's offset); an entry that names no batch's last offset is reported as not found, not as out of order."""
    _, timeindex = indexed
    good = timeindex.read_bytes()
    entries = [good[i : i + 12] for i in range(0, len(good), 12)]
    older = (0).to_bytes(8, "big")
    not_found = older + (int.from_bytes(entries[1][8:], "big") - 1).to_bytes(4, "big")  # inside a batch
    timeindex.write_bytes(entries[0] + not_found + b"".join(entries[2:]))
    _, _, err = run(capsys, "dump", timeindex, "--verify-index-only")
    assert "The following indexed offsets are not found in the log." in err
    assert "out of order" not in err
    timeindex.write_bytes(entries[0] + older + entries[1][8:] + b"".join(entries[2:]))  # found, and older
    _, _, err = run(capsys, "dump", timeindex, "--verify-index-only")
    assert f"Found out of order timestamp in :{timeindex}" in err


def test_max_message_size_stops_an_index_at_a_larger_batch(indexed, capsys):
    index, _ = indexed
    code, out, err = run(capsys, "dump", index, "--max-message-size", 1000)
    assert code == 3
    assert [ln for ln in out.splitlines() if ln.startswith("offset:")] == []
    assert len(err.splitlines()) == 1 and "larger than --max-message-size 1000" in err
    code, out, _ = run(capsys, "dump", index, "--max-message-size", 100000)
    assert code == 0 and any(ln.startswith("offset:") for ln in out.splitlines())


# ---------------------------------------------------------------------------- files by name


def test_leader_epoch_checkpoint_and_partition_metadata(tmp_path, capsys):
    lec = tmp_path / "leader-epoch-checkpoint"
    lec.write_text("0\n2\n0 0\n3 120\n")
    meta = tmp_path / "partition.metadata"
    meta.write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    code, out, _ = run(capsys, "dump", lec, meta)
    assert code == 0
    assert out.splitlines() == [
        f"Dumping {lec}",
        "version: 0",
        "count: 2",
        "epoch: 0 startOffset: 0",
        "epoch: 3 startOffset: 120",
        f"Dumping {meta}",
        "version: 0",
        "topic_id: AAAAAAAAAAAAAAAAAAAAAQ",
    ]
    code, out, _ = run(capsys, "dump", "--json", lec)
    assert json.loads(out)["entries"] == [{"epoch": 0, "startOffset": 0}, {"epoch": 3, "startOffset": 120}]


@pytest.mark.parametrize(
    "name, text, where",
    [
        ("leader-epoch-checkpoint", "0\n3\n0 0\n", "line 2"),
        ("leader-epoch-checkpoint", "1\n0\n", "line 1"),
        ("leader-epoch-checkpoint", "0\n1\n0 zero\n", "line 3"),
        ("replication-offset-checkpoint", "0\n1\ntopic 0\n", "line 3"),
        ("partition.metadata", "version: 0\ntopic_id: nope\n", "line 2"),
        ("partition.metadata", "", "line 1"),
    ],
)
def test_malformed_text_files_are_refused_naming_the_line(tmp_path, capsys, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    code, _, err = run(capsys, "dump", path)
    assert code == 3 and len(err.splitlines()) == 1 and f"{name}, {where}:" in err


def test_snapshots_are_not_dumped_as_segments(tmp_path, capsys):
    """A .snapshot is a producer-state snapshot, not a log; a .checkpoint is a log with its own first line."""
    producer = tmp_path / "00000000000000000010.snapshot"
    kraft = tmp_path / "00000000000000000100-0000000001.checkpoint"
    for p in (producer, kraft):
        p.write_bytes(V2_BATCH)
    code, out, err = run(capsys, "dump", producer, kraft)
    assert code == 3 and f"{producer}: not a producer-state snapshot" in err and len(err.splitlines()) == 1
    assert out.splitlines()[:2] == [f"Dumping {kraft}", "Snapshot end offset: 100, epoch: 1"]
    assert "Log starting offset" not in out and len(batch_lines(out)) == 1


def test_unknown_file_is_ignored_as_kafka_ignores_it_unless_read_as_log(tmp_path, capsys):
    blob = tmp_path / "records.bin"
    blob.write_bytes(V2_BATCH)
    deleted = tmp_path / f"{LOG}.deleted"  # a segment the broker has scheduled for deletion
    deleted.write_bytes(V2_BATCH)
    (tmp_path / LOG).write_bytes(V2_BATCH)
    code, out, err = run(capsys, "dump", blob, deleted, tmp_path / LOG)
    assert code == 0 and len(batch_lines(out)) == 1  # the other files are still dumped
    assert out.splitlines()[:2] == [f"Dumping {blob}", f"Dumping {deleted}"]
    assert err.splitlines() == [f"Ignoring unknown file {blob}", f"Ignoring unknown file {deleted}"]
    code, out, _ = run(capsys, "dump", blob, "--as-log")
    assert code == 0 and len(batch_lines(out)) == 1


def test_kafka_decoder_class_options(tmp_path, capsys):
    """kafka-dump-log's --key-decoder-class / --value-decoder-class, with its StringDecoder class names (the
    value is optional there); a class kcodec has no decoder for is bad usage."""
    log = write_segment(tmp_path, capsys, DATA[:1])
    _, expected, _ = run(capsys, "dump", log, "--print-data-log")
    for argv in (
        ["--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder"],
        ["--key-decoder-class", "kafka.serializer.StringDecoder", "--value-decoder-class"],
        ["--key-decoder-class"],
    ):
        code, out, err = run(capsys, "dump", log, *argv)
        assert (code, out, err) == (0, expected, ""), argv
    code, out, _ = run(capsys, "dump", log, "--value-decoder-class", "hex")  # kcodec's names too
    assert code == 0 and out.splitlines()[3].endswith("payload: " + DATA[0]["value"].encode().hex())
    code, out, err = run(capsys, "dump", log, "--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "LongDecoder" in err


def test_an_undecodable_kraft_control_record_is_damage(tmp_path, capsys):
    """Kafka deserializes a LEADER_CHANGE record when it prints one, and throws when it does not decode: the
    dump stops with one line naming the record, and verify calls the file invalid."""
    from kcodec.generated import codec
    from kcodec.records.encode import encode_control_batch

    value = codec("leader_change_message", 0).build(
        {"version": 0, "leader_id": 2, "voters": [{"voter_id": 2}], "granting_voters": [{"voter_id": 2}]}
    )
    good = encode_control_batch("leader_change", value=value)
    bad = encode_control_batch("leader_change", value=value[:3], offset=1)  # cut inside the message
    (tmp_path / LOG).write_bytes(good + bad)
    code, out, err = run(capsys, "dump", tmp_path / LOG, "--deep-iteration")
    assert code == 3
    assert "LeaderChange: {" in out.splitlines()[3]
    assert len(err.splitlines()) == 1 and "LEADER_CHANGE control record at offset 1 does not decode" in err
    code, out, _ = run(capsys, "verify", tmp_path / LOG)
    assert code == 1 and "LEADER_CHANGE control record at offset 1 does not decode" in out
    (tmp_path / LOG).write_bytes(good)
    assert run(capsys, "verify", tmp_path / LOG)[0] == 0


def test_directory_without_segments_and_missing_file_are_usage_errors(tmp_path, capsys):
    for name, what in ((tmp_path, "no segments in this directory"), (tmp_path / "missing.log", "no such file")):
        code, _, err = run(capsys, "dump", name)
        assert code == 2 and err.count("\n") == 1 and err.startswith(f"kcodec dump: {name}: {what}")


# ---------------------------------------------------------------------------- stdin, through the entry point


def test_dump_stdin_through_the_installed_entry_point(tmp_path):
    done = subprocess.run(
        [str(KCODEC), "dump", "-", "--print-data-log"], input=V2_BATCH * 2, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "Dumping <stdin>" and len(batch_lines(done.stdout.decode())) == 2
    assert lines[2].endswith("key: key payload: value")
    (tmp_path / LOG).write_bytes(V2_BATCH)
    done = subprocess.run(
        [str(KCODEC), "dump", "--files", f"{tmp_path / LOG},{tmp_path / LOG}"], capture_output=True, timeout=60
    )
    assert done.returncode == 0 and len(batch_lines(done.stdout.decode())) == 2


def test_stdin_only_once(capsys):
    code, _, err = run(capsys, "dump", "-", "-")
    assert code == 2 and "only once" in err


# ---------------------------------------------------------------------------- kcodec alone, completion


def test_kcodec_alone_prints_the_help_on_stderr(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert err.startswith("usage: kcodec") and "dump" in err and "completion" in err


def test_kcodec_alone_through_the_entry_point():
    done = subprocess.run([str(KCODEC)], capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b"" and b"usage: kcodec" in done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_options_and_choices(capsys):
    code, script, _ = run(capsys, "completion", "bash")
    assert code == 0 and "complete -o filenames -F _kcodec kcodec" in script
    assert "dump" in bash_complete(script, "kcodec", "du")
    opts = bash_complete(script, "kcodec", "dump", "--ma")
    assert {"--max-bytes", "--max-message-size", "--max-decompressed-size"} <= set(opts)
    assert bash_complete(script, "kcodec", "completion", "fi") == ["fish"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(capsys, shell):
    code, script, _ = run(capsys, "completion", shell)
    assert code == 0 and "kcodec" in script and "max-bytes" in script
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed: script generated, not parsed")
    check = [shell, "-n"] if shell == "zsh" else [shell, "--no-execute"]
    done = subprocess.run([*check], input=script, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_bad_shell_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["completion", "tcsh"])
    assert exc.value.code == 2
