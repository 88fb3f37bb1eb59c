"""Rules of the records layer the code review cannot keep by itself: records/ types no header offset or
bit mask (they come from the generated constants), errors are relocated by copy (``KcodecError.at`` /
``.inside``), never by assigning to a raised error, a CRC failure is worded one way, and the codec names by id
(from the schema's enum) are the runtime compression table's."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

import kcodec
from kcodec import errors as E
from kcodec.generated import legacy_log_entry, legacy_message, record_batch

SRC = Path(kcodec.__file__).parent
# log/ holds no numeric header offsets either (issue #10); it joins this list once segments.py is split.
NO_OFFSET_DIRS = ("records",)  # log/ has its own check (tests/test_segments.py)

# 0/1/-1, the magic values and the sizes of primitive types are not layout facts
_ALLOWED = {0, 1, 2, 4, 8}


def _layout_facts() -> set[int]:
    """Every position in an entry and every overhead the generator emits for the entry headers (a v0/v1
    message's fields placed after the 12-byte log overhead), and what follows from them (the 17 bytes up
    to the magic, the 49-byte minimum batchLength, the attributes' low byte)."""
    entry = legacy_log_entry.LEGACY_LOG_ENTRY_V0_OFFSET_MESSAGE
    facts = set()
    for module, shift in ((record_batch, 0), (legacy_log_entry, 0), (legacy_message, entry)):
        for name, value in vars(module).items():
            if isinstance(value, int) and "_OFFSET_" in name:
                facts.add(shift + value)
            elif isinstance(value, int) and name.endswith("_OVERHEAD"):
                facts.add(value)
    o = record_batch
    facts |= {
        o.RECORD_BATCH_V2_OFFSET_MAGIC + 1,
        o.RECORD_BATCH_V2_OVERHEAD - entry,
        o.RECORD_BATCH_V2_OFFSET_ATTRIBUTES + 1,
    }
    return facts - _ALLOWED


def retyped_facts(source: str) -> list[str]:
    """Numeric literals in ``source`` that retype a header offset (decimal) or a bit mask (a hex byte)."""
    facts = _layout_facts()
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.NUMBER:
            continue
        text = tok.string.lower().replace("_", "")
        try:
            value = int(text, 0)
        except ValueError:
            continue  # floats
        mask = text.startswith("0x") and value <= 0xFF and value not in _ALLOWED
        if mask or (value in facts and not text.startswith("0x")):
            found.append(f"line {tok.start[0]}: {tok.line.strip()}")
    return found


def test_the_check_finds_retyped_offsets_and_masks() -> None:
    assert retyped_facts("count = unpack_from(entry, 57)\n")
    assert retyped_facts("control = entry[22] & 0x20\n")
    assert retyped_facts("records = entry[61:]\n")
    assert not retyped_facts("size = 1 << 20\nmagic = entry[MAGIC_OFFSET]\nx = buf[pos + 1]\n")


@pytest.mark.parametrize("folder", NO_OFFSET_DIRS)
def test_no_numeric_header_offsets(folder: str) -> None:
    problems = []
    for path in sorted((SRC / folder).rglob("*.py")):
        problems += [f"{path.relative_to(SRC)} {p}" for p in retyped_facts(path.read_text())]
    assert not problems, "import these from kcodec.records.framing / the generated modules:\n" + "\n".join(problems)


_MUTATION = re.compile(r"\bexc\w*\.(position|field|message|base_offset)\s*\+?=(?!=)")


@pytest.mark.parametrize(
    "folder",
    ["runtime", "records", "log", "internal_topics", "tools", "commands", "spark", "bench", "fuzz", "generated"],
)
def test_errors_are_relocated_by_copy(folder: str) -> None:
    """Everywhere, the generated decoders too: one rule moves an error to where it happened."""
    root = Path(kcodec.generated.__file__).parent if folder == "generated" else SRC / folder
    hits = [
        f"{path.relative_to(root.parent)}:{n}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _MUTATION.search(line)
    ]
    assert not hits, "use KcodecError.at / .inside / .replace:\n" + "\n".join(hits)


def test_one_crc_wording() -> None:
    typed = [
        f"{path.relative_to(SRC)}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "errors.py" and "Record is corrupt (stored crc" in path.read_text()
    ]
    assert not typed, f"use kcodec.errors.record_corrupt_message: {typed}"
    assert E.record_corrupt_message(5, 7) == "Record is corrupt (stored crc = 5, computed crc = 7)"


def test_at_and_inside_return_relocated_copies() -> None:
    exc = E.CrcMismatchError("bad", position=3, field="crc")
    moved = exc.at(100, base_offset=42)
    assert (moved.position, moved.base_offset, moved.field) == (103, 42, "crc")
    assert (exc.position, exc.base_offset) == (3, None)  # the original is untouched
    assert type(moved) is E.CrcMismatchError and str(moved) == "bad (at byte 103, batch offset 42, field crc)"
    assert E.CorruptError("x", base_offset=7).at(5, base_offset=9).base_offset == 7  # known offsets stay
    assert E.CorruptError("x").at(5).position == 5  # no position: the start of the slice
    assert exc.inside("records").field == "records.crc"
    assert E.CorruptError("x", field="[2].size").inside("records").field == "records[2].size"
    assert E.CorruptError("x", field="records.key").inside("records").field == "records.key"
    assert E.CorruptError("x").inside("message.value").field == "message.value"
    assert exc.replace(message="worse").args == ("worse",)


def test_the_kernel_plan_names_every_record_field() -> None:
    from kcodec.records import projection
    from kcodec.records.model import Record

    items = {name: projection.constant(name) for name in Record._fields}
    assert [value for _, value in projection.record_plan(**items)] == list(Record._fields)  # in Record's order
    del items["magic"]
    with pytest.raises(TypeError, match="missing \\['magic'\\]"):
        projection.record_plan(**items)
    with pytest.raises(TypeError, match="unknown \\['offset_delta'\\]"):
        projection.record_plan(**items, magic=projection.constant(2), offset_delta=projection.field(0))


def test_the_codec_names_by_id_are_the_compression_tables() -> None:
    """framing.V2_CODEC_NAMES (the names the kernel's batch walks take, read from the schema's compression_type
    enum) and the runtime's compression table (CODECS, which may not import the generated enum) name every id
    alike: each is written once, and this holds the two together."""
    from kcodec.records.framing import V2_CODEC_NAMES
    from kcodec.runtime.compression import CODECS

    assert {i: name for i, name in enumerate(V2_CODEC_NAMES) if name is not None} == CODECS
