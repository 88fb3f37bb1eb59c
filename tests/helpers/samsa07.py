"""samsa 0.3.11 and brod 0.4.3 (Kafka 0.7 clients on PyPI, Python 2 only) made importable for the 0.7
interop tests, and snappy-java's xerial stream framing around python-snappy's raw blocks.

Both are installed by the test extra but cannot be imported by Python 3: the loaders copy the installed
package into a temporary directory, convert it with lib2to3 and import it from there (never the installed
copy), then give it the Python 2 behaviour it leans on: ``buffer(obj, offset, size)`` (a memoryview slice
here), a signed ``crc32`` (Python 2's zlib returned a signed int, which both pack into signed ``i``
fields), and for brod a bytes ``StringIO``. Nothing of either is vendored."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import shutil
import struct
import sys
import warnings
import zlib
from pathlib import Path
from types import ModuleType

XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)  # snappy-java's SnappyCodec header: version 1, compat 1
XERIAL_BLOCK = 32 * 1024  # SnappyOutputStream's default block size


def _converted(package: str, workdir: Path, modules: tuple[str, ...]) -> list[ModuleType] | str:
    """The installed Python 2 ``package`` copied into ``workdir``, converted by lib2to3 and its ``modules``
    imported from there (never the installed copy), or why that cannot be done."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return f"{package} is not installed (pip install -e '.[test]')"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from lib2to3.main import main as lib2to3_main
    except ImportError:
        return f"lib2to3 is gone from this Python (3.13+): {package}, Python 2 only, cannot be converted"
    target = workdir / package
    shutil.copytree(next(iter(spec.submodule_search_locations)), target, ignore=shutil.ignore_patterns("__pycache__"))
    log = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        warnings.simplefilter("ignore")
        status = lib2to3_main("lib2to3.fixes", ["-w", "-n", "--no-diffs", "-j", "1", str(target)])
    if status != 0:
        return f"lib2to3 could not convert {package} (status {status})"
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    sys.path.insert(0, str(workdir))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # Python 2 docstrings: invalid escapes
            return [importlib.import_module(m) for m in modules]
    finally:
        sys.path.remove(str(workdir))


def _buffer(obj, offset: int = 0, size: int | None = None) -> memoryview:
    """Python 2's ``buffer(obj, offset, size)``: a read-only slice without a copy."""
    return memoryview(obj)[offset : None if size is None else offset + size]


def _signed_crc32(data) -> int:
    """Python 2's zlib/binascii crc32: a signed int, which these clients pack into signed ``i`` fields."""
    return (zlib.crc32(bytes(data)) ^ 0x80000000) - 0x80000000


def load_samsa(workdir: Path) -> ModuleType | str:
    """samsa's ``client`` module converted to Python 3, or why it cannot be had (the tests skip with it)."""
    loaded = _converted("samsa", workdir, ("samsa.client", "samsa.utils.socket"))
    if isinstance(loaded, str):
        return loaded
    client, socket_utils = loaded
    for module in (client, socket_utils):
        module.buffer = lambda obj, offset=0, size=None: memoryview(obj)[
            offset : None if size is None else offset + size
        ]
    client.crc32 = _signed_crc32
    return client


def load_brod(workdir: Path) -> ModuleType | str:
    """brod 0.4.3's ``base`` module converted to Python 3 (its message writer's StringIO holds bytes, its
    checksum is Python 2's signed crc32), or why it cannot be had."""
    loaded = _converted("brod", workdir, ("brod.base",))
    if isinstance(loaded, str):
        return loaded
    (base,) = loaded
    base.StringIO = io.BytesIO
    base.BaseKafka.compute_checksum = staticmethod(_signed_crc32)
    return base


def brod_message_set(base: ModuleType, payloads: list[bytes]) -> bytes:
    """The message set brod puts in a produce request for ``payloads`` (magic 0, the only one it writes)."""
    topic = b"t"
    request = base.BaseKafka._produce_request(base.BaseKafka.__new__(base.BaseKafka), topic, payloads, 0)
    at = 4 + 2 + 2 + len(topic) + 4  # size, request type, topic length, topic, partition; then the set's length
    (length,) = struct.unpack_from(">I", request, at)
    return request[at + 4 : at + 4 + length]


def brod_parse(base: ModuleType, data: bytes, start_offset: int) -> list[tuple[int, bytes, bool]]:
    """(offset, payload, corrupt) per message as brod's fetch-response parser reads ``data`` (it expects the
    response's 2-byte error code in front)."""
    kafka = base.BaseKafka.__new__(base.BaseKafka)
    kafka.include_corrupt = False
    buffer = io.BytesIO(b"\x00\x00" + data)
    buffer.read(2)
    return list(base.BaseKafka._parse_message_set(kafka, start_offset, buffer, include_corrupt=True))


def samsa_entries(client: ModuleType, payloads: list[bytes], version: int = 1) -> bytes:
    """0.7 entries as samsa encodes them (its message set without the 4-byte frame it sends in front)."""
    return bytes(client.Message.encode(payloads, version=version).getvalue())[4:]


def samsa_wrapper(client: ModuleType, codec: int, payload: bytes) -> bytes:
    """A compressed 0.7 message around ``payload``, framed by samsa's own header structs (its encoder refuses
    compression: NotImplementedError)."""
    header, versioned = client.Message.Header, client.Message.VersionHeaders[1]
    out = bytearray(header.size + versioned.size + len(payload))
    header.pack_into(out, offset=0, length=len(out) - 4, magic=1)
    versioned.pack_into(out, offset=header.size, compression=codec, checksum=client.crc32(payload))
    out[header.size + versioned.size :] = payload
    return bytes(out)


def samsa_decode(client: ModuleType, data: bytes, base_offset: int) -> list[tuple[int, int, bytes, bool, int]]:
    """(offset, next offset, payload, valid, codec) of each entry as samsa's decoder reads ``data``."""
    return [
        (m.offset, m.next_offset, bytes(m.payload), m.valid, m["compression"] if m["magic"] else 0)
        for m in client.decode_messages(memoryview(data), base_offset)
    ]


def xerial_compress(data: bytes) -> bytes:
    """snappy-java's SnappyOutputStream: the xerial header, then (int32 length, raw snappy block) per 32 KiB."""
    import snappy

    out = [XERIAL_HEADER]
    for i in range(0, len(data), XERIAL_BLOCK):
        block = snappy.compress(data[i : i + XERIAL_BLOCK])
        out.append(struct.pack(">i", len(block)) + block)
    return b"".join(out)


def xerial_decompress(data: bytes) -> bytes:
    """The inverse of :func:`xerial_compress`, for any stream with that header."""
    import snappy

    assert data[: len(XERIAL_HEADER) - 8] == XERIAL_HEADER[:8], data[:16]
    pos, out = len(XERIAL_HEADER), []
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        out.append(snappy.uncompress(data[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    return b"".join(out)
