"""The construct backend decodes the real bytes of other Kafka implementations
(tests/vectors/public, see its README for provenance) to what their JSON says."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kcodec.errors import KcodecError
from kcodec.generated import codec

VECTORS = Path(__file__).parents[1] / "vectors" / "public"
OK = sorted(
    p.stem
    for p in VECTORS.glob("*.json")
    if json.loads(p.read_text())["expected"] == "ok" and not json.loads(p.read_text()).get("optional")
)
OPTIONAL = sorted(p.stem for p in VECTORS.glob("*.json") if json.loads(p.read_text()).get("optional"))


def hexor(b):
    return None if b is None else bytes(b).hex()


def entries(data: bytes):
    """Whole log entries back to back; a partial tail is skipped as Kafka does."""
    pos = 0
    while pos + 17 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if pos + 12 + size > len(data):
            return
        magic = data[pos + 16]
        entity = "record_batch" if magic == 2 else "legacy_log_entry"
        value = codec(entity, magic).parse(data[pos : pos + 12 + size])
        yield pos, magic, value
        pos += 12 + size


@pytest.mark.parametrize("name", OK)
def test_vector_decodes(name):
    meta = json.loads((VECTORS / f"{name}.json").read_text())
    data = (VECTORS / f"{name}.bin").read_bytes()
    got = list(entries(data))
    assert len(got) == len(meta["batches"])
    for (pos, magic, value), want in zip(got, meta["batches"]):
        assert pos == want["position"] and magic == want["magic"]
        if magic == 2:
            assert value.base_offset == want["baseOffset"] and value.crc == want["crc"]
            assert value.records_count == want["recordCount"]
            assert value.attributes.compression == want["attributes"]["compression"]
            for rec, rwant in zip(value.records, want["records"]):
                assert hexor(rec.key) == rwant["key"] and hexor(rec.value) == rwant["value"]
                assert value.base_offset + rec.offset_delta == rwant["offset"]
        else:
            m = value.message
            assert value.offset == want["offset"] and m.crc == want["crc"]
            assert m.attributes.compression == want["attributes"]["compression"]
            if "inner" in want:
                assert len(m.value) == len(want["inner"])
                for inner, iwant in zip(m.value, want["inner"]):
                    assert inner.offset == iwant["storedOffset"]
                    assert hexor(inner.message.key) == iwant["key"]
                    assert hexor(inner.message.value) == iwant["value"]
            else:
                assert hexor(m.key) == want["key"] and hexor(m.value) == want["value"]
        # the reference backend rebuilds what it parsed byte for byte when the codec is none
        if (value.attributes.compression if magic == 2 else value.message.attributes.compression) == "none":
            entity = "record_batch" if magic == 2 else "legacy_log_entry"
            assert codec(entity, magic).build(value) == data[pos : pos + len(codec(entity, magic).build(value))]


@pytest.mark.parametrize("name", OPTIONAL)
def test_optional_vectors_decode_or_fail_cleanly(name):
    """Bytes Kafka rejects but sarama accepts: a clear kcodec error or a decode, nothing else."""
    data = (VECTORS / f"{name}.bin").read_bytes()
    try:
        list(entries(data))
    except KcodecError:
        pass
