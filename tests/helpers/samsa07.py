"""samsa 0.3.11 (a Kafka 0.7 client on PyPI, Python 2 only) made importable for the 0.7 interop tests, and
snappy-java's xerial stream framing around python-snappy's raw blocks.

samsa is installed by the test extra but cannot be imported by Python 3: :func:`load_samsa` copies the
installed package into a temporary directory, converts it with lib2to3 and imports it from there (never
the installed copy), then gives its modules Python 2's two builtins they lean on: ``buffer(obj, offset,
size)`` (a memoryview slice here) and a signed ``crc32`` (Python 2's zlib returned a signed int, which
samsa packs into a signed ``i`` field). Nothing of samsa is vendored."""

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


def load_samsa(workdir: Path) -> ModuleType | str:
    """samsa's ``client`` module converted to Python 3, or why it cannot be had (the tests skip with it)."""
    spec = importlib.util.find_spec("samsa")
    if spec is None or not spec.submodule_search_locations:
        return "samsa 0.3.11 is not installed (pip install -e '.[test]')"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from lib2to3.main import main as lib2to3_main
    except ImportError:
        return "lib2to3 is gone from this Python (3.13+): samsa, Python 2 only, cannot be converted"
    target = workdir / "samsa"
    shutil.copytree(next(iter(spec.submodule_search_locations)), target, ignore=shutil.ignore_patterns("__pycache__"))
    log = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        warnings.simplefilter("ignore")
        status = lib2to3_main("lib2to3.fixes", ["-w", "-n", "--no-diffs", "-j", "1", str(target)])
    if status != 0:
        return f"lib2to3 could not convert samsa (status {status})"
    for name in [m for m in sys.modules if m == "samsa" or m.startswith("samsa.")]:
        del sys.modules[name]
    sys.path.insert(0, str(workdir))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # Python 2 docstrings: invalid escapes
            client = importlib.import_module("samsa.client")
            socket_utils = importlib.import_module("samsa.utils.socket")
    finally:
        sys.path.remove(str(workdir))
    for module in (client, socket_utils):
        module.buffer = lambda obj, offset=0, size=None: memoryview(obj)[
            offset : None if size is None else offset + size
        ]
    client.crc32 = lambda data: (zlib.crc32(bytes(data)) ^ 0x80000000) - 0x80000000  # Python 2's signed crc32
    return client


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
