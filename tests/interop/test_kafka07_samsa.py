"""Kafka 0.7 against samsa 0.3.11, a 0.7 client nobody here wrote (converted from Python 2 by lib2to3 in a
fixture: tests/helpers/samsa07.py): samsa encodes messages kcodec decodes, samsa decodes segments kcodec
writes, and compressed sets are samsa-encoded inner sets compressed by gzip and by python-snappy raw blocks
in snappy-java's xerial framing. A samsa-made partition then dumps, verifies and migrates to v2 with its
translation table and consumer offsets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.internal_topics.commits import offsets_partition_for
from kcodec.internal_topics.registry import decode_internal
from kcodec.log.kafka07 import Kafka07Partition
from kcodec.records.kafka07 import encode_kafka07, iter_kafka07_messages, read_kafka07
from kcodec.records.reader import read_batches
from tests.helpers.samsa07 import (
    load_samsa,
    samsa_decode,
    samsa_entries,
    samsa_wrapper,
    xerial_compress,
    xerial_decompress,
)

PAYLOADS = [b"hello", b"", "caf\u00e9 \u2615".encode(), bytes(range(256)) * 3, b"x" * 70000]
GZIP, SNAPPY = 1, 2  # samsa's COMPRESSION_TYPE_GZIP / _SNAPPY


@pytest.fixture(scope="module")
def samsa(tmp_path_factory):
    client = load_samsa(tmp_path_factory.mktemp("samsa"))
    if isinstance(client, str):
        pytest.skip(client)
    return client


@pytest.mark.parametrize("version", [0, 1])
def test_kcodec_reads_what_samsa_encodes(samsa, version):
    data = samsa_entries(samsa, PAYLOADS, version)
    ours = list(iter_kafka07_messages(data, base_offset=1000))
    theirs = samsa_decode(samsa, data, 1000)
    assert [m.payload for m in ours] == PAYLOADS == [t[2] for t in theirs]
    assert [(m.offset, m.next_offset) for m in ours] == [(t[0], t[1]) for t in theirs]
    assert all(m.magic == version and m.crc_valid for m in ours) and all(t[3] for t in theirs)


@pytest.mark.parametrize("version", [0, 1])
def test_samsa_reads_what_kcodec_writes(samsa, version):
    data = encode_kafka07(PAYLOADS, magic=version)
    assert data == samsa_entries(samsa, PAYLOADS, version)  # byte for byte
    theirs = samsa_decode(samsa, data, 0)
    assert [t[2] for t in theirs] == PAYLOADS and all(t[3] for t in theirs)


@pytest.mark.parametrize(("codec", "compress"), [("gzip", gzip.compress), ("snappy", xerial_compress)])
def test_kcodec_reads_samsa_sets_compressed_by_gzip_and_xerial_snappy(samsa, codec, compress):
    inner = samsa_entries(samsa, PAYLOADS)
    wrapper = samsa_wrapper(samsa, GZIP if codec == "gzip" else SNAPPY, compress(inner))
    data = samsa_entries(samsa, [b"before"]) + wrapper + samsa_entries(samsa, [b"after"])
    entries = list(read_kafka07(data, base_offset=500))
    assert [e.message.compression for e in entries] == ["none", codec, "none"]
    assert [m.payload for m in entries[1].deep()] == PAYLOADS
    start, after = 500 + 16, 500 + 16 + len(wrapper)
    assert [m.next_offset for m in entries[1].deep()] == [start] * (len(PAYLOADS) - 1) + [after]
    # samsa reads the wrapper shallowly (as 0.7's fetch did): one message at the same offsets, a valid CRC
    shallow = samsa_decode(samsa, data, 500)[1]
    assert (shallow[0], shallow[1], shallow[3], shallow[4]) == (start, after, True, GZIP if codec == "gzip" else SNAPPY)


@pytest.mark.parametrize(("codec", "decompress"), [("gzip", gzip.decompress), ("snappy", xerial_decompress)])
def test_samsa_reads_the_sets_kcodec_compresses(samsa, codec, decompress):
    data = encode_kafka07(PAYLOADS, compression=codec)
    ((offset, next_offset, stored, valid, code),) = samsa_decode(samsa, data, 0)
    assert (offset, next_offset, valid, code) == (0, len(data), True, GZIP if codec == "gzip" else SNAPPY)
    inner = decompress(stored)
    assert [t[2] for t in samsa_decode(samsa, inner, 0)] == PAYLOADS


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_samsa_made_partition_dumps_verifies_and_migrates(samsa, tmp_path, capsys):
    part = tmp_path / "events-0"
    part.mkdir()
    first = samsa_entries(samsa, [b"a", b"b"]) + samsa_wrapper(
        samsa, GZIP, gzip.compress(samsa_entries(samsa, [b"c", b"d"]))
    )
    (part / "00000000000000000000.kafka").write_bytes(first)
    second = samsa_wrapper(samsa, SNAPPY, xerial_compress(samsa_entries(samsa, [b"e"]))) + samsa_entries(samsa, [b"f"])
    (part / f"{len(first):020d}.kafka").write_bytes(second)
    log_end = len(first) + len(second)

    code, out, _ = _run(capsys, "dump", str(part), "--deep-iteration", "--json")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [m["payload"] for e in lines for m in e.get("messages", [e])] == [bytes([c]).hex() for c in b"abcdef"]
    assert _run(capsys, "verify", str(part))[0] == 0

    positions = tmp_path / "zk.txt"  # group g1 stopped after the gzip set, g2 read everything
    positions.write_text(f"/consumers/g1/offsets/events/0-0 {len(first)}\n/consumers/g2/offsets/events/0-0 {log_end}\n")
    out_dir, offsets = tmp_path / "events-0-v2", tmp_path / "offsets"
    argv = ["convert", "--from", "0.7", str(part), str(out_dir), "--magic", "2", "--json"]
    code, out, err = _run(capsys, *argv, "--consumer-offsets", str(positions), "--offsets-dir", str(offsets))
    assert code == 0, err
    assert [(c["group"], c["offset"]) for c in json.loads(out)["commits"]] == [("g1", 4), ("g2", 6)]
    values = [(r.offset, r.value) for b in read_batches(out_dir / "00000000000000000000.log") for r in b.records]
    assert values == list(enumerate([b"a", b"b", b"c", b"d", b"e", b"f"]))
    seg = offsets / f"__consumer_offsets-{offsets_partition_for('g1')}" / "00000000000000000000.log"
    record = next(iter(read_batches(seg))).records[0]
    assert decode_internal("consumer_offsets", record.key, record.value).value.value.offset == 4
    table = (tmp_path / "events-0-v2.offsets.csv").read_text().splitlines()
    assert table[-1] == f"{log_end},6,0" and f"{len(first)},4,1" in table
    assert [m.payload for m in Kafka07Partition(part).iter_messages(start_offset=len(first))] == [b"e", b"f"]


def test_samsa_reads_a_partition_kcodec_wrote_by_byte_offset(samsa, tmp_path: Path):
    data = encode_kafka07([b"one", b"two"]) + encode_kafka07([b"three"], compression="gzip")
    (tmp_path / "00000000000000004096.kafka").write_bytes(data)
    theirs = samsa_decode(samsa, (tmp_path / "00000000000000004096.kafka").read_bytes(), 4096)
    ours = [e.message for e in read_kafka07(data, base_offset=4096)]
    assert [(t[0], t[1]) for t in theirs] == [(m.offset, m.next_offset) for m in ours]
