"""Compressed regions: inflate a stream (within the size limit) and walk what it holds as a position
space of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcodec.errors import CompressionError, KcodecError
from kcodec.runtime import compression as compressions
from kcodec.tools.inspect.spans import BAD, Span, plural

if TYPE_CHECKING:
    from kcodec.tools.inspect.walk import EntityWalker


def inflate(walker: EntityWalker, stream: Span, compression: str, raw: bytes, version: int) -> bytes | None:
    """The decompressed bytes of ``stream``, or None with the stream marked."""
    limit = walker.max_decompressed_size
    try:
        return compressions.decompress(compression, raw, magic=version, max_size=limit)
    except CompressionError as exc:
        # A compression codec this version does not allow (zstd before v2) is already marked on its
        # field; show the contents anyway, decoded as the first version that allows it.
        since = walker.schema.compression_since(compression)
        try:
            if since is None or since <= version:
                raise
            out = compressions.decompress(compression, raw, magic=since, max_size=limit)
        except KcodecError:
            stream.mark(BAD, f"cannot decompress the {compression} stream ({len(raw)} bytes): {exc.message}")
            return None
        stream.mark(BAD, f"{exc.message}; decompressed anyway as version {since} would")
        return out
    except KcodecError as exc:
        stream.mark(BAD, f"cannot decompress the {compression} stream ({len(raw)} bytes): {exc.message}")
        return None


def decompressed(
    walker: EntityWalker,
    stream: Span,
    compression: str,
    raw: bytes,
    ev,
    contents,
    path: str,
    values: dict,
    count: int | None,
    count_span: Span | None,
    hints: dict,
) -> Span | None:
    """The decompressed contents of a stream (elements of ``contents``), as a span of their own position
    space; None when the stream does not inflate."""
    out = inflate(walker, stream, compression, raw, ev.version)
    if out is None:
        return None
    stream.notes.append(f"compressed {compression} stream, {len(raw)} bytes → {len(out)} bytes decompressed")
    space = f"{path} ({compression}, decompressed)"
    dspan = Span(0, len(out), path, kind="decompressed", type=f"{compression} decompressed", space=space)
    dbuf = memoryview(out)
    els, pos, ok, n = walker.elements(contents, ev, dbuf, 0, len(out), path, space, count, values, hints)
    dspan.children.extend(els)
    dspan.value = n
    dspan.display = f"{len(out)} bytes decompressed from {len(raw)} bytes of {compression}, {n} element{plural(n)}"
    if ok and pos < len(out):
        gap = Span(pos, len(out), f"{path}.(unread)", kind="unread", raw=bytes(dbuf[pos:]), space=space)
        what = f"after the {n} elements the count says" if count is not None else "that hold no whole element"
        gap.mark(BAD, f"{len(out) - pos} bytes {what}")
        dspan.children.append(gap)
        if count_span is not None:
            count_span.mark(BAD, f"count says {count}, the decompressed stream holds more")
    if count is not None and n != count and ok:
        dspan.mark(BAD, f"{count} elements expected, {n} fit")
    return dspan
