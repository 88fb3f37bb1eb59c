"""Kafka's compression framings, byte-compatible with the Java client (``CompressionType`` and
the ``org.apache.kafka.common.compress`` classes; levels as KIP-390 defines them).

A compressed v2 batch (bytes [61, end)) or legacy wrapper value is one stream in
the codec named by attribute bits 0-2:

==  ======  =================================================================
id  name    stream
==  ======  =================================================================
0   none    the bytes themselves
1   gzip    one RFC 1952 member (JDK ``GZIPOutputStream``); readers accept
            concatenated members
2   snappy  snappy-java "xerial" framing: 16-byte header, then
            ``int32 BE length + raw snappy block`` chunks of <= 32 KiB input
3   lz4     Kafka's LZ4 frame: FLG 0x60, BD 0x40, independent 64 KiB blocks,
            no checksums; magic 0 carries Kafka's historic wrong header checksum
4   zstd    a standard zstd frame; v2 (magic 2) only
==  ======  =================================================================

:func:`decompress` never lets output grow past ``max_size`` (a compression bomb
raises :class:`DecompressionLimitError` before the memory is used), and every
failure of the underlying libraries surfaces as :class:`DecompressionError`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

import cramjam
import lz4.block
import zstandard

from kcodec.errors import (
    CompressionError,
    DecodeError,
    DecompressionError,
    DecompressionLimitError,
    UnknownMagicError,
)
from kcodec.runtime.varint import decode_uvarint

__all__ = [
    "CODECS",
    "CODEC_IDS",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "codec_for_id",
    "compress",
    "decompress",
    "STREAM_HEAD_SIZE",
    "stream_may_start",
]

Buffer = bytes | bytearray | memoryview

CODECS: dict[int, str] = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS: dict[str, int] = {name: codec_id for codec_id, name in CODECS.items()}

# Kafka caps a batch at message.max.bytes (default ~1 MiB, raised to a few tens
# of MiB at most in practice); compressed record data rarely expands more than
# ~10-50x. 64 MiB leaves ample room for legitimate batches while bounding the
# memory a malicious or corrupt stream can make us allocate. Override per call.
DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

_I32_BE = struct.Struct(">i")
_U32_LE = struct.Struct("<I")


# --- helpers ----------------------------------------------------------------


def codec_for_id(codec_id: int) -> str:
    """Codec name for an attribute codec id (0-4); CompressionError otherwise."""
    if isinstance(codec_id, int) and not isinstance(codec_id, bool) and codec_id in CODECS:
        return CODECS[codec_id]
    # Java's CompressionType.forId wording.
    raise CompressionError(f"Unknown compression type id: {codec_id}")


def _codec_name(codec: str | int) -> str:
    if isinstance(codec, str):
        if codec in CODEC_IDS:
            return codec
        raise CompressionError(f"unknown compression codec {codec!r}")
    return codec_for_id(codec)


def _check_magic(magic: int) -> None:
    if isinstance(magic, bool) or not isinstance(magic, int) or not 0 <= magic <= 2:
        raise UnknownMagicError(f"unknown record format magic {magic!r} (expected 0, 1 or 2)")


def _zstd_magic(magic: int) -> None:
    if magic < 2:
        raise CompressionError(f"zstd requires magic 2 (record format v2), got magic {magic}")


def _view(data: Buffer) -> memoryview:
    """A flat unsigned-byte view of ``data`` without copying when possible."""
    mv = memoryview(data)  # TypeError for non-buffers: a programming error
    if mv.format != "B" or mv.ndim != 1 or not mv.c_contiguous:
        mv = memoryview(mv.tobytes())
    return mv


class _Output:
    """Decompressed parts joined once at the end: one copy of each byte, where growing a bytearray and
    then copying it into bytes made two or more (and a single part is returned as it is)."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[Buffer | cramjam.Buffer] = []
        self.size = 0

    def add(self, part: Buffer | cramjam.Buffer) -> None:
        self.parts.append(part)
        self.size += len(part)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _limit(codec: str, max_size: int, position: int | None = None) -> DecompressionLimitError:
    return DecompressionLimitError(
        f"{codec}: decompressed data exceeds the limit of {max_size} bytes", position=position
    )


# --- gzip (id 1) ------------------------------------------------------------

# ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=0xff: what JDK 17's GZIPOutputStream writes.
_GZIP_HEADER = bytes.fromhex("1f8b08000000000000ff")
_GZIP_MEMBER_START = _GZIP_HEADER[:3]


def _gzip_level(level: int | None) -> int:
    if level is None:
        return -1  # Deflater.DEFAULT_COMPRESSION == zlib level 6
    if isinstance(level, int) and not isinstance(level, bool) and (level == -1 or 1 <= level <= 9):
        return level
    raise CompressionError(f"gzip level must be 1..9 or -1, got {level!r}")


def _gzip_compress(data: memoryview, magic: int, level: int | None) -> bytes:
    lvl = _gzip_level(level)
    deflater = zlib.compressobj(lvl, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate
    body = deflater.compress(data) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return _GZIP_HEADER + body + trailer


def _gzip_decompress(data: memoryview, magic: int, max_size: int) -> bytes:
    if not data:
        raise DecompressionError("gzip: empty input", position=0)
    out = _Output()
    rest: memoryview | bytes = data
    member_start = 0
    while True:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip wrapper
        pending = rest
        while True:
            # Ask for one byte more than still fits, so overflow is detected
            # without ever holding more than max_size + 1 bytes.
            out.add(inflater.decompress(pending, max_size - out.size + 1))
            if out.size > max_size:
                raise _limit("gzip", max_size)
            if inflater.eof:
                break
            pending = inflater.unconsumed_tail
            if not pending:
                # zlib stopped short of the limit with all input consumed.
                raise DecompressionError(
                    "gzip: truncated stream (member has no complete deflate data and trailer)", position=member_start
                )
        rest = inflater.unused_data
        member_start = len(data) - len(rest)
        # Like JDK's GZIPInputStream: bytes after a member are another member
        # only if they start with a gzip header; anything else is ignored.
        if bytes(rest[:3]) != _GZIP_MEMBER_START:
            return out.bytes()


# --- snappy (id 2) ----------------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_MAGIC_HEAD = _I32_BE.unpack(_XERIAL_MAGIC[:4])[0]  # 0x82534E41 as a signed int32
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java 1.1.10.5 DEFAULT_BLOCK_SIZE
_XERIAL_MAX_CHUNK = 512 * 1024 * 1024  # snappy-java's chunk-length sanity limit


def _no_level(codec: str, level: int | None) -> None:
    if level is not None:
        raise CompressionError(f"{codec} has no compression levels, got level {level!r}")


def _snappy_compress(data: memoryview, magic: int, level: int | None) -> bytes:
    _no_level("snappy", level)
    parts: list[Buffer | cramjam.Buffer] = [_XERIAL_HEADER]
    for off in range(0, len(data), _XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(data[off : off + _XERIAL_BLOCK_SIZE])
        parts.append(_I32_BE.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_block(block: memoryview, room: int, max_size: int, position: int) -> cramjam.Buffer:
    """Decompress one raw snappy block, refusing if its declared size exceeds ``room``."""
    try:
        declared, _ = decode_uvarint(block, 0)
    except DecodeError:
        raise DecompressionError("snappy: bad uncompressed-length varint in raw block", position=position) from None
    # Checked before decompressing: the library allocates the declared size.
    if declared > room:
        raise _limit("snappy", max_size, position)
    result = cramjam.snappy.decompress_raw(block)
    if len(result) > room:  # defensive; the library enforces the declared size
        raise _limit("snappy", max_size, position)
    return result


def _xerial_header(data: memoryview, pos: int) -> int:
    """Validate a xerial stream header at ``pos``; return the position after it."""
    if len(data) - pos < len(_XERIAL_HEADER) or data[pos : pos + 8] != _XERIAL_MAGIC:
        raise DecompressionError("snappy: truncated or invalid xerial stream header", position=pos)
    version = _I32_BE.unpack_from(data, pos + 8)[0]
    if version < 1:  # snappy-java rejects versions below its minimum-compatible 1
        raise DecompressionError(f"snappy: incompatible xerial version {version}", position=pos)
    return pos + len(_XERIAL_HEADER)


def _snappy_decompress(data: memoryview, magic: int, max_size: int) -> bytes:
    n = len(data)
    if n == 0:
        raise DecompressionError("snappy: empty input", position=0)
    if n < len(_XERIAL_HEADER) or data[:8] != _XERIAL_MAGIC:
        # snappy-java decodes input without the xerial magic as one raw block.
        return bytes(_snappy_block(data, max_size, max_size, 0))
    out = _Output()
    pos = _xerial_header(data, 0)
    while pos < n:
        if n - pos < 4:
            raise DecompressionError("snappy: truncated chunk length", position=pos)
        length = _I32_BE.unpack_from(data, pos)[0]
        if length == _XERIAL_MAGIC_HEAD:  # a concatenated stream starts here
            pos = _xerial_header(data, pos)
            continue
        if length < 0 or length > _XERIAL_MAX_CHUNK:
            raise DecompressionError(f"snappy: invalid chunk length {length}", position=pos)
        start = pos + 4
        end = start + length
        if end > n:
            raise DecompressionError(f"snappy: chunk of {length} bytes runs past the end of the input", position=pos)
        out.add(_snappy_block(data[start:end], max_size - out.size, max_size, start))
        pos = end
    return out.bytes()


# --- lz4 (id 3) -------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _xxh32(data: Buffer, seed: int = 0) -> int:
    """XXH32 (needed for LZ4 header/block checksums; lz4 does not expose it)."""
    data = bytes(data)
    n = len(data)
    i = 0
    if n >= 16:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32
        stripes = n // 16
        for a, b, c, d in struct.iter_unpack("<4I", data[: stripes * 16]):
            v1 = _rotl((v1 + a * _P2) & _M32, 13) * _P1 & _M32
            v2 = _rotl((v2 + b * _P2) & _M32, 13) * _P1 & _M32
            v3 = _rotl((v3 + c * _P2) & _M32, 13) * _P1 & _M32
            v4 = _rotl((v4 + d * _P2) & _M32, 13) * _P1 & _M32
        i = stripes * 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = _rotl((h + _U32_LE.unpack_from(data, i)[0] * _P3) & _M32, 17) * _P4 & _M32
        i += 4
    while i < n:
        h = _rotl((h + data[i] * _P5) & _M32, 11) * _P1 & _M32
        i += 1
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    return h ^ (h >> 16)


_LZ4_MAGIC = b"\x04\x22\x4d\x18"  # 0x184D2204 little-endian
_LZ4_FLG = 0x60  # version 1, independent blocks, no checksums, no content size
_LZ4_BD = 0x40  # max block size code 4 = 64 KiB
_LZ4_BLOCK_SIZE = 64 * 1024
_LZ4_RAW_BLOCK = 0x80000000  # high bit of a block size: stored uncompressed
_LZ4_END_MARK = b"\x00\x00\x00\x00"
_LZ4_DEFAULT_LEVEL = 9


def _lz4_hc(hashed: bytes) -> int:
    return (_xxh32(hashed) >> 8) & 0xFF


_LZ4_DESCRIPTOR = bytes((_LZ4_FLG, _LZ4_BD))
# Correct HC (0x82) hashes FLG+BD; Kafka's magic-0 writer hashes magic+FLG+BD (0x1A).
_LZ4_HEADER = _LZ4_MAGIC + _LZ4_DESCRIPTOR + bytes((_lz4_hc(_LZ4_DESCRIPTOR),))
_LZ4_HEADER_V0 = _LZ4_MAGIC + _LZ4_DESCRIPTOR + bytes((_lz4_hc(_LZ4_MAGIC + _LZ4_DESCRIPTOR),))


def _lz4_compress(data: memoryview, magic: int, level: int | None) -> bytes:
    if level is None:
        level = _LZ4_DEFAULT_LEVEL
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 17:
        raise CompressionError(f"lz4 level must be 1..17, got {level!r}")
    # Written with lz4.block rather than lz4.frame: Kafka uses the fast
    # compressor at level 9 and the HC compressor at every other level, while
    # lz4.frame silently uses the fast one for levels 1-2. For the default
    # level and 3..17 the bytes equal lz4.frame's (see tests).
    if level == _LZ4_DEFAULT_LEVEL:

        def pack(chunk: memoryview) -> bytes:
            return lz4.block.compress(chunk, mode="default", store_size=False)
    else:

        def pack(chunk: memoryview) -> bytes:
            return lz4.block.compress(chunk, mode="high_compression", compression=level, store_size=False)

    parts: list[Buffer] = [_LZ4_HEADER_V0 if magic == 0 else _LZ4_HEADER]
    for off in range(0, len(data), _LZ4_BLOCK_SIZE):
        chunk = data[off : off + _LZ4_BLOCK_SIZE]
        packed = pack(chunk)
        if len(packed) >= len(chunk):  # no gain: store raw, as Lz4BlockOutputStream does
            parts.append(_U32_LE.pack(len(chunk) | _LZ4_RAW_BLOCK))
            parts.append(chunk)
        else:
            parts.append(_U32_LE.pack(len(packed)))
            parts.append(packed)
    parts.append(_LZ4_END_MARK)
    return b"".join(parts)


def _lz4_decompress(data: memoryview, magic: int, max_size: int) -> bytes:
    # Mirrors Lz4BlockInputStream: same checks, same leniencies.
    n = len(data)
    if n < 7:
        raise DecompressionError("lz4: stream ended prematurely (frame header)", position=0)
    if data[:4] != _LZ4_MAGIC:
        raise DecompressionError("lz4: invalid magic bytes", position=0)
    flg, bd = data[4], data[5]
    if flg & 0x03:
        raise DecompressionError("lz4: FLG reserved bits must be 0", position=4)
    if flg >> 6 != 1:
        raise DecompressionError(f"lz4: frame version {flg >> 6} is unsupported", position=4)
    if not flg & 0x20:
        # Kafka rejects linked blocks; with independence declared, a block that
        # still references earlier data fails to decode on its own below.
        raise DecompressionError("lz4: dependent block stream is unsupported", position=4)
    block_checksum, content_size, content_checksum = flg & 0x10, flg & 0x08, flg & 0x04
    if bd & 0x8F or not 4 <= (bd >> 4) <= 7:
        raise DecompressionError("lz4: invalid BD byte (block size code must be 4..7)", position=5)
    max_block = 1 << (2 * (bd >> 4) + 8)  # 64 KiB, 256 KiB, 1 MiB, 4 MiB
    pos = 6 + (8 if content_size else 0)  # the content size itself is skipped
    if n < pos + 1:
        raise DecompressionError("lz4: stream ended prematurely (frame header)", position=0)
    # Kafka skips HC verification for magic 0, whose writers hashed the wrong bytes.
    if magic >= 1:
        expected = _lz4_hc(bytes(data[4:pos]))
        if data[pos] != expected:
            raise DecompressionError(
                f"lz4: frame descriptor corrupted (HC {data[pos]:#04x}, expected {expected:#04x})", position=pos
            )
    pos += 1

    out = _Output()
    while True:
        if n - pos < 4:
            raise DecompressionError("lz4: stream ended prematurely (no EndMark)", position=pos)
        word = _U32_LE.unpack_from(data, pos)[0]
        block_pos = pos
        pos += 4
        size = word & ~_LZ4_RAW_BLOCK
        if size == 0:
            # EndMark (Kafka also ends on a zero-length raw block). A content
            # checksum is read but, as in Kafka, not verified; bytes after the
            # frame are ignored.
            if content_checksum and n - pos < 4:
                raise DecompressionError("lz4: stream ended prematurely (content checksum)", position=pos)
            return out.bytes()
        if size > max_block:
            raise DecompressionError(f"lz4: block size {size} exceeded max: {max_block}", position=block_pos)
        if n - pos < size:
            raise DecompressionError("lz4: stream ended prematurely (block data)", position=block_pos)
        block = data[pos : pos + size]
        pos += size
        if block_checksum:
            if n - pos < 4:
                raise DecompressionError("lz4: stream ended prematurely (block checksum)", position=pos)
            if _xxh32(block) != _U32_LE.unpack_from(data, pos)[0]:
                raise DecompressionError("lz4: block checksum mismatch", position=block_pos)
            pos += 4
        room = max_size - out.size
        if word & _LZ4_RAW_BLOCK:
            if size > room:
                raise _limit("lz4", max_size, block_pos)
            out.add(block)
        else:
            # Decoded alone, so a block depending on earlier ones fails here.
            # Transient allocation is bounded by max_block (<= 4 MiB).
            decoded = lz4.block.decompress(block, uncompressed_size=max_block)
            if len(decoded) > room:
                raise _limit("lz4", max_size, block_pos)
            out.add(decoded)


# --- zstd (id 4) ------------------------------------------------------------

_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK, _ZSTD_SKIPPABLE = 0xFFFFFFF0, 0x184D2A50
_ZSTD_DEFAULT_LEVEL = 3
_ZSTD_MIN_LEVEL, _ZSTD_MAX_LEVEL = -131072, 22  # Zstd.minCompressionLevel()/max
_ZSTD_READ_CHUNK = 1 << 20


def _zstd_compress(data: memoryview, magic: int, level: int | None) -> bytes:
    _zstd_magic(magic)
    if level is None:
        level = _ZSTD_DEFAULT_LEVEL
    if isinstance(level, bool) or not isinstance(level, int) or not _ZSTD_MIN_LEVEL <= level <= _ZSTD_MAX_LEVEL:
        raise CompressionError(f"zstd level must be {_ZSTD_MIN_LEVEL}..{_ZSTD_MAX_LEVEL}, got {level!r}")
    # Streaming, then flush + end, as zstd-jni's stream does when Kafka closes
    # it: no content size, data blocks, then an empty last block.
    cobj = zstandard.ZstdCompressor(level=level).compressobj()
    return (
        cobj.compress(data)
        + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    )


def _zstd_check_frames(data: memoryview) -> None:
    """Walk frame and block headers to reject truncated input and trailing junk.

    zstandard's stream reader stops silently at a truncated frame, while
    zstd-jni (Kafka) raises "Truncated source"; this structural pass makes the
    two agree. Block contents are validated by the decoder itself.
    """
    n = len(data)
    pos = 0
    while pos < n:
        if n - pos < 4:
            raise DecompressionError("zstd: trailing bytes are not a frame", position=pos)
        frame_magic = _U32_LE.unpack_from(data, pos)[0]
        if frame_magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE:
            if n - pos < 8:
                raise DecompressionError("zstd: truncated skippable frame", position=pos)
            pos += 8 + _U32_LE.unpack_from(data, pos + 4)[0]
            if pos > n:
                raise DecompressionError("zstd: truncated skippable frame", position=pos)
            continue
        if frame_magic != _ZSTD_MAGIC:
            raise DecompressionError("zstd: invalid frame magic", position=pos)
        if n - pos < 5:
            raise DecompressionError("zstd: truncated frame header", position=pos)
        fhd = data[pos + 4]
        single_segment = (fhd >> 5) & 1
        header = (
            5
            + (0 if single_segment else 1)  # window descriptor
            + (0, 1, 2, 4)[fhd & 3]  # dictionary id
            + ((single_segment, 2, 4, 8)[fhd >> 6])
        )  # frame content size
        frame_start = pos
        pos += header
        while True:
            if n - pos < 3:
                raise DecompressionError("zstd: truncated frame", position=frame_start)
            block_header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            block_type = (block_header >> 1) & 3
            pos += 3 + (1 if block_type == 1 else block_header >> 3)  # RLE blocks carry 1 byte
            if pos > n:
                raise DecompressionError("zstd: truncated frame", position=frame_start)
            if block_header & 1:  # last block
                break
        if fhd & 0x04:  # content checksum
            pos += 4
            if pos > n:
                raise DecompressionError("zstd: truncated frame checksum", position=frame_start)


def _zstd_decompress(data: memoryview, magic: int, max_size: int) -> bytes:
    _zstd_magic(magic)
    if not data:
        raise DecompressionError("zstd: empty input", position=0)
    _zstd_check_frames(data)
    out = _Output()
    # Streamed in bounded reads: the frame content size is never trusted.
    with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
        while True:
            chunk = reader.read(min(max_size - out.size + 1, _ZSTD_READ_CHUNK))
            if not chunk:
                return out.bytes()
            out.add(chunk)
            if out.size > max_size:
                raise _limit("zstd", max_size)


# --- public API -------------------------------------------------------------

_COMPRESSORS: dict[str, Callable[[memoryview, int, int | None], bytes]] = {
    "gzip": _gzip_compress,
    "snappy": _snappy_compress,
    "lz4": _lz4_compress,
    "zstd": _zstd_compress,
}

_DECOMPRESSORS: dict[str, Callable[[memoryview, int, int], bytes]] = {
    "gzip": _gzip_decompress,
    "snappy": _snappy_decompress,
    "lz4": _lz4_decompress,
    "zstd": _zstd_decompress,
}


def compress(codec: str | int, data: Buffer, *, magic: int = 2, level: int | None = None) -> bytes:
    """Compress ``data`` into the stream Kafka writes for ``codec`` at ``magic``.

    ``codec`` is a name from CODECS (or its id). ``level`` follows Kafka's
    KIP-390 ranges: gzip 1..9 or -1, lz4 1..17 (default 9), zstd
    -131072..22 (default 3); none and snappy take no level. Raises
    CompressionError for an unknown codec, a bad level, or zstd below magic 2.
    """
    name = _codec_name(codec)
    _check_magic(magic)
    view = _view(data)
    if name == "none":
        _no_level(name, level)
        return bytes(view)
    return _COMPRESSORS[name](view, magic, level)


def decompress(
    codec: str | int, data: Buffer, *, magic: int = 2, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> bytes:
    """Decompress one Kafka ``codec`` stream, producing at most ``max_size`` bytes.

    Raises CompressionError for an unknown codec or zstd below magic 2,
    DecompressionLimitError when the output would exceed ``max_size``, and
    DecompressionError for any damaged stream. "none" returns the bytes as
    they are (no limit applies: nothing is expanded).
    """
    name = _codec_name(codec)
    _check_magic(magic)
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 0:
        raise ValueError(f"max_size must be a non-negative int, got {max_size!r}")
    view = _view(data)
    if name == "none":
        return bytes(view)
    if name == "zstd":
        _zstd_magic(magic)  # a format error, not damage: keep it a CompressionError
    try:
        return _DECOMPRESSORS[name](view, magic, max_size)
    except DecompressionError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # zlib.error, cramjam/lz4/zstd errors, ValueError, ...
        detail = " ".join(str(exc).split()) or "no detail"
        raise DecompressionError(f"{name}: corrupt compressed data ({type(exc).__name__}: {detail})") from exc


# --- framing, without decompressing -----------------------------------------

STREAM_HEAD_SIZE = 1024  # the most bytes :func:`stream_may_start` looks at
_SNAPPY_ELEMENTS_CHECKED = 16
_SNAPPY_LITERAL, _SNAPPY_COPY_1 = 0, 1


def stream_may_start(codec_id: int, head: Buffer, length: int) -> bool:
    """False when a compressed stream of ``codec_id`` and ``length`` bytes that starts with ``head`` (its
    first bytes, up to :data:`STREAM_HEAD_SIZE`) cannot decompress because its framing is wrong: gzip's
    member header, Kafka's LZ4 frame magic, a zstd (or skippable) frame, or for snappy the xerial header or
    a raw block whose first elements are consistent. A cheap test that lets a scan for valid batches pass
    over random bytes without checksumming or decompressing them; True does not mean it decompresses."""
    name = CODECS.get(codec_id)
    head = bytes(head[: min(length, STREAM_HEAD_SIZE)])
    if name == "gzip":
        return head[: len(_GZIP_MEMBER_START)] == _GZIP_MEMBER_START
    if name == "lz4":
        return head[:4] == _LZ4_MAGIC
    if name == "zstd":
        if len(head) < 4:
            return False
        frame = _U32_LE.unpack_from(head, 0)[0]
        return frame == _ZSTD_MAGIC or frame & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE
    if name == "snappy":
        return head[: len(_XERIAL_MAGIC)] == _XERIAL_MAGIC or _snappy_raw_may_start(head, length)
    return name is not None


def _snappy_raw_may_start(head: bytes, length: int) -> bool:
    """Whether a raw snappy block of ``length`` bytes starting with ``head`` may decompress: its first
    elements stay within the declared size and copy only bytes already produced (a block's format)."""
    try:
        declared, pos = decode_uvarint(head, 0)
    except DecodeError:
        return False
    produced = 0
    for _ in range(_SNAPPY_ELEMENTS_CHECKED):
        if pos >= length:
            return produced == declared
        if pos >= len(head):
            return True  # the rest is not looked at
        tag = head[pos]
        kind, upper = tag & 3, tag >> 2
        if kind == _SNAPPY_LITERAL:
            extra = upper - 59 if upper >= 60 else 0
            if pos + 1 + extra > len(head):
                return True
            n = (int.from_bytes(head[pos + 1 : pos + 1 + extra], "little") if extra else upper) + 1
            pos += 1 + extra + n
            if pos > length:
                return False
        else:
            size = 1 if kind == _SNAPPY_COPY_1 else 2 if kind == 2 else 4
            if pos + 1 + size > len(head):
                return True
            if kind == _SNAPPY_COPY_1:
                n, offset = 4 + (upper & 7), (upper >> 3) << 8 | head[pos + 1]
            else:
                n, offset = upper + 1, int.from_bytes(head[pos + 1 : pos + 1 + size], "little")
            if not 0 < offset <= produced:
                return False
            pos += 1 + size
        produced += n
        if produced > declared:
            return False
    return True
