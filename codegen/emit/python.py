"""The fast pure-Python backend: straight-line decoders from the same IR.

For each entity version it prints one function
``decode_<entity>_v<N>(buf, pos, end, ...) -> (tuple, next_pos)`` that reads
fixed fields with one precompiled ``struct.Struct`` per run of fixed-width
fields, inlines the one-byte case of every varint, bounds every slice by the
enclosing length, and checks derived fields (lengths, counts, CRCs) as it goes.
``buf`` is ``bytes``. Values come back as tuples in schema order (``FIELDS_<ENTITY>_V<N>`` names
them); bit fields come back as dicts. Nothing here knows Kafka: it is the IR.

``contents`` says what to do with a compressed region: True decodes what it holds, False keeps its
bytes, and ``INSIDE_COMPRESSED`` (passed to decoders reading a decompressed stream) makes another
compressed region an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..schema import (
    ArrayType,
    BitsType,
    BytesType,
    EntityRef,
    EntityVersion,
    FixedRun,
    IntType,
    ResolvedField,
    ScalarType,
    Type,
    default_value,
    module_alias,
)
from .buffer import Code

_FMT = {"int8": "b", "int16": "h", "uint16": "H", "int32": "i", "int64": "q", "uint32": "I"}
_READ = {"varint": "read_varint", "varlong": "read_varlong", "uvarint": "read_uvarint"}
_ERR = {"corrupt": "CorruptError", "compression": "CompressionError", "magic": "UnknownMagicError"}


@dataclass
class FastFunction:
    name: str
    signature: str
    doc: str
    lines: list[str]
    fields: tuple[str, ...]
    call_args: str  # the signature's parameters, passed on (encoders: applied to each element x)
    compiled: bool  # the C kernel has this decoder
    array_params: str = ""  # encoders: the parameters of the _array variant

    @property
    def array_signature(self) -> str:
        return self.call_args.replace("pos, end", "pos, end, count")


@dataclass
class FastModule:
    name: str
    source_file: str
    source_sha256: str
    imports: list[str]
    structs: list[tuple[str, str]] = field(default_factory=list)  # (name, format)
    tables: list[tuple[str, str]] = field(default_factory=list)  # (name, python literal)
    functions: list[FastFunction] = field(default_factory=list)
    encoders: list[FastFunction] = field(default_factory=list)

    @property
    def nested_compression(self) -> bool:
        """Whether a decoder here reads a decompressed stream (and so names INSIDE_COMPRESSED)."""
        return any("INSIDE_COMPRESSED" in line for fn in self.functions for line in fn.lines)


class _Writer(Code):
    """One function's code, registering the structs and tables it uses with its module."""

    def __init__(self, mod: FastModule, ev: EntityVersion):
        super().__init__(depth=2)  # inside def + try
        self.mod, self.ev = mod, ev

    def struct(self, fmt: str) -> str:
        for name, existing in self.mod.structs:
            if existing == fmt:
                return name
        name = f"_S{len(self.mod.structs)}"
        self.mod.structs.append((name, fmt))
        return name

    def table(self, name: str, literal: str) -> str:
        if (name, literal) not in self.mod.tables:
            self.mod.tables.append((name, literal))
        return name


def _ident(path: str) -> str:
    return path.replace(".", "_")


def fast_function(mod: FastModule, ev: EntityVersion) -> FastFunction:
    w = _Writer(mod, ev)
    opts = ev.needs_options
    fields = ev.fields
    i = 0
    while i < len(fields):
        if i in ev.fixed_runs:
            run = ev.fixed_runs[i]
            _emit_fixed_run(w, run)
            i += len(run.fields)
            continue
        for owner in ev.covered_starts.get(fields[i].name, ()):
            _start_cover(w, owner, "pos")
        _emit_field(w, fields[i])
        i += 1
    if ev.flexible:
        _emit_tagged_section(w)
    for f in ev.absent:
        w(f"v_{f.name} = {default_value(ev, f, tuples=True)!r}")
    # derived checks at the end of the entity
    for f in fields:
        d = f.field.derived
        if d and d.kind == "length":
            w(f"if pos != end_{f.name}:")
            w(
                f'    raise BadLengthError(f"{f.name} says {{v_{f.name}}} bytes but the fields it covers take '
                f'{{pos - start_{f.name}}}", position=start_{f.name}, field={f.name!r})'
            )
        if d and d.kind == "crc":
            fn = "crc32c" if d.algorithm == "crc32c" else "crc32"
            w("if verify_crc:")
            w(f"    computed = {fn}(memoryview(buf)[start_{f.name}:pos])")
            w(f"    if computed != v_{f.name}:")
            w(
                f"        raise CrcMismatchError(record_corrupt_message(v_{f.name}, computed), "
                f"position=at_{f.name}, field={f.name!r})"
            )
    names = ev.value_names
    w(f"return ({', '.join('v_' + n for n in names)}{',' if len(names) == 1 else ''}), pos")
    body = (
        ["    try:"]
        + w.lines
        + [
            "    except (IndexError, struct_error):",
            f'        raise TruncatedError("{ev.name} v{ev.version} runs past the end of its bytes", position=pos)'
            " from None",
            "    except UnicodeDecodeError as exc:",
            f'        raise CorruptError(f"{ev.name} v{ev.version}: not valid UTF-8 ({{exc.reason}})", position=pos)'
            " from None",
        ]
    )
    sig = (
        "buf, pos=0, end=None, verify_crc=True, limit=DEFAULT_LIMIT, contents=True" if opts else "buf, pos=0, end=None"
    )
    call = "buf, pos, end, verify_crc, limit, contents" if opts else "buf, pos, end"
    # the same check and error as the compiled kernel's entry points
    pre = [
        "    if end is None:",
        "        end = len(buf)",
        "    if not 0 <= pos <= end <= len(buf):",
        '        raise BadLengthError("need 0 <= pos <= end <= len(buf)", position=pos)',
    ]
    return FastFunction(
        f"decode_{ev.suffix}",
        sig,
        f"Decode {ev.name} v{ev.version} at buf[pos:end]; returns (values in FIELDS order, next pos).",
        pre + body,
        names,
        call,
        ev.compiled,
    )


def _start_cover(w: _Writer, owner: str, pos_expr: str) -> None:
    w(f"start_{owner} = {pos_expr}")
    if w.ev.field(owner).derived_kind == "length":
        # Everything the length covers is bounded by it: nothing inside can read past.
        minimum = w.ev.min_covered(owner)
        w(f"if v_{owner} < {minimum}:")
        w(
            f'    raise BadLengthError(f"{owner} is {{v_{owner}}}, less than the {minimum} bytes the fields it '
            f'covers need at least", position=start_{owner}, field={owner!r})'
        )
        w(f"end_{owner} = start_{owner} + v_{owner}")
        w(f"if end_{owner} > end:")
        w(
            f'    raise TruncatedError(f"{owner} says {{v_{owner}}} bytes but only {{end - start_{owner}}} '
            f'remain", position=start_{owner}, field={owner!r})'
        )
        w(f"end = end_{owner}")


def _fixed_int(f: ResolvedField) -> IntType:
    """The integer a member of a fixed run holds: its own type or its bit field's base (see
    ResolvedField.is_fixed_scalar)."""
    t = f.type.base if isinstance(f.type, BitsType) else f.type
    assert isinstance(t, IntType), f.name
    return t


def _emit_fixed_run(w: _Writer, run: FixedRun) -> None:
    fmt = ">" + "".join(_FMT[_fixed_int(f).name] for f in run.fields)
    names = [f"v_{f.name}" for f in run.fields]
    starts = w.ev.covered_starts
    offset = 0
    for owner in starts.get(run.fields[0].name, ()):
        _start_cover(w, owner, "pos")  # check a length before reading what it covers
    if fmt in (">b", ">B"):  # one byte: indexing beats struct
        w(f"{names[0]} = buf[pos]")
        if fmt == ">b":
            w(f"if {names[0]} > 127:")
            w(f"    {names[0]} -= 256")
    else:
        target = f"({', '.join(names)})" if len(names) > 1 else f"{names[0]},"
        w(f"{target} = {w.struct(fmt)}.unpack_from(buf, pos)")
    for f in run.fields:
        for owner in starts.get(f.name, ()) if f is not run.fields[0] else ():
            _start_cover(w, owner, f"pos + {offset}")
        if f.field.derived and f.field.derived.kind == "crc":
            w(f"at_{f.name} = pos + {offset}" if offset else f"at_{f.name} = pos")
        offset += f.fixed_size
    w(f"pos += {offset}")
    for f in run.fields:
        _post_fixed(w, f)


def _post_fixed(w: _Writer, f) -> None:
    fld, ev = f.field, w.ev
    v = f"v_{f.name}"
    if fld.const is not None:
        value = ev.version if fld.const == "version" else fld.const
        w(f"if {v} != {value}:")
        w(
            f'    raise {_ERR[fld.error]}(f"{f.name} is {{{v}}}, expected {value}", position=pos - '
            f"{_bytes_after(ev, f)}, field={f.name!r})"
        )
    if fld.enum:
        _emit_enum(w, v, v, fld.enum, f.name, f"pos - {_bytes_after(ev, f)}")
    if isinstance(f.type, BitsType):
        raw = w.name(f"{f.name}_bits")
        width = f.type.base.max_width * 8  # the loader checked the base is fixed-width (max_width is its width)
        w(f"{raw} = {v} & {(1 << width) - 1:#x}")
        parts = []
        for b in sorted(f.type.bits, key=lambda b: b.low):
            expr = f"({raw} >> {b.low}) & {(1 << b.width) - 1:#x}" if b.low else f"{raw} & {(1 << b.width) - 1:#x}"
            if b.kind == "flag":
                parts.append(f"{b.name!r}: bool({expr})")
            elif b.enum:  # kind "enum"
                tv = w.name(f"{f.name}_{b.name}")
                w(f"{tv} = {expr}")
                _emit_enum(w, tv, tv, b.enum, f"{f.name}.{b.name}", f"pos - {_bytes_after(ev, f)}")
                parts.append(f"{b.name!r}: {tv}")
            else:
                parts.append(f"{b.name!r}: {expr}")
        w(f"{v} = {{{', '.join(parts)}}}")


def _bytes_after(ev: EntityVersion, f: ResolvedField) -> int:
    """Bytes between the start of fixed field f and the end of its fixed run (pos after the run)."""
    i = ev.index(f.name)
    run = ev.run_of(i)
    return sum(g.fixed_size for g in run.fields[i - run.start :])


def _emit_enum(w: _Writer, target: str, raw: str, enum: str, path: str, position: str) -> None:
    e = w.ev.enum(enum)
    values = w.ev.enum_values(enum)
    table = w.table(f"_{enum.upper()}_V{w.ev.version}", repr({v: k for k, v in values.items()}))
    allowed = ", ".join(f"{v}={k}" for k, v in values.items())
    if e.open:
        w(f"{target} = {table}.get({raw}, {raw})")
        return
    name = w.name(f"{_ident(path)}_name")
    w(f"{name} = {table}.get({raw})")
    w(f"if {name} is None:")
    w(
        f'    raise {_ERR[e.error]}(f"unknown or disallowed {enum} {{{raw}}} (allowed here: {allowed})", '
        f"position={position}, field={path!r})"
    )
    w(f"{target} = {name}")


def _read_int(w: _Writer, target: str, t: IntType) -> None:
    """Read one integer of type t at pos into target, advancing pos."""
    if t.fixed:
        s = w.struct(">" + _FMT[t.name])
        w(f"{target} = {s}.unpack_from(buf, pos)[0]")
        w(f"pos += {t.width}")
        return
    b = "first_byte"  # consumed right here: one name serves every read
    w(f"{b} = buf[pos]")
    w(f"if {b} < 128:")
    if t.zigzag:
        w(f"    {target} = ({b} >> 1) ^ -({b} & 1)")
    else:
        w(f"    {target} = {b}")
    w("    pos += 1")
    w("else:")
    w(f"    {target}, pos = {_READ[t.name]}(buf, pos)")


def _emit_tagged_section(w: _Writer) -> None:
    """The tagged section ending a flexible struct: known tags decoded into their fields (defaults
    when absent), unknown ones kept as (tag, bytes) so re-encoding is byte-exact."""
    ev = w.ev
    for f in ev.tagged:
        w(f"v_{f.name} = {default_value(ev, f, tuples=True)!r}")
    w("v__unknown_tags = []")
    w("tagged_entries, after_tags = read_tagged(buf, pos, end)")
    w("outer_end = end")
    w("for tag, pos, end in tagged_entries:")
    w.depth += 1
    for k, f in enumerate(ev.tagged):
        w(f"{'if' if k == 0 else 'elif'} tag == {f.field.tag}:")
        w.depth += 1
        _emit_field(w, f)
        w.depth -= 1
    if ev.tagged:
        w("else:")
        w.depth += 1
    w("v__unknown_tags.append((tag, bytes(buf[pos:end])))")
    w("pos = end")
    if ev.tagged:
        w.depth -= 1
    w("if pos != end:")
    w(
        '    raise BadLengthError(f"tagged field {tag} holds {end - pos} bytes more than its value", '
        'position=pos, field=f"tag {tag}")'
    )
    w.depth -= 1
    w("pos, end = after_tags, outer_end")


def _read_count(w: _Writer, target: str, t: BytesType | ArrayType) -> None:
    """A length or count prefix into target; a compact one (uvarint n + 1) gives -1 for null."""
    if t.compact:
        _read_int(w, target, _UVARINT)
        w(f"{target} -= 1")
    else:
        assert t.prefix is not None, t  # only a prefixed array has its count read
        _read_int(w, target, t.prefix)


def _emit_bytes(w: _Writer, target: str, t: BytesType, path: str) -> None:
    if t.prefix is None:  # no length of its own: to the end of the covering length (the loader checks)
        w(f"{target} = buf[pos:end].decode('utf-8', 'replace')" if t.text else f"{target} = buf[pos:end]")
        w("pos = end")
        return
    n = w.name(f"{_ident(path)}_length")
    _read_count(w, n, t)
    w(f"if {n} < 0:")
    if t.nullable:
        w(f"    {target} = None")
    else:
        w(
            f'    raise BadLengthError(f"length {{{n}}} is negative but {path} cannot be null", '
            f"position=pos, field={path!r})"
        )
    w("else:")
    e = w.name(f"{_ident(path)}_end")
    w(f"    {e} = pos + {n}")
    w(f"    if {e} > end:")
    w(
        f'        raise TruncatedError(f"{path}: needs {{{n}}} bytes but only {{end - pos}} remain", '
        f"position=pos, field={path!r})"
    )
    if t.text:
        # Kafka's Java client decodes text (header keys) with replacement characters, never refusing it
        w(f"    {target} = buf[pos:{e}].decode('utf-8', 'replace')")
    else:
        w(f"    {target} = buf[pos:{e}]")
    w(f"    pos = {e}")


def _element_call(w: _Writer, t: Type, buf: str, pos: str, end: str, contents: str = "contents") -> str:
    """Expression decoding one element, evaluating to (value, pos). ``contents`` is INSIDE_COMPRESSED
    inside a decompressed stream: a compressed region there is an error (one wrapper level, no recursion)."""
    if isinstance(t, EntityRef):
        child = w.ev.child(t.name)
        fn = f"{_ref(w, t.name)}decode_{child.suffix}"
        extra = f", verify_crc, limit, {contents}" if child.needs_options else ""
        return f"{fn}({buf}, {pos}, {end}{extra})"
    raise NotImplementedError(f"arrays of {t!r} in the fast backend")


def _alias(name: str) -> str:
    return module_alias(name)


def _ref(w: _Writer, entity: str) -> str:
    """How the module of ``w``'s entity names a function of ``entity``'s: through its import, or bare for
    itself (a Kafka 0.7 compressed message holds messages of its own entity)."""
    return "" if entity == w.ev.name else f"{_alias(entity)}."


def _guarded(w: _Writer, path: str, lines) -> None:
    """Emit lines that decode nested entities: their errors get ``path`` in front of their field."""
    w("try:")
    w.depth += 1
    lines()
    w.depth -= 1
    w("except DecodeError as exc:")
    w(f"    raise exc.inside({path!r}) from None")


def _emit_array(
    w: _Writer,
    target: str,
    t: ArrayType,
    count: str | None,
    buf: str,
    path: str,
    contents: str = "contents",
    negative: str = "RecordCountError",
) -> None:
    """Decode an array from buf at pos..end (count elements, or until end); a negative count raises
    ``negative``."""
    if count is not None:
        w(f"if {count} < 0:")
        w(f'    raise {negative}(f"{path}: negative count {{{count}}}", position=pos, field={path!r})')
        w(f"if {count} > end - pos:")
        w(
            f'    raise RecordCountError(f"{path}: {{{count}}} elements cannot fit in the {{end - pos}} bytes left",'
            f" position=pos, field={path!r})"
        )
        if isinstance(t.element, EntityRef):
            # one call decodes them all: the compiled kernel replaces it when present
            call = _element_call(w, t.element, buf, "pos", "end")
            fn, args = call.split("(", 1)
            _guarded(
                w,
                path,
                lambda: w(
                    f"{target}, pos = {fn}_array({args[:-1]}, {count})"
                    if "verify_crc" not in args
                    else f"{target}, pos = {fn}_array({buf}, pos, end, {count}, verify_crc, limit, {contents})"
                ),
            )
            return
    items = w.name(f"{_ident(path)}_items")
    w(f"{items} = []")
    item = w.name("item")

    def loop():
        if count is not None:
            w(f"for {items}_i in range({count}):")
            w("    if pos >= end:  # framed bytes that end before the count does: the count lies")
            w(
                f'        raise RecordCountError(f"the count says {{{count}}} elements but the bytes end after '
                f'{{{items}_i}}", position=pos)'
            )
        else:
            w("while pos < end:")
        if isinstance(t.element, EntityRef):
            w(f"    {item}, pos = {_element_call(w, t.element, buf, 'pos', 'end', contents)}")
        else:  # an array of integers, uuids or strings, read inline
            w.depth += 1
            _emit_primitive(w, item, t.element, path)
            w.depth -= 1
        w(f"    {items}.append({item})")

    _guarded(w, path, loop)
    w(f"{target} = {items}")


def _emit_field(w: _Writer, f: ResolvedField) -> None:
    fld, t, v = f.field, f.type, f"v_{f.name}"
    if fld.compressed and isinstance(t, ArrayType):
        _emit_compressed_array(w, f)
        return
    if fld.compressed:
        _emit_compressed_bytes(w, f)
        return
    d = fld.derived
    if isinstance(t, IntType):
        if d and d.kind == "crc":
            w(f"at_{f.name} = pos")
        _read_int(w, v, t)
        if fld.enum:
            _emit_enum(w, v, v, fld.enum, f.name, "pos")
        return
    if isinstance(t, ScalarType):
        _emit_scalar(w, v, t)
        return
    if isinstance(t, BytesType):
        _emit_bytes(w, v, t, f.name)
        return
    if isinstance(t, EntityRef):
        if t.nullable:  # an int8 presence marker: negative is null
            w("marker = buf[pos]")
            w("pos += 1")
            w("if marker > 127:")
            w(f"    {v} = None")
            w("else:")
            w.depth += 1
        _guarded(w, f.name, lambda: w(f"{v}, pos = {_element_call(w, t, 'buf', 'pos', 'end')}"))
        if t.nullable:
            w.depth -= 1
        return
    if isinstance(t, ArrayType):
        if t.prefix is not None:
            n = w.name(f"{f.name}_count")
            _read_count(w, n, t)
            if t.nullable:
                w(f"if {n} < 0:")
                w(f"    {v} = None")
                w("else:")
                w.depth += 1
            # a negative count inside a record is an invalid record (Kafka's DefaultRecord raises
            # InvalidRecordException for a negative header count), not a record count
            _emit_array(w, v, t, n, "buf", f.name, negative="CorruptError")
            if t.nullable:
                w.depth -= 1
        else:
            _emit_array(w, v, t, f"v_{t.count_field}" if t.count_field else None, "buf", f.name)
        return
    raise NotImplementedError(f"fast backend: {t!r}")


def _emit_primitive(w: _Writer, target: str, t: Type, path: str) -> None:
    """One integer, scalar or bytes value at pos into target (an element of an array of primitives)."""
    if isinstance(t, IntType):
        _read_int(w, target, t)
    elif isinstance(t, ScalarType):
        _emit_scalar(w, target, t)
    elif isinstance(t, BytesType):
        _emit_bytes(w, target, t, path)
    else:
        raise NotImplementedError(f"fast backend: arrays of {t!r}")


def _emit_scalar(w: _Writer, target: str, t: ScalarType) -> None:
    if t.name == "bool":
        w(f"{target} = buf[pos] != 0")
    elif t.name == "float64":
        w(f"{target} = {w.struct('>d')}.unpack_from(buf, pos)[0]")
    else:
        w("if pos + 16 > end:")
        w('    raise TruncatedError("a uuid needs 16 bytes", position=pos)')
        w(f"{target} = UUID(bytes=bytes(buf[pos : pos + 16]))")
    w(f"pos += {t.width}")


def _codec_expr(fld) -> str:
    head, *rest = fld.compressed.codec_path
    return f"v_{head}" + "".join(f"[{p!r}]" for p in rest)


def _emit_compressed_array(w: _Writer, f) -> None:
    """Records that run to the end of the covering length, maybe one compressed stream."""
    t, fld = f.type, f.field
    codec = _codec_expr(fld)
    v = f"v_{f.name}"
    w("if not contents:")
    w(f"    {v} = bytes(buf[pos:end])")
    w("else:")
    w.depth += 1
    w(f"if {codec} == 'none':")
    w.depth += 1
    _emit_array(w, v, t, f"v_{t.count_field}" if t.count_field else None, "buf", f.name)
    w("if pos != end:")
    w(f'    raise BadLengthError(f"{{end - pos}} bytes left over after {f.name}", position=pos, field={f.name!r})')
    w.depth -= 1
    w("else:")
    w.depth += 1
    _emit_decompress(w, f, codec, "memoryview(buf)[pos:end]", "pos")
    w("try:")
    w.depth += 1
    _emit_array(w, v, t, f"v_{t.count_field}" if t.count_field else None, "buf", f.name, "INSIDE_COMPRESSED")
    w("if pos != end:")
    w(f'    raise BadLengthError(f"{{end - pos}} bytes left over after {f.name}", position=pos, field={f.name!r})')
    w.depth -= 1
    _emit_in_stream(w, f, codec)
    w("buf, pos, end = outer")
    w("pos = end")
    w.depth -= 2
    w("pos = end")


def _emit_compressed_bytes(w: _Writer, f) -> None:
    t, fld = f.type, f.field
    codec = _codec_expr(fld)
    v = f"v_{f.name}"
    _emit_bytes(w, v, t, f.name)
    w(f"if {codec} != 'none' and contents:")
    w.depth += 1
    w(f"if {v} is None:")
    w(f'    raise CorruptError(f"compressed ({{{codec}}}) wrapper has a null value", position=pos, field={f.name!r})')
    _emit_decompress(w, f, codec, v, f"pos - len({v})")
    w("try:")
    w.depth += 1
    _emit_array(w, v, fld.compressed.contents, None, "buf", f.name, "INSIDE_COMPRESSED")
    w.depth -= 1
    _emit_in_stream(w, f, codec)
    w("buf, pos, end = outer")
    w.depth -= 1


def _emit_decompress(w: _Writer, f, codec: str, data: str, start: str) -> None:
    """Decompress ``data`` (stored at ``start``) and switch to the decompressed stream. A compressed
    region inside a decompressed stream is refused: Kafka allows one wrapper level, and refusing it
    bounds recursion and memory."""
    w("if contents == INSIDE_COMPRESSED:")
    w(
        f'    raise CorruptError(f"a compressed ({{{codec}}}) {f.name} inside a compressed stream: only one '
        f'level of compression is allowed", position={start}, field={f.name!r})'
    )
    w(f"start_{f.name} = {start}")
    w("try:")
    w(f"    data = decompress({codec}, {data}, magic={w.ev.version}, max_size=limit)")
    w("except DecodeError as exc:")
    w(f"    raise exc.at(start_{f.name}).inside({f.name!r}) from None")
    w("outer = (buf, pos, end)")
    w("buf, pos, end = data, 0, len(data)")


def _emit_in_stream(w: _Writer, f, codec: str) -> None:
    """Errors inside a decompressed stream: positioned at the stored region, the message says where in the stream."""
    w("except DecodeError as exc:")
    w(f"    raise exc.in_stream(start_{f.name}, {codec}) from None")
    w("except (IndexError, struct_error):")
    w(
        f'    raise TruncatedError(f"{f.name}: runs past the end of the decompressed {{{codec}}} stream (at byte '
        f'{{pos}})", position=start_{f.name}, field={f.name!r}) from None'
    )


def fast_module(name: str, source_file: str, source_sha: str, versions: list[EntityVersion]) -> FastModule:
    refs = sorted({r for ev in versions for r in ev.refs})
    mod = FastModule(name, source_file, source_sha, [f"from . import {r} as {_alias(r)}" for r in refs if r != name])
    for ev in versions:
        mod.functions.append(fast_function(mod, ev))
        mod.encoders.append(fast_encoder(mod, ev))
    return mod


# ---------------------------------------------------------------------------- encoders

_ENC_VARINT = {"varint": "encode_varint", "varlong": "encode_varlong", "uvarint": "encode_uvarint"}
_UVARINT = IntType("uvarint", None, False, 32)


def _packer(w: _Writer, t: Type) -> str:
    """Expression prefix turning an int into its bytes: `<fn>(x)` (derived, const and enum fields are
    integers: the loader checks)."""
    assert isinstance(t, IntType), t
    if not t.fixed:
        return _ENC_VARINT[t.name]
    return f"{w.struct('>' + _FMT[t.name])}.pack"


def fast_encoder(mod: FastModule, ev: EntityVersion) -> FastFunction:
    """``encode_<entity>_v<N>(values, level=None) -> bytes``: values in FIELDS order
    (derived and const slots are ignored and computed)."""
    w = _Writer(mod, ev)
    w.depth = 2
    fields = ev.fields
    names = [f"b_{f.name}" for f in fields]
    deferred = []  # derived lengths and CRCs, filled in once the bytes they cover exist
    for i, f in enumerate(fields):
        fld, t = f.field, f.type
        b = names[i]
        x = f"v[{i}]"
        d = fld.derived
        if d and d.kind in ("length", "crc"):
            deferred.append(i)
            continue
        if d and d.kind == "count":
            assert d.of is not None, f.name  # a count names its array (the loader checks)
            w(f"{b} = {_packer(w, t)}(len(v[{ev.index(d.of)}]))")
        elif fld.const is not None:
            value = ev.version if fld.const == "version" else fld.const
            w(f"{b} = {_packer(w, t)}({value})")
        elif fld.enum:
            table = w.table(f"_{fld.enum.upper()}_V{ev.version}_IDS", repr(ev.enum_values(fld.enum)))
            w(f"{b} = {_packer(w, t)}({table}[{x}] if {x}.__class__ is str else {x})")
        elif isinstance(t, BitsType):
            parts = []
            for g in t.bits:
                if g.enum:  # kind "enum"
                    table = w.table(f"_{g.enum.upper()}_V{ev.version}_IDS", repr(ev.enum_values(g.enum)))
                    val = f"{table}[{x}[{g.name!r}]]"
                elif g.kind == "flag":
                    val = f"(1 if {x}[{g.name!r}] else 0)"
                else:
                    val = f"{x}.get({g.name!r}, 0)"
                parts.append(f"({val} << {g.low})" if g.low else val)
            raw = w.name(f"{f.name}_bits")
            w(f"{raw} = {parts[0]}")
            for part in parts[1:]:  # one group a line
                w(f"{raw} |= {part}")
            if t.base.signed:
                top = 1 << (t.base.max_width * 8 - 1)  # the loader checked the base is fixed-width
                w(f"if {raw} >= {top:#x}:")
                w(f"    {raw} -= {top * 2:#x}")
            w(f"{b} = {_packer(w, t.base)}({raw})")
        elif fld.compressed:
            codec = _codec_value(ev, fld)
            if isinstance(t, ArrayType):
                w(f"{b} = {_array_bytes(w, t, x)}")
                w(f"if {codec} != 'none':")
                w(f"    {b} = compress_cached({codec}, {b}, {ev.version}, level)")
            else:
                contents = fld.compressed.contents
                # compressed bytes hold the array ``contents`` names (the loader requires it when the field is not one)
                assert isinstance(t, BytesType) and isinstance(contents, ArrayType), f.name
                w(f"if {codec} == 'none':")
                w.depth += 1
                _bytes_value(w, b, t, x)
                w.depth -= 1
                w("else:")
                w(f"    data = compress_cached({codec}, {_array_bytes(w, contents, x)}, {ev.version}, level)")
                w(f"    {b} = data" if t.prefix is None else f"    {b} = {_packer(w, t.prefix)}(len(data)) + data")
        else:
            _encode_plain(w, b, t, x)
    if ev.flexible:
        names.append("b__tagged_fields")
        _encode_tagged_section(w)
    for i in reversed(deferred):
        f = fields[i]
        d = f.field.derived
        assert d is not None, f.name  # deferred: derived lengths and CRCs
        start = ev.index(f.covers)
        covered = names[start:]
        if d.kind == "length":
            w(f"{names[i]} = {_packer(w, f.type)}(sum(map(len, ({', '.join(covered)},))))")
        else:
            fn = "crc32c" if d.algorithm == "crc32c" else "crc32"
            # The head fields joined (a few bytes), then the last (a batch's records) continuing their CRC:
            # the largest part is read once, never copied into a joined whole first.
            crc = f"{fn}({covered[-1]})"
            if len(covered) > 1:
                crc = f"{fn}({covered[-1]}, {fn}(b''.join(({', '.join(covered[:-1])},))))"
            w(f"{names[i]} = {_packer(w, f.type)}({crc})")
    w(f"return b''.join(({', '.join(names)},))" if names else "return b''")  # a version with no fields (Kafka has some)
    opts = ev.needs_options or any(f.field.compressed for f in fields)
    body = (
        ["    try:"]
        + w.lines
        + [
            "    except (struct_error, OverflowError, TypeError, KeyError, IndexError, AttributeError) as exc:",
            f'        raise EncodeError(f"cannot encode {ev.name} v{ev.version}: {{exc}}") from None',
        ]
    )
    sig = "v, level=None" if opts else "v"
    return FastFunction(
        f"encode_{ev.suffix}",
        sig,
        f"Bytes of {ev.name} v{ev.version} from values in FIELDS order (derived fields are computed).",
        body,
        ev.value_names,
        "x, level" if opts else "x",
        ev.compiled_plain,
        "values, level=None" if opts else "values",
    )


def _encode_plain(w: _Writer, b: str, t: Type, x: str) -> None:
    """``b = the bytes of value x`` for an integer, scalar, bytes, struct or array."""
    ev = w.ev
    if isinstance(t, IntType):
        w(f"{b} = {_packer(w, t)}({x})")
    elif isinstance(t, ScalarType):
        if t.name == "bool":
            w(f"{b} = b'\\x01' if {x} else b'\\x00'")
        elif t.name == "float64":
            w(f"{b} = {w.struct('>d')}.pack({x})")
        else:
            w(f"{b} = {x}.bytes")
    elif isinstance(t, BytesType):
        _bytes_value(w, b, t, x)
    elif isinstance(t, EntityRef):
        child = ev.child(t.name)
        call = f"{_ref(w, t.name)}encode_{child.suffix}({x}{', level' if child.needs_options else ''})"
        w(f"{b} = b'\\xff' if {x} is None else b'\\x01' + {call}" if t.nullable else f"{b} = {call}")
    else:
        assert isinstance(t, ArrayType), t  # what is left is an array: bit fields never reach here
        body = _array_bytes(w, t, x)
        if t.prefix is None:
            w(f"{b} = {body}")
            return
        count = f"encode_uvarint(len({x}) + 1)" if t.compact else f"{_packer(w, t.prefix)}(len({x}))"
        if t.nullable:
            null = "b'\\x00'" if t.compact else f"{_packer(w, t.prefix)}(-1)"
            w(f"{b} = {null} if {x} is None else {count} + {body}")
        else:
            w(f"{b} = {count} + {body}")


def _encode_tagged_section(w: _Writer) -> None:
    """``b__tagged_fields``: the tagged fields that differ from their defaults, and the unknown tags
    the value carries, by tag."""
    ev = w.ev
    slot = {name: i for i, name in enumerate(ev.value_names)}
    known = ", ".join(str(f.field.tag) for f in ev.tagged)
    w(f"tags = check_unknown_tags(v[{slot['_unknown_tags']}], frozenset(({known}{',' if ev.tagged else ''})))")
    for f in ev.tagged:
        x = f"v[{slot[f.name]}]"
        w(f"if not is_default({x}, {default_value(ev, f, tuples=True)!r}):")
        w.depth += 1
        _encode_plain(w, "payload", f.type, x)
        w(f"tags.append(({f.field.tag}, payload))")
        w.depth -= 1
    w("b__tagged_fields = write_tagged(tags)")


def _codec_value(ev: EntityVersion, fld) -> str:
    head, *rest = fld.compressed.codec_path
    return f"v[{ev.index(head)}]" + "".join(f"[{p!r}]" for p in rest)


def _bytes_value(w: _Writer, target: str, t: BytesType, x: str) -> None:
    data = f"{x}.encode('utf-8')" if t.text else x
    if t.prefix is None:  # no length of its own, never null
        w(f"if {x} is None:")
        w(f'    raise EncodeError("{target[2:]} cannot be null")')
        w(f"{target} = {data}")
        return
    w(f"if {x} is None:")
    if t.nullable and t.compact:
        w(f"    {target} = b'\\x00'")
    elif t.nullable:
        w(f"    {target} = {_packer(w, t.prefix)}(-1)")
    else:
        w(f'    raise EncodeError("{target[2:]} cannot be null")')
    w("else:")
    if t.compact:
        w(f"    data = {data}")
        w(f"    {target} = encode_uvarint(len(data) + 1) + data")
    elif t.text:
        w(f"    data = {data}")
        w(f"    {target} = {_packer(w, t.prefix)}(len(data)) + data")
    else:
        w(f"    {target} = {_packer(w, t.prefix)}(len({x})) + {x}")


def _array_bytes(w: _Writer, t: ArrayType, x: str) -> str:
    """The elements' bytes; an :class:`~kcodec.runtime.encoded.EncodedArray` is taken as it is
    (its ``len()`` is the count the prefix says)."""
    return f"({x}.data if {x}.__class__ is EncodedArray else {_elements_bytes(w, t, x)})"


def _elements_bytes(w: _Writer, t: ArrayType, x: str) -> str:
    e = t.element
    if isinstance(e, EntityRef):
        child = w.ev.child(e.name)
        level = ", level" if child.needs_options else ""
        return f"{_ref(w, e.name)}encode_{child.suffix}_array({x}{level})"
    if isinstance(e, IntType):
        return f"b''.join(map({_packer(w, e)}, {x}))"
    if isinstance(e, ScalarType) and e.name == "uuid":
        return f"b''.join([u.bytes for u in {x}])"
    if isinstance(e, ScalarType) and e.name == "bool":
        return f"bytes([1 if b else 0 for b in {x}])"
    if isinstance(e, ScalarType):
        return f"b''.join(map({w.struct('>d')}.pack, {x}))"
    if isinstance(e, BytesType):
        data = "s.encode('utf-8')" if e.text else "bytes(s)"
        assert e.prefix is not None, e  # an array's bytes elements have Kafka's int16/int32 length
        prefix = "encode_uvarint(len(d) + 1)" if e.compact else f"{_packer(w, e.prefix)}(len(d))"
        return f"b''.join([{prefix} + d for d in [{data} for s in {x}]])"
    raise NotImplementedError(f"fast encoder: arrays of {e!r}")
