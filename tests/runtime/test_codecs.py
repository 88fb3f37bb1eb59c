"""Kafka compression framings (CompressionType and its streams), on byte strings the real Java libraries wrote."""

from __future__ import annotations

import gzip as gzip_module
import random
import struct
import types

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kcodec.errors import (
    CompressionError,
    DecompressionError,
    DecompressionLimitError,
    KcodecError,
    UnknownMagicError,
)
from kcodec.runtime.compression import (
    CODEC_IDS,
    CODECS,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    _lz4_hc,
    _xxh32,
    codec_for_id,
    compress,
    decompress,
)

PAYLOAD = bytes.fromhex("1c000000066b65790a76616c756500")  # the one-record v2 worked example's record, 15 bytes

# LZ4, gzip, snappy and zstd byte strings from the Java libraries.
LZ4_FRAME = bytes.fromhex("04224d186040820f0000801c000000066b65790a76616c75650000000000")
SNAPPY_XERIAL = bytes.fromhex("82534e41505059000000000100000001000000110f381c000000066b65790a76616c756500")
ZSTD_FRAME = bytes.fromhex("28b52ffd00587800001c000000066b65790a76616c756500010000")
GZIP_MEMBER = bytes.fromhex("1f8b08000000000000ff9361606060cb4eade42a4bcc294d65000055dc04540f000000")

COMPRESSED = ["gzip", "snappy", "lz4", "zstd"]
MAGICS = {"gzip": (0, 1, 2), "snappy": (0, 1, 2), "lz4": (0, 1, 2), "zstd": (2,)}
CODEC_MAGIC = [(c, m) for c in COMPRESSED for m in MAGICS[c]]

KIB = 1024


def _sample(kind: str, size: int, seed: int) -> bytes:
    rnd = random.Random(seed)
    if kind == "random":
        return rnd.randbytes(size)
    if kind == "zeros":
        return bytes(size)
    unit = rnd.randbytes(rnd.randint(1, 300))
    return (unit * (size // len(unit) + 1))[:size]


@st.composite
def payloads(draw, max_size: int = 200 * KIB) -> bytes:
    """Random, repetitive or zero data up to ``max_size`` (covers multi-chunk sizes)."""
    return _sample(
        draw(st.sampled_from(["random", "repetitive", "zeros"])),
        # Half small, half past the 32 KiB / 64 KiB chunk sizes.
        draw(st.one_of(st.integers(0, 4 * KIB), st.integers(32 * KIB, max_size))),
        draw(st.integers(0, 2**32 - 1)),
    )


# --- codec table --------------------------------------------------------------


def test_codec_tables():
    assert CODECS == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
    assert CODEC_IDS == {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
    assert [codec_for_id(i) for i in range(5)] == ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.mark.parametrize("bad", [5, 6, 7, -1, 8, "1", None, True, 1.0])
def test_codec_for_id_rejects_unknown(bad):
    with pytest.raises(CompressionError):
        codec_for_id(bad)


def test_codec_for_id_message_matches_java():
    with pytest.raises(CompressionError, match="Unknown compression type id: 5"):
        codec_for_id(5)


@pytest.mark.parametrize("bad", ["GZIP", "lz4hc", "", 9, None])
def test_unknown_codec_both_directions(bad):
    with pytest.raises(CompressionError):
        compress(bad, PAYLOAD)
    with pytest.raises(CompressionError):
        decompress(bad, PAYLOAD)


def test_codec_ids_accepted():
    assert decompress(3, compress(3, PAYLOAD)) == PAYLOAD


@pytest.mark.parametrize("magic", [-1, 3, None, "2"])
def test_unknown_magic(magic):
    with pytest.raises(UnknownMagicError):
        compress("gzip", PAYLOAD, magic=magic)
    with pytest.raises(UnknownMagicError):
        decompress("gzip", GZIP_MEMBER, magic=magic)


def test_default_limit_is_64_mib():
    assert DEFAULT_MAX_DECOMPRESSED_SIZE == 64 * 1024 * 1024


def test_none_passes_through():
    for wrap in (bytes, bytearray, memoryview):
        assert compress("none", wrap(PAYLOAD)) == PAYLOAD
        assert decompress("none", wrap(PAYLOAD)) == PAYLOAD
        assert type(decompress("none", wrap(PAYLOAD))) is bytes


# --- spec byte strings ----------------------------------------------------------


@pytest.mark.parametrize(
    "codec,stream", [("lz4", LZ4_FRAME), ("snappy", SNAPPY_XERIAL), ("zstd", ZSTD_FRAME), ("gzip", GZIP_MEMBER)]
)
def test_spec_streams_decompress(codec, stream):
    for wrap in (bytes, bytearray, memoryview):
        assert decompress(codec, wrap(stream)) == PAYLOAD


def test_spec_stream_lengths():
    assert (len(LZ4_FRAME), len(SNAPPY_XERIAL), len(ZSTD_FRAME), len(GZIP_MEMBER)) == (30, 37, 27, 35)


@pytest.mark.parametrize(
    "codec,stream",
    [
        ("lz4", LZ4_FRAME),
        ("snappy", SNAPPY_XERIAL),
        # Not required by Kafka, but we also reproduce the Java libraries' bytes here.
        ("zstd", ZSTD_FRAME),
        ("gzip", GZIP_MEMBER),
    ],
)
def test_compress_gives_spec_bytes(codec, stream):
    assert compress(codec, PAYLOAD) == stream
    assert compress(codec, bytearray(PAYLOAD)) == stream
    assert compress(codec, memoryview(PAYLOAD)) == stream


def test_lz4_frame_inside_v2_batch_of_spec():
    batch = bytes.fromhex(
        "00000000000000000000004f0000000002811987fe000300000000000000000000000000000000000000"
        "00ffffffffffffffffffffffffffff0000000104224d186040820f0000801c000000066b65790a76616c"
        "75650000000000"
    )
    assert batch[61:] == LZ4_FRAME
    assert decompress(codec_for_id(batch[22] & 0x07), batch[61:]) == PAYLOAD


def test_gzip_header_is_jdk17():
    out = compress("gzip", b"x" * 100_000, level=9)
    assert out[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert gzip_module.decompress(out) == b"x" * 100_000


# --- lz4 header checksum -----------------------------------------------------------


def test_xxh32_vectors():
    assert _xxh32(b"") == 0x02CC5D05
    assert _xxh32(b"a") == 0x550D7456
    assert _xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F
    assert _xxh32(b"", seed=1) != _xxh32(b"")


def test_lz4_hc_values_from_spec():
    assert _lz4_hc(b"\x60\x40") == 0x82
    assert _lz4_hc(bytes.fromhex("04224d18") + b"\x60\x40") == 0x1A
    assert _lz4_hc(b"\x70\x40") == 0xAD  # with the block-checksum flag


def test_lz4_magic0_writes_broken_hc_and_reads_back():
    out = compress("lz4", PAYLOAD, magic=0)
    assert out[:7] == bytes.fromhex("04224d1860401a")
    assert out[7:] == LZ4_FRAME[7:]
    assert decompress("lz4", out, magic=0) == PAYLOAD
    # Kafka skips HC verification for magic 0 only, so a correct HC also reads.
    assert decompress("lz4", LZ4_FRAME, magic=0) == PAYLOAD
    for magic in (1, 2):
        assert compress("lz4", PAYLOAD, magic=magic) == LZ4_FRAME
        with pytest.raises(DecompressionError, match="descriptor"):
            decompress("lz4", out, magic=magic)


def test_lz4_wrong_hc_rejected_for_magic_ge_1():
    bad = bytearray(LZ4_FRAME)
    bad[6] ^= 0xFF
    assert decompress("lz4", bad, magic=0) == PAYLOAD
    with pytest.raises(DecompressionError):
        decompress("lz4", bad, magic=1)
    with pytest.raises(DecompressionError):
        decompress("lz4", bad, magic=2)


# --- round trips ------------------------------------------------------------------


@pytest.mark.parametrize("codec,magic", CODEC_MAGIC)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=payloads())
def test_roundtrip_large(codec, magic, data):
    event("over 64 KiB (multi-chunk)" if len(data) > 64 * KIB else "up to 64 KiB")
    assert decompress(codec, compress(codec, data, magic=magic), magic=magic) == data


@pytest.mark.parametrize("codec,magic", CODEC_MAGIC)
@settings(max_examples=50, deadline=None)
@given(data=st.binary(max_size=600))
def test_roundtrip_small(codec, magic, data):
    assert decompress(codec, compress(codec, data, magic=magic), magic=magic) == data


BOUNDARY_SIZES = [
    0,
    1,
    32 * KIB - 1,
    32 * KIB,
    32 * KIB + 1,
    64 * KIB - 1,
    64 * KIB,
    64 * KIB + 1,
    128 * KIB,
    300 * KIB + 7,
]


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("size", BOUNDARY_SIZES)
@pytest.mark.parametrize("kind", ["random", "zeros"])
def test_roundtrip_chunk_boundaries(codec, size, kind):
    data = _sample(kind, size, size)
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize(
    "codec,levels", [("gzip", [-1, 1, 5, 9]), ("lz4", [1, 2, 3, 9, 12, 17]), ("zstd", [-131072, -5, 1, 3, 19, 22])]
)
def test_levels_roundtrip(codec, levels):
    data = _sample("repetitive", 150 * KIB, 7)
    for level in levels:
        assert decompress(codec, compress(codec, data, level=level)) == data


@pytest.mark.parametrize(
    "codec,level",
    [
        ("gzip", 0),
        ("gzip", 10),
        ("gzip", -2),
        ("lz4", 0),
        ("lz4", 18),
        ("zstd", 23),
        ("zstd", -131073),
        ("snappy", 1),
        ("none", 1),
        ("gzip", 1.5),
        ("lz4", True),
    ],
)
def test_bad_levels(codec, level):
    with pytest.raises(CompressionError):
        compress(codec, PAYLOAD, level=level)


def test_snappy_chunks_hold_at_most_32_kib():
    data = _sample("random", 100 * KIB, 3)
    out = compress("snappy", data)
    assert out[:16] == SNAPPY_XERIAL[:16]
    pos, sizes = 16, []
    while pos < len(out):
        (length,) = struct.unpack_from(">i", out, pos)
        sizes.append(len(cramjam.snappy.decompress_raw(out[pos + 4 : pos + 4 + length])))
        pos += 4 + length
    assert sizes == [32 * KIB, 32 * KIB, 32 * KIB, 4 * KIB]


def test_lz4_blocks_are_64_kib_and_raw_when_incompressible():
    data = _sample("random", 200 * KIB, 4)
    out = compress("lz4", data)
    pos, blocks = 7, []
    while True:
        (word,) = struct.unpack_from("<I", out, pos)
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        blocks.append((bool(word & 0x80000000), size))
        pos += 4 + size
    assert blocks == [(True, 64 * KIB)] * 3 + [(True, 8 * KIB)]
    assert out[pos:] == b"\x00\x00\x00\x00"


@pytest.mark.parametrize("level", [None, 9, 3, 4, 12, 16])
@pytest.mark.parametrize(
    "kind,size", [("zeros", 200 * KIB), ("random", 70 * KIB), ("repetitive", 300 * KIB + 1), ("zeros", 0)]
)
def test_lz4_bytes_equal_lz4_frame(level, kind, size):
    """Our frame equals lz4.frame's Kafka-style frame (fast at default, HC at 3..17)."""
    data = _sample(kind, size, size)
    expected = lz4.frame.compress(
        data,
        block_linked=False,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        content_checksum=False,
        store_size=False,
        compression_level=0 if level in (None, 9) else level,
    )
    assert expected[:7] == LZ4_FRAME[:7]
    assert compress("lz4", data, level=level) == expected


# --- reading other producers' variants -----------------------------------------------


def test_lz4_accepts_optional_frame_features():
    data = _sample("repetitive", 300 * KIB, 5)
    for kwargs in [
        dict(block_checksum=True),
        dict(content_checksum=True),
        dict(store_size=True),
        dict(block_size=lz4.frame.BLOCKSIZE_MAX4MB),
        dict(block_size=lz4.frame.BLOCKSIZE_MAX256KB, block_checksum=True, content_checksum=True, store_size=True),
    ]:
        frame = lz4.frame.compress(data, block_linked=False, **kwargs)
        assert decompress("lz4", frame) == data


def test_lz4_block_checksum_mismatch():
    frame = bytearray(lz4.frame.compress(PAYLOAD * 10, block_linked=False, block_checksum=True, store_size=False))
    frame[-5] ^= 0x01  # last byte of the block checksum, before the EndMark
    with pytest.raises(DecompressionError, match="checksum"):
        decompress("lz4", frame)


def test_lz4_dependent_blocks_rejected():
    data = _sample("repetitive", 300 * KIB, 6)
    linked = lz4.frame.compress(data, block_linked=True, block_size=lz4.frame.BLOCKSIZE_MAX64KB, store_size=False)
    assert linked[4] == 0x40
    with pytest.raises(DecompressionError, match="[Dd]ependent"):
        decompress("lz4", linked)
    # Same blocks, but the flag lies about independence: decoding the later
    # blocks alone must fail rather than produce wrong data.
    lying = bytearray(linked)
    lying[4] = 0x60
    lying[6] = _lz4_hc(bytes(lying[4:6]))
    with pytest.raises(DecompressionError):
        decompress("lz4", lying)


@pytest.mark.parametrize(
    "patch,match",
    [((4, 0x61), "reserved"), ((4, 0xA0), "version"), ((5, 0x30), "BD"), ((5, 0x41), "BD"), ((0, 0x05), "magic")],
)
def test_lz4_header_checks(patch, match):
    bad = bytearray(LZ4_FRAME)
    bad[patch[0]] = patch[1]
    if patch[0] in (4, 5):
        bad[6] = _lz4_hc(bytes(bad[4:6]))
    with pytest.raises(DecompressionError, match=match):
        decompress("lz4", bad)


def test_lz4_block_larger_than_max():
    bad = LZ4_FRAME[:7] + struct.pack("<I", 64 * KIB + 1) + bytes(64 * KIB + 1) + bytes(4)
    with pytest.raises(DecompressionError, match="exceeded max"):
        decompress("lz4", bad)


def test_snappy_reads_raw_block():
    raw = bytes(cramjam.snappy.compress_raw(PAYLOAD))
    assert raw == bytes.fromhex("0f38") + PAYLOAD
    assert decompress("snappy", raw) == PAYLOAD
    big = _sample("repetitive", 100 * KIB, 8)
    assert decompress("snappy", bytes(cramjam.snappy.compress_raw(big))) == big


def test_snappy_concatenated_streams_and_header_only():
    first, second = compress("snappy", b"hello "), compress("snappy", b"world")
    assert decompress("snappy", first + second) == b"hello world"
    assert compress("snappy", b"") == SNAPPY_XERIAL[:16]
    assert decompress("snappy", SNAPPY_XERIAL[:16]) == b""
    assert decompress("snappy", SNAPPY_XERIAL[:16] + SNAPPY_XERIAL) == PAYLOAD


@pytest.mark.parametrize(
    "stream,match",
    [
        (SNAPPY_XERIAL[:16] + struct.pack(">i", -5) + b"\x00" * 8, "chunk length"),
        (SNAPPY_XERIAL[:16] + struct.pack(">i", 100) + SNAPPY_XERIAL[20:], "past the end"),
        (SNAPPY_XERIAL[:-1], "past the end"),
        (SNAPPY_XERIAL + b"\x00\x00", "chunk length"),
        (SNAPPY_XERIAL + SNAPPY_XERIAL[:10], "header"),
        (SNAPPY_XERIAL[:8] + struct.pack(">ii", 0, 1) + SNAPPY_XERIAL[16:], "version"),
        (b"", "empty"),
    ],
)
def test_snappy_framing_errors(stream, match):
    with pytest.raises(DecompressionError, match=match):
        decompress("snappy", stream)


def test_gzip_concatenated_members_and_trailing_bytes():
    two = compress("gzip", b"hello ") + gzip_module.compress(b"world", mtime=0)
    assert decompress("gzip", two) == b"hello world"
    # JDK's GZIPInputStream ignores trailing bytes that are not a gzip member.
    assert decompress("gzip", GZIP_MEMBER + b"\x00\x00junk") == PAYLOAD
    # ... but a damaged second member is an error.
    with pytest.raises(DecompressionError):
        decompress("gzip", GZIP_MEMBER + GZIP_MEMBER[:20])


def test_zstd_concatenated_and_skippable_frames():
    other = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(b"second")
    skippable = struct.pack("<II", 0x184D2A5E, 3) + b"abc"
    assert decompress("zstd", ZSTD_FRAME + skippable + other) == PAYLOAD + b"second"


@pytest.mark.parametrize(
    "stream",
    [
        ZSTD_FRAME[:-1],
        ZSTD_FRAME[:-3],
        ZSTD_FRAME[:6],
        ZSTD_FRAME + b"\x00",
        ZSTD_FRAME + b"junkjunk",
        ZSTD_FRAME + ZSTD_FRAME[:9],
        b"",
    ],
)
def test_zstd_truncated_or_trailing_junk(stream):
    with pytest.raises(DecompressionError):
        decompress("zstd", stream)


def test_zstd_requires_magic_2():
    frame = compress("zstd", PAYLOAD)
    for magic in (0, 1):
        with pytest.raises(CompressionError, match="zstd requires magic 2"):
            compress("zstd", PAYLOAD, magic=magic)
        with pytest.raises(CompressionError, match="zstd requires magic 2"):
            decompress("zstd", frame, magic=magic)


# --- limits ---------------------------------------------------------------------------

MEGABYTE_OF_ZEROS = bytes(1_000_000)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_limit_on_megabyte_of_zeros(codec):
    stream = compress(codec, MEGABYTE_OF_ZEROS)
    with pytest.raises(DecompressionLimitError) as info:
        decompress(codec, stream, max_size=1000)
    assert codec in str(info.value) and "1000" in str(info.value)
    assert isinstance(info.value, DecompressionError)
    assert decompress(codec, stream) == MEGABYTE_OF_ZEROS


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("size", [0, 1, 15, 32 * KIB, 64 * KIB + 3, 200 * KIB])
def test_limit_is_exact(codec, size):
    data = _sample("repetitive", size, size)
    stream = compress(codec, data)
    assert decompress(codec, stream, max_size=size) == data
    if size:
        with pytest.raises(DecompressionLimitError):
            decompress(codec, stream, max_size=size - 1)


def test_limit_applies_to_raw_snappy_and_foreign_streams():
    with pytest.raises(DecompressionLimitError):
        decompress("snappy", bytes(cramjam.snappy.compress_raw(MEGABYTE_OF_ZEROS)), max_size=1000)
    with pytest.raises(DecompressionLimitError):  # content size stored in the header
        decompress("zstd", zstandard.ZstdCompressor().compress(MEGABYTE_OF_ZEROS), max_size=1000)
    with pytest.raises(DecompressionLimitError):  # spread over concatenated gzip members
        decompress("gzip", compress("gzip", bytes(600)) * 2, max_size=1000)
    with pytest.raises(DecompressionLimitError):  # 4 MiB blocks
        decompress(
            "lz4",
            lz4.frame.compress(MEGABYTE_OF_ZEROS, block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX4MB),
            max_size=1000,
        )


def test_bad_max_size():
    with pytest.raises(ValueError):
        decompress("gzip", GZIP_MEMBER, max_size=-1)


# --- damaged input --------------------------------------------------------------------

GARBAGE = [
    b"\x05",  # declares 5 bytes, carries none (b"\x00" would be valid empty snappy)
    b"this is not compressed data at all" * 3,
    bytes(range(256)),
    b"\xff" * 64,
]


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("garbage", GARBAGE)
def test_garbage_raises_decompression_error(codec, garbage):
    with pytest.raises(DecompressionError) as info:
        decompress(codec, garbage)
    message = str(info.value)
    assert codec in message and "\n" not in message


@pytest.mark.parametrize("codec", COMPRESSED)
def test_empty_input_is_an_error(codec):
    with pytest.raises(DecompressionError):
        decompress(codec, b"")


@pytest.mark.parametrize("codec", COMPRESSED)
def test_truncated_streams(codec):
    stream = compress(codec, _sample("random", 100 * KIB, 9))
    for cut in (1, 5, len(stream) // 2, len(stream) - 40):
        with pytest.raises(DecompressionError):
            decompress(codec, stream[:-cut])


@pytest.mark.parametrize("codec", COMPRESSED)
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=400), flips=st.lists(st.integers(0, 10_000), max_size=4))
def test_only_kcodec_errors_escape(codec, data, flips):
    """Fuzz: any damaged stream either decodes or raises a DecompressionError."""
    stream = bytearray(compress(codec, data))
    for flip in flips:
        stream[flip % len(stream)] ^= 1 + flip % 255
    try:
        decompress(codec, bytes(stream))
    except KcodecError as exc:
        assert isinstance(exc, DecompressionError)


def test_library_errors_are_wrapped_with_cause():
    with pytest.raises(DecompressionError) as info:
        decompress("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff")
    assert info.value.__cause__ is not None
    assert str(info.value).startswith("gzip")


# --- interop with kafka-python's kafka.codec (test-only dependency) -------------------

kafka_codec = pytest.importorskip("kafka.codec")

INTEROP_DATA = [PAYLOAD, b"", _sample("repetitive", 150 * KIB, 10), _sample("random", 70 * KIB, 11)]


@pytest.fixture
def kc(monkeypatch):
    """kafka.codec, with a python-snappy stand-in when python-snappy is absent.

    kafka-python's snappy_encode/snappy_decode implement the xerial framing
    themselves and only need ``snappy.compress``/``snappy.decompress`` (raw
    blocks). python-snappy >= 0.7 is itself a thin wrapper around cramjam's raw
    snappy, so the stand-in keeps kafka-python's framing code under test.
    """
    if not kafka_codec.has_snappy():
        monkeypatch.setattr(
            kafka_codec,
            "snappy",
            types.SimpleNamespace(
                compress=lambda b: bytes(cramjam.snappy.compress_raw(b)),
                decompress=lambda b: bytes(cramjam.snappy.decompress_raw(b)),
            ),
        )
    return kafka_codec


def _need(kc, *names):
    for name in names:
        if getattr(kc, name, None) is None:
            pytest.skip(f"kafka.codec.{name} is not available in this kafka-python")


@pytest.mark.parametrize("data", INTEROP_DATA, ids=len)
def test_kafka_python_reads_ours(kc, data):
    _need(kc, "gzip_decode", "snappy_decode", "lz4_decode", "zstd_decode")
    assert kc.gzip_decode(compress("gzip", data)) == data
    assert kc.lz4_decode(compress("lz4", data)) == data
    assert kc.zstd_decode(compress("zstd", data)) == data
    if len(data) > 0:  # kafka-python needs more than a bare 16-byte xerial header
        assert kc.snappy_decode(compress("snappy", data)) == data


@pytest.mark.parametrize("data", INTEROP_DATA, ids=len)
def test_we_read_kafka_python(kc, data):
    _need(kc, "gzip_encode", "snappy_encode", "lz4_encode", "zstd_encode")
    assert decompress("gzip", kc.gzip_encode(data)) == data
    assert decompress("snappy", kc.snappy_encode(data, xerial_compatible=True)) == data
    assert decompress("lz4", kc.lz4_encode(data)) == data
    assert decompress("zstd", kc.zstd_encode(data)) == data
    if data:  # raw snappy of b"" is the single byte 00, handled like any raw block
        assert decompress("snappy", kc.snappy_encode(data, xerial_compatible=False)) == data
    assert decompress("snappy", kc.snappy_encode(b"", xerial_compatible=False)) == b""


def test_kafka_python_snappy_matches_ours_byte_for_byte(kc):
    _need(kc, "snappy_encode")
    data = _sample("repetitive", 100 * KIB, 12)
    assert kc.snappy_encode(data) == compress("snappy", data)
    assert kc.snappy_encode(PAYLOAD) == SNAPPY_XERIAL


def test_kafka_python_old_kafka_lz4(kc):
    _need(kc, "lz4_encode_old_kafka", "lz4_decode_old_kafka")
    if kc.xxhash is None:
        pytest.skip("kafka.codec's magic-0 lz4 helpers need the optional xxhash package")
    assert decompress("lz4", kc.lz4_encode_old_kafka(PAYLOAD), magic=0) == PAYLOAD
    assert kc.lz4_decode_old_kafka(compress("lz4", PAYLOAD, magic=0)) == PAYLOAD
