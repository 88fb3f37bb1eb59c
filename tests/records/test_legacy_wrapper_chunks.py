"""A v0/v1 compressed wrapper of very many inner messages is read a chunk at a time, as a v2 batch of very
many records is (:mod:`kcodec.records.chunked`): every inner message's magic, fields and CRC are checked
once when the wrapper is decoded, and its records are a ChunkedRecords rather than one Record each held at
once. Both backends give the same records, and the same error (kind, position, field) for damage past the
first chunk as for the same damage in a small wrapper."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zlib

import pytest

from kcodec.records.chunked import CHUNK, CHUNKED_RECORD_COUNT
from kcodec.runtime.compression import CODEC_IDS, compress
from tests.helpers.bombs import LEGACY_MESSAGE_SET_ENTRY, legacy_message_set, legacy_wrapper

MANY = CHUNKED_RECORD_COUNT + 10
FEW = 10
MAGIC = 12 + 4  # an inner entry's magic byte: after offset, size and crc


def _bad_magic(count: int, at: int) -> bytes:
    inner = legacy_message_set(count, valid_crc=True)
    inner[at * LEGACY_MESSAGE_SET_ENTRY + MAGIC] = 7
    return legacy_wrapper(inner, count - 1)


def _bad_size(count: int, at: int) -> bytes:
    inner = legacy_message_set(count, valid_crc=True)
    struct.pack_into(">i", inner, at * LEGACY_MESSAGE_SET_ENTRY + 8, 3)
    return legacy_wrapper(inner, count - 1)


def _v0_wrapper(count: int) -> bytes:
    """A v0 gzip wrapper at offset ``count - 1`` of ``count`` v0 messages (null key and value) at absolute
    offsets 0..count-1, every CRC right (Kafka's LegacyRecord layout, magic 0)."""
    body = struct.pack(">bbii", 0, 0, -1, -1)
    message = struct.pack(">I", zlib.crc32(body)) + body
    inner = b"".join(struct.pack(">qi", i, len(message)) + message for i in range(count))
    value = compress("gzip", inner)
    body = struct.pack(">bbi", 0, CODEC_IDS["gzip"], -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", count - 1, len(wrapper)) + wrapper


def _cases(count: int, at: int) -> dict[str, bytes]:
    return {
        "v0": _v0_wrapper(count),
        "sound": legacy_wrapper(legacy_message_set(count, valid_crc=True), count - 1),
        "bad crcs": legacy_wrapper(legacy_message_set(count), count - 1),  # read with verify_crc=False
        "bad crcs checked": legacy_wrapper(legacy_message_set(count), count - 1),
        "bad magic": _bad_magic(count, at),
        "bad size": _bad_size(count, at),
        "wrapper offset below the last inner": legacy_wrapper(legacy_message_set(count, valid_crc=True), count - 2),
    }


# in a child per backend: the compiled kernel is chosen at import
SCRIPT = """
import hashlib, json, sys
from kcodec.errors import DecodeError
from kcodec.records.reader import read_batches
out = {}
for name, path in json.loads(sys.argv[1]).items():
    data = open(path, "rb").read()
    try:
        (batch,) = read_batches(data, strict=True, verify_crc=not name.endswith("bad crcs"))
        recs = batch.records
        out[name] = [type(recs).__name__, len(recs), batch.base_offset, batch.last_offset,
                     [r.offset for r in recs] == list(range(len(recs))), sum(r.crc_valid for r in recs),
                     recs[-1].offset, recs[min(len(recs) - 1, CHUNK + 1)].timestamp_type.name,
                     hashlib.sha256(repr(list(recs)).encode()).hexdigest()]
    except DecodeError as exc:
        out[name] = [exc.kind, exc.position, exc.field, str(exc)]
print(json.dumps(out))
""".replace("CHUNK", str(CHUNK))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("wrappers")
    paths = {}
    for size, count, at in (("many", MANY, MANY - 3), ("few", FEW, FEW - 3)):
        for name, data in _cases(count, at).items():
            paths[f"{size} {name}"] = str(folder / f"{size}-{name}.log".replace(" ", "-"))
            (folder / paths[f"{size} {name}"]).write_bytes(data)
    got = {}
    for backend in ("python", "c"):
        env = dict(os.environ, KCODEC_BACKEND=backend)
        run = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(paths)], env=env, capture_output=True, text=True)
        if backend == "c" and run.returncode and "compiled kernel is not available" in run.stderr:
            continue
        assert run.returncode == 0, run.stderr
        got[backend] = json.loads(run.stdout)
    return got


def _same(outcomes: dict, key: str) -> list:
    seen = {json.dumps(found[key]) for found in outcomes.values()}
    assert len(seen) == 1, f"the backends disagree on {key}: {seen}"
    return outcomes["python"][key]


@pytest.mark.parametrize("name", ["sound", "bad crcs", "v0"])
def test_many_inner_messages_are_chunked_records_with_every_offset(outcomes, name: str) -> None:
    kind, n, base, last, consecutive, crc_valid, last_offset, ts_type, _ = _same(outcomes, f"many {name}")
    assert (kind, n, base, last, consecutive, last_offset) == ("ChunkedRecords", MANY, 0, MANY - 1, True, MANY - 1)
    assert crc_valid == (0 if name == "bad crcs" else MANY)  # each inner CRC checked, past the first chunk too
    assert ts_type == ("NO_TIMESTAMP_TYPE" if name == "v0" else "CREATE_TIME")
    few = _same(outcomes, f"few {name}")
    assert few[0] == "list" and few[1:5] == [FEW, 0, FEW - 1, True]


@pytest.mark.parametrize(
    "name, error, many_at, few_at",
    [
        ("bad magic", "magic", MANY - 3, FEW - 3),
        ("bad size", "length", MANY - 3, FEW - 3),
        ("bad crcs checked", "crc", 0, 0),
        ("wrapper offset below the last inner", "corrupt", MANY - 1, FEW - 1),
    ],
)
def test_damage_in_many_inner_messages_is_the_error_a_small_wrapper_gives(outcomes, name, error, many_at, few_at):
    kind, position, field, message = _same(outcomes, f"many {name}")
    few_kind, few_position, few_field, few_message = _same(outcomes, f"few {name}")
    assert kind == few_kind == error
    assert field == few_field.replace(f"[{few_at}]", f"[{many_at}]") and f"[{many_at}]" in field, (field, few_field)
    assert position == few_position  # the wrapper's value; the message says where in the decompressed stream
    assert _in_stream(message) - _in_stream(few_message) == (many_at - few_at) * LEGACY_MESSAGE_SET_ENTRY, message


def _in_stream(message: str) -> int:
    """The position in the decompressed stream an error message names."""
    return int(re.search(r"at byte (\d+) of the decompressed", message).group(1))
