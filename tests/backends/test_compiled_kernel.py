"""The compiled kernel (generated C) agrees exactly with the pure-Python fast
decoders: same values, and on damaged bytes the same error kind AND position;
its column decoders give the same data as its tuple decoders; and
KCODEC_BACKEND selects the backend."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.errors import KcodecError
from kcodec.fuzz.strategies import entity_strategy
from kcodec.generated import codec
from kcodec.generated.fast.kernel import compiled_kernel
from tests.helpers.schemas import SCHEMAS, as_tuple

kernel = compiled_kernel()
pytestmark = pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built here")

ENTITIES = [(e, v) for e, v in (kernel.ENTITIES if kernel else ())]
# the kernel encodes (and decodes into columns) the plain ones; CRCs, bit groups and codecs stay in Python
ENCODED = [(e, v) for e, v in ENTITIES if hasattr(kernel, f"encode_{e}_v{v}")]
LEGACY = [(e, v) for e in ("legacy_log_entry", "legacy_message") for v in (0, 1)]


def python_decoder(entity, version):
    import importlib

    mod = importlib.import_module(f"kcodec.generated.fast.{entity}")
    return mod._python[f"decode_{entity}_v{version}"]


def outcome(fn):
    try:
        return ("ok", fn())
    except KcodecError as exc:
        return ("error", exc.kind, exc.position)  # C names the field of a short read; Python says only where


def test_kernel_covers_the_hot_entities():
    assert ("record", 2) in ENTITIES and ("record_header", 2) in ENTITIES
    assert set(LEGACY) <= set(ENTITIES)  # v0/v1: CRC-32, attribute bits, compressed wrappers


def damaged(raw, data):
    """raw cut short, one byte flipped, or bytes added; the end the decoder is given."""
    i = data.draw(st.integers(0, max(0, len(raw) - 1)))
    kind = data.draw(st.sampled_from(["cut", "flip", "extend"]))
    if kind == "cut":
        bad = raw[:i]
    elif kind == "flip" and raw:
        bad = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
    else:
        bad = raw + data.draw(st.binary(max_size=8))
    return bad, data.draw(st.integers(0, len(bad)))


@pytest.mark.parametrize("entity,version", LEGACY, ids=[f"{e}-v{v}" for e, v in LEGACY])
def test_c_equals_python_with_every_option(entity, version):
    """The legacy decoders' options (verify_crc, the decompression limit, contents: decompress, leave
    stored, or refuse a second level) and damage inside compressed wrappers: same values, same errors."""
    from kcodec.generated.fast.legacy_message import INSIDE_COMPRESSED

    c_decode = getattr(kernel, f"decode_{entity}_v{version}")
    py_decode, py_array = python_decoder(entity, version)
    c_array = getattr(kernel, f"decode_{entity}_v{version}_array")
    options = [(True, 1 << 20, True), (False, 1 << 20, True), (True, 1 << 20, False), (True, 40, True)]
    options.append((True, 1 << 20, INSIDE_COMPRESSED))

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version), st.data())
    def check(value, data):
        raw = codec(entity, version).build(value)
        opts = data.draw(st.sampled_from(options))
        assert outcome(lambda: c_decode(raw, 0, len(raw), *opts)) == outcome(lambda: py_decode(raw, 0, len(raw), *opts))
        twice = raw + raw
        assert outcome(lambda: c_array(twice, 0, len(twice), 2, *opts)) == outcome(
            lambda: py_array(twice, 0, len(twice), 2, *opts)
        )
        for _ in range(3):
            bad, end = damaged(raw, data)
            assert outcome(lambda: c_decode(bad, 0, end, *opts)) == outcome(lambda: py_decode(bad, 0, end, *opts))

    check()


def test_legacy_errors_say_the_same():
    """Inside a compressed wrapper the message, field and position of an error are Python's."""
    from kcodec.runtime.compression import compress

    inner = codec("legacy_log_entry", 1).build(
        {
            "offset": 0,
            "message": {
                "attributes": {"compression": "none", "timestamp_type": "create_time", "unused": 0},
                "timestamp": 5,
                "key": b"k",
                "value": b"v",
            },
        }
    )
    inner = inner[:-1] + bytes([inner[-1] ^ 1])  # the inner CRC no longer holds
    for codec_name, codec_id in (("gzip", 1), ("snappy", 2), ("lz4", 3)):
        stored = compress(codec_name, inner, magic=1)
        body = struct.pack(">bbqii", 1, codec_id, 5, -1, len(stored)) + stored
        raw = struct.pack(">I", zlib.crc32(body)) + body
        errors = []
        for decode in (kernel.decode_legacy_message_v1, python_decoder("legacy_message", 1)[0]):
            try:
                decode(raw, 0, len(raw))
            except KcodecError as exc:
                errors.append((type(exc).__name__, exc.message, exc.field, exc.position))
        assert len(errors) == 2 and errors[0] == errors[1], errors
        assert errors[0][0] == "CrcMismatchError" and errors[0][2] == "value.message.crc"


@pytest.mark.parametrize("entity,version", ENTITIES, ids=[f"{e}-v{v}" for e, v in ENTITIES])
def test_c_equals_python(entity, version):
    c_decode = getattr(kernel, f"decode_{entity}_v{version}")
    py_decode, _ = python_decoder(entity, version)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version), st.data())
    def check(value, data):
        raw = codec(entity, version).build(value)
        assert c_decode(raw, 0, len(raw)) == py_decode(raw, 0, len(raw))
        for _ in range(3):
            i = data.draw(st.integers(0, max(0, len(raw) - 1)))
            kind = data.draw(st.sampled_from(["cut", "flip", "extend"]))
            if kind == "cut":
                bad = raw[:i]
            elif kind == "flip" and raw:
                bad = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
            else:
                bad = raw + data.draw(st.binary(max_size=8))
            end = data.draw(st.integers(0, len(bad)))
            assert outcome(lambda: c_decode(bad, 0, end)) == outcome(lambda: py_decode(bad, 0, end))

    check()


def test_array_and_projection_equal_tuples():
    values = [
        {
            "attributes": 0,
            "timestamp_delta": i * 7 - 3,
            "offset_delta": i,
            "key": None if i % 3 else b"k%d" % i,
            "value": b"v" * i,
            "headers": [{"key": "h", "value": None}, {"key": "ü", "value": b"x"}][: i % 3],
        }
        for i in range(50)
    ]
    raw = b"".join(codec("record", 2).build(v) for v in values)
    items, end = kernel.decode_record_v2_array(raw, 0, len(raw), len(values))
    py_items, py_end = python_decoder("record", 2)[1](raw, 0, len(raw), len(values))
    assert (items, end) == (py_items, py_end)
    plan = (("a", 3, 1000), ("a", 2, 5), ("c", "const"), ("f", 4), ("f", 6))
    projected, _ = kernel.project_record_v2(raw, 0, len(raw), len(values), tuple, plan)
    assert projected == [(t[3] + 1000, t[2] + 5, "const", t[4], t[6]) for t in items]


def test_columns_equal_tuples():
    pa = pytest.importorskip("pyarrow")
    values = [
        {
            "attributes": 0,
            "timestamp_delta": -i,
            "offset_delta": i,
            "key": None if i % 2 else b"k",
            "value": b"\x00" * i,
            "headers": [{"key": f"h{j}", "value": None if j else b"x"} for j in range(i % 4)],
        }
        for i in range(40)
    ]
    raw = b"".join(codec("record", 2).build(v) for v in values)
    cols, n, end = kernel.columns_record_v2(raw, 0, len(raw), len(values), {"offset_delta": 10})
    assert (n, end) == (len(values), len(raw))
    from kcodec.records.columnar import _binary, _headers, _ints

    assert _ints(pa, cols["offset_delta"], n).to_pylist() == [i + 10 for i in range(40)]
    assert _ints(pa, cols["timestamp_delta"], n).to_pylist() == [-i for i in range(40)]
    assert _binary(pa, cols["key"], n).to_pylist() == [v["key"] for v in values]
    assert _binary(pa, cols["value"], n).to_pylist() == [v["value"] for v in values]
    assert _headers(pa, cols["headers"], n).to_pylist() == [v["headers"] for v in values]


def test_column_buffers_are_handed_over_read_only():
    """The kernel's column memory reaches Python without a copy: a read-only buffer whose len() is its size."""
    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 3, "key": b"abc", "value": None, "headers": []}
    )
    cols, n, _ = kernel.columns_record_v2(raw, 0, len(raw), 1, {"offset_delta": 4})
    ints, data = cols["offset_delta"][1], cols["key"][3]
    assert type(ints).__name__ == "KernelBuffer" and len(ints) == 8 and bytes(ints) == struct.pack("<q", 7)
    assert bytes(data) == b"abc" and len(data) == 3 and memoryview(data).readonly
    with pytest.raises(TypeError):
        memoryview(data)[0] = 0
    empty = kernel.columns_record_v2(b"", 0, 0, 0)[0]["value"][3]
    assert len(empty) == 0 and bytes(empty) == b""


def test_columns_reject_damage_like_tuples():
    raw = codec("record", 2).build(
        {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": b"abc", "value": b"xyz", "headers": []}
    )
    for cut in range(len(raw)):
        a = outcome(lambda: kernel.columns_record_v2(raw[:cut], 0, cut, 1) and None)
        b = outcome(lambda: kernel.decode_record_v2_array(raw[:cut], 0, cut, 1) and None)
        assert a == b


def test_backend_switch():
    code = "from kcodec.generated.fast.kernel import active_backend; print(active_backend())"
    for setting, expected in (("python", "python"), ("c", "c"), ("auto", "c")):
        env = dict(os.environ, KCODEC_BACKEND=setting)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected
    env = dict(os.environ, KCODEC_BACKEND="fortran")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "KCODEC_BACKEND" in out.stderr


def test_reader_is_identical_with_either_backend(tmp_path):
    """The whole reader (Records, via C projections or Python) over every shared vector."""
    script = (
        "import glob, json, sys\n"
        "from kcodec.records.reader import read_batches\n"
        "out = {}\n"
        "for p in sorted(glob.glob(sys.argv[1] + '/*.bin')):\n"
        "    try:\n"
        "        out[p] = [[list(r[:7]) + [repr(r.control)] for r in b.records] + [b.record_count]\n"
        "                  for b in read_batches(p)]\n"
        "    except Exception as e:\n"
        "        out[p] = [type(e).__name__, getattr(e, 'position', None)]\n"
        "print(json.dumps(out, default=lambda b: b.hex() if isinstance(b, bytes) else str(b)))\n"
    )
    vectors = os.path.join(os.path.dirname(os.path.dirname(__file__)), "vectors", "public")
    results = []
    for setting in ("python", "c"):
        env = dict(os.environ, KCODEC_BACKEND=setting)
        results.append(
            subprocess.run(
                [sys.executable, "-c", script, vectors], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    assert results[0] == results[1]


@pytest.mark.parametrize("entity,version", ENCODED, ids=[f"{e}-v{v}" for e, v in ENCODED])
def test_c_encoder_equals_python(entity, version):
    import importlib

    mod = importlib.import_module(f"kcodec.generated.fast.{entity}")
    c_encode = getattr(kernel, f"encode_{entity}_v{version}")
    py_encode, _ = mod._python[f"encode_{entity}_v{version}"]

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        t = as_tuple(entity, version, value)
        assert c_encode(t) == py_encode(t) == codec(entity, version).build(value)

    check()


@pytest.mark.parametrize(
    "bad",
    [
        (0, 0, 0, 0, b"k", b"v", [("h", None)]),  # attributes fine; headers as tuples work
        (0, 300, 0, 0, b"k", b"v", []),  # attributes out of int8 range
        (0, 0, 0, 1 << 40, b"k", b"v", []),  # offset delta out of int32
        (0, 0, 0, 0, "text", b"v", []),  # key must be bytes
        (0, 0, 0, 0, b"k", b"v", [(None, b"x")]),  # header key cannot be null
        (0, 0, 0, 0, b"k", b"v"),  # too few fields
    ],
)
def test_c_and_python_encoders_refuse_alike(bad):
    import importlib

    from kcodec.errors import EncodeError

    mod = importlib.import_module("kcodec.generated.fast.record")
    py_encode, _ = mod._python["encode_record_v2"]

    def run(fn):
        try:
            return ("ok", fn(bad))
        except EncodeError:
            return ("error",)

    assert run(kernel.encode_record_v2) == run(py_encode)


def test_kernel_is_built_from_these_csrc_files():
    """The digest of csrc/ is printed into the kernel and the generated package; they agree here."""
    from kcodec.codegen.render import csrc_sha256
    from kcodec.generated.fast import kernel as fast_kernel

    assert kernel.CSRC_SHA256 == fast_kernel.CSRC_SHA256 == csrc_sha256()
    assert kernel.SCHEMA_SHA256 == fast_kernel.SCHEMA_SHA256


def test_kernel_from_other_csrc_is_not_used(monkeypatch):
    from kcodec.errors import BackendError
    from kcodec.generated.fast import kernel as fast_kernel
    from kcodec.runtime.kernel import select_kernel

    select = select_kernel.__wrapped__  # not the cached answer
    module, schema = fast_kernel._KERNEL_MODULE, fast_kernel.SCHEMA_SHA256
    assert select(module, schema, fast_kernel.CSRC_SHA256) is kernel
    assert select(module, schema) is kernel  # packages generated before the digest: the schema's only
    assert select(module, schema, "0" * 64) is None  # stale: the Python decoders
    monkeypatch.setenv("KCODEC_BACKEND", "c")
    with pytest.raises(BackendError, match="other C sources"):
        select(module, schema, "0" * 64)


@pytest.mark.skipif(kernel is None, reason="the compiled kernel is not built here")
def test_kernel_crc32_equals_zlib_at_every_length_and_alignment():
    """The kernel's CRC-32 (folded 16 bytes at a time from 64 bytes on, the rest 8 and then 1 at a time) is
    zlib's, whatever the length's remainder and wherever the bytes start."""
    data = os.urandom(700)
    for n in range(0, 300):
        for start in (0, 1, 7):
            assert kernel.crc32(data[start : start + n]) == zlib.crc32(data[start : start + n]), (n, start)
