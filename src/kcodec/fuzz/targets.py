"""Every decoder an input reaches, and what each must never do.

For an entity version the decoders are its generated fast decoder and (every
``reference_every`` inputs) its construct reference; a top-level log entry
(``record_batch`` v2, ``legacy_log_entry`` v0/v1) also goes through the runtime
(:func:`~kcodec.records.decode.decode_entry`) and the readers: lenient,
strict, and resynchronising (``skip_corrupt``), the latter checked for its
promises: the batches, skipped ranges and partial tail tile the input exactly,
and the lenient reader's batches are a prefix of its batches.

The ``segment`` target is several entries of mixed magics in one log, one of
them damaged: every intact entry must still be read by the resynchronising
reader, and the valid prefix (what ``verify --recover`` keeps) must reach at
least the damaged entry.

An outcome is ``decoded`` or a :class:`~kcodec.errors.DecodeError` kind
(``crc``, ``truncated``, ...). Anything else a decoder raises, and any broken
promise, is *unexpected* and comes back with the decoder's name and traceback.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from kcodec.errors import DecodeError
from kcodec.records.decode import decode_entry
from kcodec.records.reader import BatchReader
from kcodec.tools.verify import valid_prefix

__all__ = [
    "TOP_LEVEL",
    "Unexpected",
    "Result",
    "check_entity",
    "check_segment",
    "replay",
    "SEGMENT",
    "use_package",
    "package",
]

TOP_LEVEL = {("record_batch", 2), ("legacy_log_entry", 0), ("legacy_log_entry", 1)}
SEGMENT = "segment"


class InvariantViolation(AssertionError):
    """A decoder broke one of its promises (no exception escaped, but the answer is wrong)."""


@dataclass
class Unexpected:
    decoder: str
    error: str  # exception type name
    message: str
    traceback: str


@dataclass
class Result:
    outcome: str = "decoded"
    unexpected: list[Unexpected] = field(default_factory=list)
    disagreement: str | None = None  # fast and construct differ on success / failure


def _call(result: Result, name: str, fn):
    """Run one decoder: (True, value) or (False, error kind); an unexpected exception is recorded."""
    try:
        return True, fn()
    except DecodeError as exc:
        return False, exc.kind
    except Exception as exc:
        result.unexpected.append(Unexpected(name, type(exc).__name__, str(exc)[:500], traceback.format_exc(limit=12)))
        return False, "unexpected"


_package = None  # a SchemaPackage (kcodec fuzz --schemas-from); None: kcodec's own generated codecs


def use_package(chosen) -> None:
    """Fuzz the entities of ``chosen`` (a :class:`~kcodec.tools.schema_package.SchemaPackage` generated from
    the user's Kafka) instead of kcodec's own; forked workers inherit the choice."""
    global _package
    _package = chosen
    _OPTIONS.clear()


def package():
    """The package whose codecs and decoders are fuzzed."""
    from kcodec.tools.schema_package import packaged_package

    return _package if _package is not None else packaged_package()


def _needs_options(entity: str, version: int) -> bool:
    """Whether the fast decoder takes verify_crc / limit / contents (the generator decides, from the IR)."""
    from kcodec.codegen.schema import resolve

    schemas = package().codecs.schema_set()
    return resolve(schemas, schemas.entities[entity], version).needs_options


_OPTIONS: dict = {}


def check_entity(
    entity: str, version: int, data: bytes, *, limit: int, reference: bool = True, valid: bool = False
) -> Result:
    """Every decoder of ``entity`` v``version`` on ``data``. ``valid``: the bytes are an unmutated encoding,
    which the schema-level decoders must accept."""
    r = Result()
    source = package()
    decode = source.fast_decoders[(entity, version)][0]
    key = (entity, version)
    if key not in _OPTIONS:
        _OPTIONS[key] = _needs_options(entity, version)
    if _OPTIONS[key]:
        ok, fast = _call(r, "fast", lambda: decode(data, 0, len(data), True, limit, True))
    else:
        ok, fast = _call(r, "fast", lambda: decode(data, 0, len(data)))
    r.outcome = "decoded" if ok else fast
    if valid and not ok and fast != "unexpected":
        r.unexpected.append(Unexpected("fast", "ValidInputRejected", f"a valid encoding failed with {fast}", ""))
    if reference:
        ref_ok, ref = _call(
            r, "construct", lambda: source.module.codec(entity, version).parse_prefix(data, max_decompressed_size=limit)
        )
        if ref_ok != ok and "unexpected" not in (ref, fast):
            r.disagreement = f"fast {'decoded' if ok else fast}, construct {'decoded' if ref_ok else ref}"
    if key in TOP_LEVEL:
        rt_ok, rt = _call(
            r, "decode_entry", lambda: decode_entry(data, 0, verify_crc=True, max_decompressed_size=limit)
        )
        r.outcome = "decoded" if rt_ok else rt
        _call(r, "decode_entry(no crc)", lambda: decode_entry(data, 0, verify_crc=False, max_decompressed_size=limit))
        _readers(r, data, limit, intact=())
    return r


def _readers(
    r: Result, data: bytes, limit: int, intact: tuple[tuple[int, int], ...], first_damage: int | None = None
) -> None:
    """The readers over ``data``, and their promises. ``intact``: (position, size) of entries that were not
    damaged (each that decodes on its own must be read by the resynchronising reader)."""
    lenient: dict[bool, list[tuple[int, bool]]] = {}
    for verify in (True, False):
        reader = BatchReader(data, verify_crc=verify, max_decompressed_size=limit)
        got: list = []
        _call(r, f"reader(verify_crc={verify})", lambda: got.extend((b.position, b.crc_valid) for b in reader))
        lenient[verify] = got
    strict = BatchReader(data, strict=True, max_decompressed_size=limit)
    _call(r, "reader(strict)", lambda: sum(1 for _ in strict))
    for verify in (True, False):
        reader = BatchReader(data, verify_crc=verify, skip_corrupt=True, max_decompressed_size=limit)
        ok, batches = _call(r, f"reader(skip_corrupt, verify_crc={verify})", lambda: list(reader))
        if not ok:
            continue
        _call(
            r,
            f"skip_corrupt promises (verify_crc={verify})",
            lambda: _check_skipping(data, reader, batches, lenient[verify], intact),
        )
    if first_damage is not None:
        ok, prefix = _call(r, "valid_prefix", lambda: valid_prefix(data, max_decompressed_size=limit))
        if ok and prefix[1] < first_damage:
            r.unexpected.append(
                Unexpected(
                    "valid_prefix",
                    "InvariantViolation",
                    f"kept {prefix[1]} bytes, but the first damage is at {first_damage}",
                    "",
                )
            )


def _check_skipping(data: bytes, reader: BatchReader, batches: list, lenient: list[tuple[int, bool]], intact) -> None:
    pieces = [(b.position, b.position + b.size, "batch") for b in batches]
    pieces += [(s.start, s.end, "skipped") for s in reader.skipped]
    pieces += [(s.start, s.end, "refused") for s in reader.refused]  # whole entries over the decompression cap
    if reader.partial_tail is not None:
        t = reader.partial_tail
        pieces.append((t.position, t.position + t.size, "tail"))
    pieces.sort()
    pos = 0
    for start, end, what in pieces:
        if start != pos or end <= start:
            raise InvariantViolation(f"{what} {start}..{end} does not follow byte {pos}: {pieces}")
        pos = end
    if pos != len(data):
        raise InvariantViolation(f"batches, skipped and refused ranges and tail end at {pos}, the input at {len(data)}")
    positions = [b.position for b in batches]
    for i, (p, crc_valid) in enumerate(lenient):
        if i < len(positions) and positions[i] == p:
            continue
        if not crc_valid:
            break  # a batch whose CRC fails may be skipped when a valid entry starts inside it
        raise InvariantViolation(f"the lenient reader read {lenient}, skipping read {positions}")
    read = set(positions)
    for p, n in intact:
        if p in read or any(b.position < p < b.position + b.size and b.crc_valid for b in batches):
            continue
        try:  # an intact entry must be read when it decodes on its own (a drawn value may break Kafka's rules)
            decode_entry(
                data[p : p + n], p, verify_crc=reader.verify_crc, max_decompressed_size=reader.max_decompressed_size
            )
        except DecodeError:
            continue
        raise InvariantViolation(
            f"the intact entry at byte {p} was not read (batches at {positions}, "
            f"skipped {[(s.start, s.end) for s in reader.skipped]})"
        )


def check_segment(data: bytes, intact: tuple[tuple[int, int], ...], first_damage: int, *, limit: int) -> Result:
    """A log of several entries; ``intact`` are (position, size) of undamaged entries, ``first_damage``
    where the damaged entry starts."""
    r = Result()
    reader = BatchReader(data, verify_crc=True, max_decompressed_size=limit)
    ok, kind = _call(r, "reader", lambda: sum(1 for _ in reader))
    r.outcome = kind if not ok else "truncated" if reader.partial_tail is not None else "decoded"
    _readers(r, data, limit, intact, first_damage)
    return r


def replay(data: bytes, meta: dict) -> Result:
    """Run a saved reproducer again: ``meta`` is its ``.json`` note (``target`` is "entity vN" or
    "segment"; a segment's note has ``intact`` and ``first_damage``)."""
    limit = meta.get("limit", 1 << 20)
    target = meta["target"]
    if target == SEGMENT:
        intact = tuple(tuple(x) for x in meta.get("intact", ()))
        return check_segment(data, intact, meta.get("first_damage", 0), limit=limit)
    entity, _, version = target.partition(" v")
    return check_entity(entity, int(version), data, limit=limit, reference=True)
