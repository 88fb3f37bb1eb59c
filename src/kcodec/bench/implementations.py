"""One small adapter per implementation and operation.

An adapter is ``factory(workload, magic, codec) -> run`` where ``run()`` does the
whole operation over the workload once and returns the number of records it
handled (the runner checks it). Everything a run needs (inputs, streams to
decompress, output buffers) is prepared by the factory, outside the timing.
A factory raises :class:`Unavailable` when the row cannot exist here (library
not installed, codec not supported by that client, module not written yet).

Every decode touches the same five things of every record: offset, timestamp,
key, value and headers.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kcodec.bench.clients import CODEC_IDS, Unavailable, client_codec_check, client_modules
from kcodec.bench.command_rows import ADAPTERS as COMMAND_ADAPTERS
from kcodec.bench.value_rows import ADAPTERS as VALUE_ADAPTERS
from kcodec.bench.value_rows import DESCRIPTION as VALUE_DESCRIPTION
from kcodec.bench.value_rows import OPERATION as VALUE_OPERATION
from kcodec.bench.workload import ENCODE_LEVELS, Workload

#: Operations in table order, with what each measures.
OPERATIONS = {
    "decode": "decode every record of the v2 log (CRC not verified)",
    "decode_crc": "decode every record of the v2 log, verifying every batch CRC",
    "decode_arrow": "decode the v2 log into Arrow columns (kcodec.records.columnar.read_arrow, CRC not verified)",
    "encode": "encode the records as v2 batches of the workload's batch size",
    "crc": "verify the CRC-32C of every v2 batch, without decoding records",
    "write": "kcodec write: the records as JSON lines (hex) to a segment file, fsynced",
    "convert": "kcodec convert: the uncompressed v2 log re-encoded with the codec to a file, fsynced",
    "verify": "kcodec verify on the v2 log (every CRC, every record decoded)",
    "dump_json": "kcodec dump --json on the v2 log, to /dev/null",
    "compact": "kcodec compact (dry run) on the v2 log as a partition of four segments: one cleaning round",
    VALUE_OPERATION: VALUE_DESCRIPTION,
    "v1_decode": "decode every record of the same records as v1 message sets",
    "v1_decode_crc": "the same, verifying every message CRC",
    "crc32c": "primitive: crc32c over the whole v2 log at once",
    "decompress": "primitive: decompress every batch's records stream with the codec library alone",
    "compress": "primitive: compress every batch's uncompressed records stream with the codec library alone, "
    "at the encode rows' level",
    "memcpy": "primitive: copy the uncompressed v2 log into a preallocated buffer",
}

#: The aiokafka row a ratio is taken against, per operation.
REFERENCE_OPERATION: dict[str, str | None] = {
    "decode": "decode",
    "decode_crc": "decode_crc",
    "decode_arrow": "decode",
    "encode": "encode",
    "crc": "crc",
    "write": "write",
    "convert": "convert",
    "verify": "decode_crc",
    "dump_json": None,  # no client has an equivalent
    "compact": None,  # no client has a log cleaner: compared with kcodec verify on the same log
    VALUE_OPERATION: None,  # compared with fastavro's own loop (the primitive row), not a client
    "v1_decode": "v1_decode",
    "v1_decode_crc": "v1_decode_crc",
    "crc32c": "crc",
    "decompress": "decode",
    "compress": "encode",
    "memcpy": "decode",
}

#: Operations on the v1 message sets (everything else reads or writes the v2 log).
V1_OPERATIONS = frozenset({"v1_decode", "v1_decode_crc"})

_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")

Run = Callable[[], int]
Factory = Callable[[Workload, int, str], Run]


# ---------------------------------------------------------------------------- kcodec


def _kcodec_decode(verify_crc: bool) -> Factory:
    def factory(w: Workload, magic: int, codec: str) -> Run:
        from kcodec.records.reader import read_batches

        blob = w.blob(magic, codec)

        def run() -> int:
            n = 0
            for batch in read_batches(blob, verify_crc=verify_crc):
                for r in batch.records:
                    r.offset
                    r.timestamp
                    r.key
                    r.value
                    r.headers
                    n += 1
            return n

        return run

    return factory


def _kcodec_arrow(w: Workload, magic: int, codec: str) -> Run:
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"pyarrow is not installed ({exc})") from None
    try:
        from kcodec.records.columnar import read_arrow
    except ImportError as exc:
        raise Unavailable(f"kcodec.records.columnar.read_arrow is not available ({exc})") from None
    blob = w.blob(magic, codec)

    def run() -> int:
        table = read_arrow(blob, verify_crc=False)
        rows = getattr(table, "num_rows", None)
        return len(table) if rows is None else rows

    return run


def _kcodec_encode(w: Workload, magic: int, codec: str) -> Run:
    from kcodec.records.encode import encode_batch

    level = ENCODE_LEVELS[codec]
    work = [(batch, start) for batch, (start, _) in zip(w.kcodec_batches, w.batch_bounds())]

    def run() -> int:
        n = 0
        for batch, start in work:
            encode_batch(batch, magic=2, compression=codec, compression_level=level, base_offset=start)
            n += len(batch)
        return n

    return run


def _kcodec_crc(w: Workload, magic: int, codec: str) -> Run:
    # The reader's framing (entries(): validated headers, one bytes object per
    # batch) and kcodec's crc32c over bytes [21, end) against the stored CRC:
    # what decode_entry checks, without decoding the records.
    from kcodec.records.reader import read_batches
    from kcodec.runtime.crc import crc32c

    blob = w.blob(magic, codec)
    unpack_crc, unpack_count = _U32.unpack_from, _I32.unpack_from

    def run() -> int:
        n = 0
        for _, entry in read_batches(blob).entries():
            if crc32c(memoryview(entry)[21:]) != unpack_crc(entry, 17)[0]:
                raise AssertionError("CRC mismatch")
            n += unpack_count(entry, 57)[0]
        return n

    return run


# ---------------------------------------------------------------------------- aiokafka / kafka-python


def aiokafka_extension() -> tuple[bool, str]:
    """(True, where) when aiokafka's record classes come from its compiled extension."""
    try:
        import aiokafka.record.default_records as dr
        import aiokafka.record.memory_records as mr
    except ImportError as exc:
        return False, f"aiokafka not installed ({exc})"
    classes = (mr.MemoryRecords, dr.DefaultRecordBatch, dr.DefaultRecordBatchBuilder)
    modules = [c.__module__ for c in classes]
    import sys

    files = [getattr(sys.modules.get(m), "__file__", "") or "" for m in modules]
    compiled = all("_crecords" in m for m in modules) and all(f.endswith((".so", ".pyd")) for f in files)
    where = ", ".join(sorted(set(modules)))
    return compiled, where


def _client_decode(impl: str, verify_crc: bool) -> Factory:
    def factory(w: Workload, magic: int, codec: str) -> Run:
        memory_records, _ = client_modules(impl)
        client_codec_check(impl, codec)
        blob = w.blob(magic, codec)

        def run() -> int:
            n = 0
            records = memory_records(blob)
            while True:
                batch = records.next_batch()
                if batch is None:
                    return n
                if verify_crc and not batch.validate_crc():
                    raise AssertionError("CRC mismatch")
                for r in batch:
                    r.offset
                    r.timestamp
                    r.key
                    r.value
                    r.headers
                    n += 1

        return run

    return factory


def _client_crc(impl: str) -> Factory:
    def factory(w: Workload, magic: int, codec: str) -> Run:
        memory_records, _ = client_modules(impl)
        blob = w.blob(magic, codec)

        def run() -> int:
            n = 0
            records = memory_records(blob)
            while True:
                batch = records.next_batch()
                if batch is None:
                    return n
                if not batch.validate_crc():
                    raise AssertionError("CRC mismatch")
                n += batch.last_offset_delta + 1  # the header's count (no gaps in this workload)

        return run

    return factory


def _client_encode(impl: str) -> Factory:
    def factory(w: Workload, magic: int, codec: str) -> Run:
        _, builder_class = client_modules(impl)
        client_codec_check(impl, codec)
        codec_id = CODEC_IDS[codec]
        batches = w.client_batches

        def run() -> int:
            n = 0
            for batch in batches:
                builder = builder_class(2, codec_id, 0, -1, -1, -1, 1 << 30)
                append = builder.append
                for offset, timestamp, key, value, headers in batch:
                    append(offset, timestamp, key, value, headers)
                builder.build()
                n += len(batch)
            return n

        return run

    return factory


# ---------------------------------------------------------------------------- primitives


def _primitive_crc32c(w: Workload, magic: int, codec: str) -> Run:
    import crc32c

    blob = w.blob(magic, codec)
    n = w.records

    def run() -> int:
        crc32c.crc32c(blob)
        return n

    return run


def _records_streams(w: Workload, codec: str) -> list[bytes]:
    """The compressed records stream of every v2 batch (bytes [61, end))."""
    blob, streams, start = w.v2[codec], [], 0
    for end in w.v2_ends[codec]:
        streams.append(blob[start + 61 : end])
        start = end
    return streams


_XERIAL_HEADER_SIZE = 16


def decompressor(codec: str) -> tuple[Callable[[bytes], object], str]:
    """The bare library call decompressing one Kafka records stream, and its name."""
    if codec == "gzip":
        import zlib

        return (lambda s: zlib.decompress(s, 31)), "zlib.decompress"
    if codec == "snappy":
        import cramjam

        raw = cramjam.snappy.decompress_raw
        unpack = _I32.unpack_from

        def snappy(s: bytes) -> object:  # xerial framing: int32 length + raw block, 32 KiB of input each
            view, pos, end, out = memoryview(s), _XERIAL_HEADER_SIZE, len(s), None
            while pos < end:
                size = unpack(view, pos)[0]
                out = raw(view[pos + 4 : pos + 4 + size])
                pos += 4 + size
            return out

        return snappy, "cramjam.snappy.decompress_raw per xerial chunk"
    if codec == "lz4":
        import lz4.frame

        return lz4.frame.decompress, "lz4.frame.decompress"
    if codec == "zstd":
        import zstandard

        dctx = zstandard.ZstdDecompressor()
        return (lambda s: dctx.decompressobj().decompress(s)), "zstandard decompressobj"
    raise Unavailable("no compression: nothing to decompress")


def _primitive_decompress(w: Workload, magic: int, codec: str) -> Run:
    decompress, _ = decompressor(codec)
    streams = _records_streams(w, codec)
    n = w.records

    def run() -> int:
        for s in streams:
            decompress(s)
        return n

    return run


def compressor(codec: str) -> tuple[Callable[[bytes], object], str]:
    """The bare library call compressing one records stream at the encode rows' level, and its name:
    the same framing Kafka's codec writes (a gzip member, a zstd frame), one reused context."""
    level = ENCODE_LEVELS[codec]
    if level is None or codec not in ("gzip", "zstd"):
        raise Unavailable(f"the encode target compares gzip and zstd with their compressor, not {codec}")
    if codec == "gzip":
        import zlib

        def gzip(s: bytes) -> object:
            deflater = zlib.compressobj(level, zlib.DEFLATED, 31)  # a gzip member, as java.util.zip writes
            return deflater.compress(s) + deflater.flush()

        return gzip, f"zlib.compressobj gzip member, level {level}"
    import zstandard

    cctx = zstandard.ZstdCompressor(level=level)
    return cctx.compress, f"zstandard ZstdCompressor(level={level}).compress"


def _primitive_compress(w: Workload, magic: int, codec: str) -> Run:
    compress, _ = compressor(codec)
    streams = _records_streams(w, "none")  # the uncompressed records of every batch
    n = w.records

    def run() -> int:
        for s in streams:
            compress(s)
        return n

    return run


def _primitive_memcpy(w: Workload, magic: int, codec: str) -> Run:
    blob = w.blob(magic, codec)
    target = memoryview(bytearray(len(blob)))
    n = w.records

    def run() -> int:
        target[:] = blob
        return n

    return run


# ---------------------------------------------------------------------------- the table of rows

ADAPTERS: dict[tuple[str, str], Factory] = {
    ("kcodec", "decode"): _kcodec_decode(False),
    ("kcodec", "decode_crc"): _kcodec_decode(True),
    ("kcodec", "decode_arrow"): _kcodec_arrow,
    ("kcodec", "encode"): _kcodec_encode,
    ("kcodec", "crc"): _kcodec_crc,
    ("kcodec", "v1_decode"): _kcodec_decode(False),
    ("kcodec", "v1_decode_crc"): _kcodec_decode(True),
    ("primitive", "crc32c"): _primitive_crc32c,
    ("primitive", "decompress"): _primitive_decompress,
    ("primitive", "compress"): _primitive_compress,
    ("primitive", "memcpy"): _primitive_memcpy,
}
for _impl in ("aiokafka", "kafka-python"):
    ADAPTERS[(_impl, "decode")] = _client_decode(_impl, False)
    ADAPTERS[(_impl, "decode_crc")] = _client_decode(_impl, True)
    ADAPTERS[(_impl, "encode")] = _client_encode(_impl)
    ADAPTERS[(_impl, "crc")] = _client_crc(_impl)
    ADAPTERS[(_impl, "v1_decode")] = _client_decode(_impl, False)
    ADAPTERS[(_impl, "v1_decode_crc")] = _client_decode(_impl, True)

ADAPTERS.update(COMMAND_ADAPTERS)
ADAPTERS.update(VALUE_ADAPTERS)


def codecs_for(operation: str, codecs: tuple[str, ...]) -> tuple[str, ...]:
    """The codecs an operation has rows for."""
    if operation in V1_OPERATIONS:
        return tuple(c for c in codecs if c != "zstd")  # zstd does not exist before v2
    if operation == "decompress":
        return tuple(c for c in codecs if c != "none")
    if operation == "compress":
        return tuple(c for c in codecs if c in ("gzip", "zstd"))
    if operation in ("memcpy", VALUE_OPERATION):
        return ("none",)
    if operation == "convert":
        return tuple(c for c in codecs if c != "none")  # from the uncompressed log
    return codecs


def magic_of(operation: str) -> int:
    return 1 if operation in V1_OPERATIONS else 2


def encode_levels() -> dict[str, str]:
    """What each implementation's encode rows compress at, per codec (for the footnotes)."""
    return {
        "kcodec": "gzip 9, lz4 9 (Kafka's LZ4 framing: level 9 = LZ4's fast compressor, as Kafka), zstd 3 "
        "(compression_level passed explicitly)",
        "aiokafka": "gzip 9, lz4 9 (lz4.frame level 9 = LZ4 HC 9), zstd 3 (cramjam); hard-coded by aiokafka",
        "kafka-python": "gzip 9, lz4 lz4.frame default (fast), zstd zstandard default (3); hard-coded by kafka-python",
    }
