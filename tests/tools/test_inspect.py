"""``kcodec inspect``: the annotated view names every field at the right byte range (the worked
examples of tests/records/test_worked_examples.py), marks damage where it is and goes on, and works on
the shared vectors and on segments kcodec writes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kcodec.cli import main
from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE
from kcodec.tools.inspect import BAD, OK, Inspector, Span, render_text, strip_ansi
from tests.helpers.spans import assert_tiles

VECTORS = Path(__file__).parents[1] / "vectors" / "public"

# The worked examples, byte for byte.
EX_11_1 = bytes.fromhex(
    "00000000000000000000004000000000021c07770100000000000000000000000000000000000000000000ffffffffffffffffffff"
    "ffffffff000000011c000000066b65790a76616c756500"
)
EX_11_2 = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")
EX_11_3 = bytes.fromhex("00000000000000000000001e0cbc16df01000000000000000000000000036b65790000000576616c7565")
EX_11_4 = bytes.fromhex(
    "00000000000000000000004200000000026eb21b540030000000000000000000000000000000000000000000000000000003e80000"
    "ffffffff000000012000000008000000010c00000000000500"
)
EX_11_5 = bytes.fromhex(
    "00000000000000000000004f0000000002811987fe00030000000000000000000000000000000000000000ffffffffffffffffffff"
    "ffffffff0000000104224d186040820f0000801c000000066b65790a76616c75650000000000"
)
EX_11_7 = bytes.fromhex("1e00000002 6b 01 04 02 68 01 04 6832 02 78".replace(" ", ""))


def one(data: bytes, expand: bool = True) -> Span:
    spans = list(Inspector(expand=expand).entries(data))
    assert len(spans) == 1
    return spans[0]


def at(span: Span, path: str) -> tuple[int, int]:
    found = span.find(path)
    assert found is not None, f"no span {path!r}: {[s.path for s in span.walk()]}"
    return found.start, found.end


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- the worked examples

V2_HEADER = {  # DefaultRecordBatch's header: path -> (offset, size)
    "base_offset": (0, 8),
    "batch_length": (8, 4),
    "partition_leader_epoch": (12, 4),
    "magic": (16, 1),
    "crc": (17, 4),
    "attributes": (21, 2),
    "last_offset_delta": (23, 4),
    "base_timestamp": (27, 8),
    "max_timestamp": (35, 8),
    "producer_id": (43, 8),
    "producer_epoch": (51, 2),
    "base_sequence": (53, 4),
    "records_count": (57, 4),
}


def test_11_1_every_field_at_its_byte_range() -> None:
    span = one(EX_11_1)
    assert span.type == "record_batch v2" and (span.start, span.end) == (0, 76) and span.status == OK
    for path, (offset, size) in V2_HEADER.items():
        assert at(span, path) == (offset, offset + size), path
    expected = {  # the one-record v2 worked example, field by field; the record at @61
        "records": (61, 76),
        "records[0]": (61, 76),
        "records[0].length": (61, 62),
        "records[0].attributes": (62, 63),
        "records[0].timestamp_delta": (63, 64),
        "records[0].offset_delta": (64, 65),
        "records[0].key": (65, 69),
        "records[0].key.length": (65, 66),
        "records[0].key.data": (66, 69),
        "records[0].value": (69, 75),
        "records[0].value.length": (69, 70),
        "records[0].value.data": (70, 75),
        "records[0].headers": (75, 76),
        "records[0].headers.count": (75, 76),
    }
    for path, rng in expected.items():
        assert at(span, path) == rng, path
    values = {s.path: s.value for s in span.walk()}
    assert values["batch_length"] == 64 and values["magic"] == 2 and values["crc"] == 470251265
    assert values["producer_id"] == -1 and values["records_count"] == 1
    assert values["records[0].length"] == 14 and values["records[0].key.length"] == 3
    assert values["records[0].key"] == b"key" and values["records[0].value"] == b"value"
    assert values["attributes.compression"] == 0 and span.find("attributes.compression").display == "none (0)"
    crc = span.find("crc")
    assert "crc32c of bytes 21..75: stored 0x1c077701, computed 0x1c077701 OK" in crc.notes
    assert any("bytes 12..75 (64 bytes) OK" in n for n in span.find("batch_length").notes)
    assert_tiles(span, 0, 76)


def test_11_1_text_names_every_field_with_its_range() -> None:
    text = render_text(one(EX_11_1))
    lines = text.splitlines()
    assert lines[0] == "entry at byte 0: record_batch v2, 76 bytes, offset 0"

    def line(path: str) -> str:
        hits = [ln for ln in lines if f" {path} <" in ln or f" {path} =" in ln]
        assert hits, f"{path} missing in\n{text}"
        return hits[0]

    for path, (offset, size) in V2_HEADER.items():
        rng = f"{offset}..{offset + size - 1}" if size > 1 else str(offset)
        assert line(path).split()[0] == rng, line(path)
    assert line("crc").split()[1:5] == ["1c", "07", "77", "01"]
    assert "stored 0x1c077701, computed 0x1c077701 OK" in line("crc")
    assert line("records[0].key.data").split()[:4] == ["66..68", "6b", "65", "79"]
    assert line("records[0].key.data").endswith('= "key"')
    assert line("records[0].value.length").split()[:2] == ["69", "0a"]
    assert line("attributes.compression").strip().startswith("bits 0-2: 000")


def test_11_1_summary_is_one_line_per_record() -> None:
    text = render_text(one(EX_11_1, expand=False))
    record_lines = [ln for ln in text.splitlines() if "records[0]" in ln]
    assert len(record_lines) == 1
    assert record_lines[0].split()[0] == "61..75"
    assert 'offset 0, timestamp 0, key "key" (3 B), value "value" (5 B), headers 0' in record_lines[0]


@pytest.mark.parametrize("data,version,crc", [(EX_11_2, 0, 592888119), (EX_11_3, 1, 213653215)])
def test_11_2_and_11_3_legacy_messages(data: bytes, version: int, crc: int) -> None:
    span = one(data)
    assert span.type == f"legacy_log_entry v{version}" and span.status == OK
    shift = 8 * version  # the v1 timestamp
    expected = {
        "offset": (0, 8),
        "size": (8, 12),
        "message": (12, len(data)),
        "message.crc": (12, 16),
        "message.magic": (16, 17),
        "message.attributes": (17, 18),
        "message.key": (18 + shift, 25 + shift),
        "message.key.length": (18 + shift, 22 + shift),
        "message.key.data": (22 + shift, 25 + shift),
        "message.value": (25 + shift, 34 + shift),
        "message.value.length": (25 + shift, 29 + shift),
        "message.value.data": (29 + shift, 34 + shift),
    }
    if version:
        expected["message.timestamp"] = (18, 26)
    else:
        assert span.find("message.timestamp") is None
    for path, rng in expected.items():
        assert at(span, path) == rng, path
    assert span.find("size").value == len(data) - 12
    assert span.find("message.crc").value == crc
    assert any(
        n.startswith(f"crc32 of bytes 16..{len(data) - 1}") and n.endswith("OK") for n in span.find("message.crc").notes
    )
    assert_tiles(span, 0, len(data))


def test_11_4_control_record_key_and_marker_are_read() -> None:
    span = one(EX_11_4)
    assert span.status == OK
    assert span.find("attributes.transactional").value is True and span.find("attributes.control").value is True
    assert at(span, "records[0].key.data.type") == (68, 70)
    assert span.find("records[0].key.data.type").value == 1
    assert span.find("records[0].key.data.type").display == "commit (1)"
    assert at(span, "records[0].value.data.coordinator_epoch") == (73, 77)
    assert span.find("records[0].value.data.coordinator_epoch").value == 5
    summary = one(EX_11_4, expand=False).find("records[0]").display
    assert "control_record_key(version 0, type commit (1))" in summary
    assert "end_txn_marker(version 0, coordinator_epoch 5)" in summary
    assert_tiles(span, 0, 78)


def test_11_5_compressed_stream_and_decompressed_records() -> None:
    span = one(EX_11_5)
    assert span.status == OK
    stream = span.find("records.data")
    assert stream.kind == "stream" and (stream.start, stream.end) == (61, 91) and stream.space == "file"
    assert "compressed lz4 stream, 30 bytes → 15 bytes decompressed" in stream.notes
    dec = next(s for s in span.walk() if s.kind == "decompressed")
    assert dec.space != "file" and (dec.start, dec.end) == (0, 15)
    rec = dec.find("records[0]")
    assert rec.space == dec.space and (rec.start, rec.end) == (0, 15)
    assert at(dec, "records[0].key.data") == (5, 8) and dec.find("records[0].key.data").value is None
    assert dec.find("records[0].key").value == b"key"
    assert_tiles(span, 0, 91)
    assert_tiles(dec, 0, 15, space=dec.space)
    text = render_text(span)
    assert "records (decompressed): 15 bytes decompressed from 30 bytes of lz4" in text
    assert any(ln.split()[0] == "+5..7" and "records[0].key.data" in ln for ln in text.splitlines())


def test_11_7_record_with_headers() -> None:
    span = Inspector(expand=True).inspect_entity("record", 2, EX_11_7)
    expected = {
        "length": (0, 1),
        "key.data": (5, 6),
        "value": (6, 7),
        "headers.count": (7, 8),
        "headers[0].key.length": (8, 9),
        "headers[0].key.data": (9, 10),
        "headers[0].value": (10, 11),
        "headers[1].key.data": (12, 14),
        "headers[1].value.length": (14, 15),
        "headers[1].value.data": (15, 16),
    }
    for path, rng in expected.items():
        assert at(span, path) == rng, path
    assert span.find("value").value is None and span.find("value").display == "null"
    assert span.find("headers[1].key").value == "h2" and span.find("headers[1].value").value == b"x"
    assert span.status == OK
    assert_tiles(span, 0, 16)


# ---------------------------------------------------------------------------- damage


def test_bad_crc_is_marked_and_inspection_goes_on() -> None:
    data = bytearray(EX_11_1)
    data[72] ^= 0xFF  # inside the value
    span = one(bytes(data))
    crc = span.find("crc")
    assert crc.status == BAD
    assert any(n.startswith("BAD crc: crc32c of bytes 21..75: stored 0x1c077701, computed 0x") for n in crc.notes)
    assert span.status == BAD
    value = span.find("records[0].value.data")  # decoded after the mismatch
    assert value.status == OK and value.raw == b"va\x93ue"
    assert span.find("records[0].headers.count").status == OK
    text = render_text(span)
    assert [ln for ln in text.splitlines() if ln.startswith("!")][0].split()[1:3] == ["17..20", "1c"]


def test_truncation_stops_the_entry_and_says_so() -> None:
    span = one(EX_11_1[:70])
    assert span.status == BAD
    length = span.find("batch_length")
    assert any("truncated: length says 64 (bytes 12..75), only 58 bytes left" in n for n in length.notes)
    data = span.find("records[0].value.data")
    assert data.status == BAD and "truncated: length says 5, 0 bytes left" in data.notes
    assert any("cannot check" in n for n in span.find("crc").notes)


def test_truncated_fixed_field() -> None:
    span = one(EX_11_1[:25])
    lod = span.find("last_offset_delta")
    assert lod.status == BAD and lod.notes == ["truncated: needs 4 bytes, 2 left"] and lod.raw == b"\x00\x00"
    assert span.find("base_timestamp") is None


def test_overlong_varint_is_marked() -> None:
    data = bytearray(EX_11_1)
    data[61:66] = b"\xff\xff\xff\xff\xff"  # the record's length varint: 5 bytes, continuation still set
    span = one(bytes(data))
    length = span.find("records[0].length")
    assert length.status == BAD and (length.start, length.end) == (61, 66)
    assert any("Varint is too long" in n for n in length.notes)


def test_length_that_covers_more_than_the_fields() -> None:
    data = bytearray(EX_11_1)
    data[11] = 0x42  # batch_length 66: two bytes beyond the record
    span, nxt = Inspector().entry(memoryview(bytes(data) + b"\x00\x00" + EX_11_1), 0)
    assert nxt == 78
    length = span.find("batch_length")
    assert length.status == BAD and "length says 66, the fields cover 64" in length.notes
    gap = span.find("(unread)")
    assert (gap.start, gap.end) == (76, 78) and gap.status == BAD


def test_unknown_magic_skips_by_size_and_goes_on() -> None:
    bad = bytearray(EX_11_2)
    bad[16] = 7
    spans = list(Inspector().entries(bytes(bad) + EX_11_1))
    assert [s.type for s in spans] == ["unknown (magic 7)", "record_batch v2"]
    assert spans[0].status == BAD and spans[0].find("magic").status == BAD
    assert "unknown magic 7" in spans[0].find("magic").notes[0]
    assert (spans[1].start, spans[1].status) == (34, OK)


def test_partial_tail_is_shown() -> None:
    spans = list(Inspector().entries(EX_11_1 + b"\x00" * 10))
    assert [s.kind for s in spans] == ["entry", "tail"]
    assert spans[1].status == BAD and (spans[1].start, spans[1].end) == (76, 86)


def test_bad_compressed_stream() -> None:
    data = bytearray(EX_11_5)
    data[61] = 0x05  # the lz4 magic
    span = one(bytes(data))
    stream = span.find("records.data")
    assert stream.status == BAD and any("cannot decompress the lz4 stream" in n for n in stream.notes)


# ---------------------------------------------------------------------------- the command


@pytest.fixture
def ex_file(tmp_path: Path) -> Path:
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(EX_11_1 + EX_11_3 + EX_11_5)
    return p


def test_cli_text(capsys, ex_file: Path) -> None:
    code, out, err = run(capsys, "inspect", str(ex_file))
    assert code == EXIT_OK and err == ""
    assert "\x1b[" not in out  # not a terminal: plain text
    titles = [ln for ln in out.splitlines() if ln.startswith("entry ")]
    assert titles == [
        "entry at byte 0: record_batch v2, 76 bytes, offset 0",
        "entry at byte 76: legacy_log_entry v1, 42 bytes, offset 0",
        "entry at byte 118: record_batch v2, 91 bytes, offset 0",
    ]
    assert out.rstrip().splitlines()[-1] == f"-- {ex_file}: 3 entries, bytes 0..208 of 209: 0 damaged"
    assert "records[0].key.data" not in out  # records are summarised ...
    code, out, _ = run(capsys, "inspect", str(ex_file), "--records")
    assert "records[0].key.data" in out  # ... unless expanded


def test_cli_at_offset_batches(capsys, ex_file: Path) -> None:
    code, out, _ = run(capsys, "inspect", str(ex_file), "--at", "76")
    assert code == 0 and [ln for ln in out.splitlines() if ln.startswith("entry ")] == [
        "entry at byte 76: legacy_log_entry v1, 42 bytes, offset 0"
    ]
    code, out, _ = run(capsys, "inspect", str(ex_file), "--at", "76", "--batches", "2")
    assert len([ln for ln in out.splitlines() if ln.startswith("entry ")]) == 2
    code, out, _ = run(capsys, "inspect", str(ex_file), "--batches", "1")
    assert len([ln for ln in out.splitlines() if ln.startswith("entry ")]) == 1
    code, out, err = run(capsys, "inspect", str(ex_file), "--at", "500")
    assert code == EXIT_USAGE and "outside the file" in err
    code, out, err = run(capsys, "inspect", str(ex_file), "--offset", "9")
    assert code == EXIT_USAGE and "no entry holds offset 9" in err


def test_cli_offset_finds_the_entry(capsys, tmp_path: Path) -> None:
    from kcodec import encode_batch

    p = tmp_path / "seg.log"
    p.write_bytes(
        encode_batch([{"value": b"a"}, {"value": b"b"}], base_offset=0)
        + encode_batch([{"value": b"c"}], magic=1, base_offset=2)
        + encode_batch([{"value": b"d"}, {"value": b"e"}], magic=1, compression="gzip", base_offset=3)
        + encode_batch([{"value": b"f"}] * 3, base_offset=5, compression="zstd")
    )
    expect = {0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 7: 3}
    positions = [s.start for s in Inspector().entries(p.read_bytes())]
    for offset, index in expect.items():
        code, out, _ = run(capsys, "inspect", str(p), "--offset", str(offset), "--json")
        assert code == 0
        lines = out.splitlines()
        assert len(lines) == 1 and json.loads(lines[0])["start"] == positions[index], offset


def test_cli_json(capsys, ex_file: Path) -> None:
    code, out, _ = run(capsys, "inspect", str(ex_file), "--json", "--records")
    entries = [json.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in entries] == ["record_batch v2", "legacy_log_entry v1", "record_batch v2"]
    first = entries[0]
    crc = next(c for c in first["children"] if c["path"] == "crc")
    assert crc["start"] == 17 and crc["end"] == 21 and crc["hex"] == "1c077701" and crc["role"] == "crc"
    assert crc["value"] == 470251265 and crc["status"] == "ok"

    def walk(d):
        yield d
        for c in d.get("children", []):
            yield from walk(c)

    key = next(d for d in walk(first) if d["path"] == "records[0].key")
    assert key["value"] == b"key".hex() and key["display"] == '"key"'
    dec = [d for d in walk(entries[2]) if d["kind"] == "decompressed"]
    assert dec and dec[0]["space"] != "file" and dec[0]["children"][0]["space"] == dec[0]["space"]
    # without --records, records are one summary each
    code, out, _ = run(capsys, "inspect", str(ex_file), "--json")
    rec = next(d for d in walk(json.loads(out.splitlines()[0])) if d["path"] == "records[0]")
    assert rec["collapsed"] is True and "children" not in rec and "key" in rec["display"]


def test_cli_colour(capsys, ex_file: Path, monkeypatch) -> None:
    code, out, _ = run(capsys, "inspect", str(ex_file), "--color", "always")
    assert "\x1b[" in out
    plain = strip_ansi(out)
    code, out2, _ = run(capsys, "inspect", str(ex_file), "--color", "never")
    assert plain == out2

    import kcodec.commands.inspect as cmd

    monkeypatch.setattr(cmd.sys, "stdout", type("S", (), {"isatty": lambda self: True})())
    assert cmd._colour("auto") is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert cmd._colour("auto") is False


def test_cli_damage_exit_code_and_marks(capsys, tmp_path: Path) -> None:
    data = bytearray(EX_11_1)
    data[30] ^= 0x01
    p = tmp_path / "bad.log"
    p.write_bytes(bytes(data) + EX_11_2)
    code, out, err = run(capsys, "inspect", str(p))
    assert code == EXIT_CHECK_FAILED and err == ""
    bad = [ln for ln in out.splitlines() if ln.startswith("!")]
    assert any("BAD crc" in ln and ln.split()[1] == "17..20" for ln in bad)
    assert "entry at byte 76: legacy_log_entry v0" in out  # the next entry is still shown
    assert out.rstrip().endswith("2 entries, bytes 0..109 of 110: 1 damaged")


def test_cli_missing_file(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "inspect", str(tmp_path / "nope.log"))
    assert code == EXIT_USAGE and "no such file" in err and len(err.strip().splitlines()) == 1


def test_cli_empty_file(capsys, tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    code, out, _ = run(capsys, "inspect", str(p))
    assert code == 0 and "no entries (0 bytes)" in out


# ---------------------------------------------------------------------------- the shared vectors

_VECTORS = sorted(VECTORS.glob("*.bin"))
# Bytes Kafka itself refuses (zstd below magic 2) or that are cut short: inspection must still run.
_DAMAGED = {
    "pub_sarama_fetch_overflow",
    "pub_sarama_fetch_partial",
    "pub_sarama_magic2_message",
    "pub_sarama_v1_zstd_bulk",
    "pub_sarama_v1_zstd_empty_inner",
}


@pytest.mark.parametrize("path", _VECTORS, ids=lambda p: p.stem)
def test_shared_vectors(path: Path) -> None:
    meta = json.loads(path.with_suffix(".json").read_text())
    data = path.read_bytes()
    spans = list(Inspector(expand=True).entries(data))
    assert spans
    whole = [s for s in spans if s.kind == "entry"]
    if meta["expected"] == "ok" and path.stem not in _DAMAGED:
        assert all(s.status != BAD for s in spans), [
            (x.path, x.notes) for s in spans for x in s.walk() if x.status == BAD
        ]
        assert spans[-1].end == len(data)
        assert_tiles_all(spans, len(data))
        if meta.get("batchCount") is not None:
            assert len(whole) == meta["batchCount"]
        # every record of the decode is in the view, with its key and value
        for name in ("key", "value"):
            want = Counter(bytes.fromhex(r[name]) for r in meta.get("records", []) if r.get(name) is not None)
            seen = Counter(
                x.value
                for e in spans
                for x in e.walk()
                if x.kind == "field" and x.path.rsplit(".", 1)[-1] == name and isinstance(x.value, bytes)
            )
            assert not want - seen, (name, want - seen)
    else:
        assert any(s.status == BAD for s in spans)
    for s in spans:  # the text view renders every entry
        text = render_text(s)
        assert text.splitlines()[0].startswith(("entry at byte", "tail at byte"))


def assert_tiles_all(spans: list[Span], size: int) -> None:
    pos = 0
    for s in spans:
        assert s.start == pos
        assert_tiles(s, s.start, s.end)
        pos = s.end
    assert pos == size


@pytest.mark.parametrize(
    "path",
    [p for p in _VECTORS if p.stem not in _DAMAGED][:6] + [VECTORS / "pub_sarama_v2_gzip.bin"],
    ids=lambda p: p.stem,
)
def test_cli_on_vectors(capsys, path: Path) -> None:
    for extra in ([], ["--records"], ["--json"]):
        code, out, err = run(capsys, "inspect", str(path), *extra)
        assert code == EXIT_OK and err == "" and out


# ---------------------------------------------------------------------------- segments kcodec writes


@pytest.mark.parametrize(
    "magic,compression",
    [
        (2, "none"),
        (2, "gzip"),
        (2, "snappy"),
        (2, "lz4"),
        (2, "zstd"),
        (1, "none"),
        (1, "gzip"),
        (1, "lz4"),
        (0, "none"),
        (0, "snappy"),
        (0, "lz4"),
    ],
)
def test_segments_written_by_kcodec(capsys, tmp_path: Path, magic: int, compression: str) -> None:
    from kcodec import SegmentWriter, encode_batch

    records = [
        {
            "key": f"k{i}".encode(),
            "value": f"value {i}".encode() * (i + 1),
            "timestamp": 1_700_000_000_000 + i if magic else -1,
            "headers": [("h", b"x")] if magic == 2 else [],
        }
        for i in range(5)
    ]
    directory = tmp_path / "topic-0"
    with SegmentWriter(directory) as w:
        w.append(encode_batch(records[:3], magic=magic, compression=compression, base_offset=0))
        w.append(encode_batch(records[3:], magic=magic, compression=compression, base_offset=3))
    log = directory / "00000000000000000000.log"
    data = log.read_bytes()
    spans = list(Inspector(expand=True).entries(data))
    assert all(s.status != BAD for s in spans), [(x.path, x.notes) for s in spans for x in s.walk() if x.status == BAD]
    assert_tiles_all(spans, len(data))
    values = [
        x.value
        for s in spans
        for x in s.walk()
        if x.path.endswith("value") and x.kind == "field" and "headers[" not in x.path and isinstance(x.value, bytes)
    ]
    assert values == [r["value"] for r in records]
    if compression != "none":
        assert sum(1 for s in spans for x in s.walk() if x.kind == "decompressed") == len(spans)
    code, out, _ = run(capsys, "inspect", str(log), "--records")
    assert code == EXIT_OK and "0 damaged" in out


def test_only_the_schema_module_reads_the_generator() -> None:
    """Every access to the schema model goes through tools/inspect/schema.py, so pointing the inspector
    at another source of resolved schemas changes one module."""
    import ast

    import kcodec.tools.inspect as package

    readers = set()
    for module in Path(package.__path__[0]).glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "kcodec.codegen" or n.startswith("kcodec.codegen.") for n in names):
                readers.add(module.name)
    assert readers == {"schema.py"}
