"""Fuzzing from the schemas: the span-aware encoder prints exactly what the generated builders print,
the mutators damage what they say they damage, and a bounded fuzz run with a fixed seed (what CI runs)
finds no unexpected exception and no hang in any decoder of any entity version."""

from __future__ import annotations

import json
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.cli import main
from kcodec.errors import DecodeError
from kcodec.fuzz import mutators as M
from kcodec.fuzz.encoder import Bytes, Compressed, Derived, Int, encode_int, encode_tree, overlong_varint, serialize
from kcodec.fuzz.runner import FuzzConfig, all_targets, format_summary, fuzz
from kcodec.fuzz.strategies import entity_strategy
from kcodec.fuzz.targets import check_entity, check_segment, replay
from kcodec.generated import codec
from kcodec.generated.fast import DECODERS
from tests.helpers.schemas import ENTITY_VERSIONS, SCHEMAS

IDS = [f"{e}-v{v}" for e, v in ENTITY_VERSIONS]


# ---------------------------------------------------------------------------- the encoder


@pytest.mark.parametrize("entity,version", ENTITY_VERSIONS, ids=IDS)
def test_encoder_prints_what_the_builder_prints(entity, version):
    c = codec(entity, version)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(entity_strategy(SCHEMAS, entity, version))
    def check(value):
        enc = serialize(encode_tree(SCHEMAS, entity, version, value), spans=True)
        assert enc.data == c.build(value)
        for sp in enc.spans:  # every field's span holds what the field says
            data = enc.data if sp.stream is None else enc.plain[sp.stream.uid]
            assert 0 <= sp.start <= sp.end <= len(data)
            if isinstance(sp.node, Int):
                assert data[sp.start : sp.end] == encode_int(sp.node.itype, sp.node.value)
            elif isinstance(sp.node, Derived):
                assert data[sp.start : sp.end] == encode_int(sp.node.itype, enc.derived[sp.node.uid])
            elif isinstance(sp.node, Bytes) and sp.part == "data":
                assert data[sp.start : sp.end] == sp.node.data

    check()


def test_overlong_varints():
    assert overlong_varint(b"\x02", 3) == b"\x82\x80\x00"
    assert overlong_varint(b"\x80\x01", 2) == b"\x80\x01"
    from kcodec.runtime.varint import decode_varint

    for total in range(1, 6):
        assert decode_varint(overlong_varint(b"\x02", total), 0) == (1, total)


def _sample(entity: str, version: int, value: dict) -> M.Sample:
    return M.Sample.of(entity, version, encode_tree(SCHEMAS, entity, version, value))


def _batch_value(codec_name: str = "gzip", records: int = 3) -> dict:
    rec = {
        "attributes": 0,
        "timestamp_delta": 5,
        "offset_delta": 0,
        "key": b"key",
        "value": b"value",
        "headers": [{"key": "h", "value": b"1"}],
    }
    return {
        "base_offset": 10,
        "partition_leader_epoch": 0,
        "attributes": {
            "compression": codec_name,
            "timestamp_type": "create_time",
            "transactional": False,
            "control": False,
            "delete_horizon": False,
            "unused": 0,
        },
        "last_offset_delta": records - 1,
        "base_timestamp": 0,
        "max_timestamp": 0,
        "producer_id": -1,
        "producer_epoch": -1,
        "base_sequence": -1,
        "records": [dict(rec, offset_delta=i) for i in range(records)],
    }


def test_length_lie_with_the_crc_recomputed_reaches_the_structure_check():
    s = _sample("record_batch", 2, _batch_value("none"))
    length = next(n for n in s.nodes if isinstance(n, Derived) and n.path == "records[0].length")
    fixed = serialize(s.tree, {length.uid: 200}).data
    stale = serialize(s.tree, {length.uid: 200}, crc="stale", stale=s.enc.derived).data
    from kcodec.records.decode import decode_entry

    for data, kind in ((fixed, "truncated"), (stale, "crc")):  # the runtime checks the CRC first, as Kafka
        with pytest.raises(DecodeError) as info:
            decode_entry(data)
        assert info.value.kind == kind


def test_damage_inside_a_compressed_stream_is_compressed_again():
    s = _sample("record_batch", 2, _batch_value("lz4"))
    header_count = next(n for n in s.nodes if n.path == "records[1].headers")
    data = serialize(s.tree, {header_count.prefix_uid: -1}).data
    with pytest.raises(DecodeError) as info:
        DECODERS[("record_batch", 2)][0](data)
    assert info.value.kind == "corrupt" and "decompressed lz4 stream" in str(info.value)
    assert info.value.position == 61


def test_codec_swap_and_bomb():
    s = _sample("record_batch", 2, _batch_value("zstd"))
    comp = next(n for n in s.nodes if isinstance(n, Compressed))
    data = serialize(s.tree, {("plain", comp.uid): bytes(2 << 20)}).data
    assert len(data) < 4096
    with pytest.raises(DecodeError) as info:
        DECODERS[("record_batch", 2)][0](data, 0, len(data), True, 1 << 20)
    assert info.value.kind == "decompression_limit"
    attr = s.codec_fields[0][0]
    data = serialize(s.tree, {attr.uid: (attr.value & ~7) | 1}).data  # says gzip, holds zstd
    with pytest.raises(DecodeError) as info:
        DECODERS[("record_batch", 2)][0](data)
    assert info.value.kind == "decompression"


def test_every_mutator_applies_and_says_what_it_did():
    rng = random.Random(7)
    ctx = M.Context(limit=1 << 16)
    samples = [_sample("record_batch", 2, _batch_value(c)) for c in ("none", "gzip", "snappy")]
    for s in samples:
        M.remember(ctx, s)
    for name, fn in M.TREE_MUTATORS.items():
        got = [fn(rng, s, ctx) for s in samples for _ in range(5)]
        got = [g for g in got if g is not None]
        assert got, name
        for overrides, note in got:
            assert overrides and note
            serialize(samples[0].tree, overrides)  # prints, whatever the lie
    for name, fn in M.BYTE_MUTATORS.items():
        got = fn(rng, samples[1].enc.data, samples[1].enc, ctx, samples[1])
        assert got is not None and isinstance(got[0], bytes) and got[1], name
    seen = set()
    for _ in range(300):
        data, names, note = M.mutate(rng, samples[rng.randrange(3)], ctx)
        seen.update(names.split("+"))
        assert isinstance(data, bytes) and note is not None
    assert seen >= set(M.TREE_MUTATORS) | set(M.BYTE_MUTATORS) - {"splice"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_valid_overlong_varints_decode_to_the_same_batch(data):
    s = _sample("record_batch", 2, _batch_value("none", 2))
    varints = [n for n in s.nodes if isinstance(n, (Int, Derived)) and not n.itype.fixed]
    n = data.draw(st.sampled_from(varints))
    value = n.value if isinstance(n, Int) else s.enc.derived[n.uid]
    raw = encode_int(n.itype, value)
    padded = overlong_varint(raw, data.draw(st.integers(len(raw), n.itype.max_width)))
    out = serialize(s.tree, {n.uid: padded}).data
    decoded, _ = DECODERS[("record_batch", 2)][0](out)
    original, _ = DECODERS[("record_batch", 2)][0](s.enc.data)
    assert [r[1:] for r in decoded[13]] == [r[1:] for r in original[13]]  # the same records (lengths differ)


# ---------------------------------------------------------------------------- targets


def test_check_entity_reports_foreign_exceptions(monkeypatch):
    import kcodec.fuzz.targets as T

    def boom(*a, **k):
        raise IndexError("planted")

    monkeypatch.setitem(T.package().fast_decoders, ("record", 2), (boom, ()))
    r = check_entity("record", 2, b"\x00", limit=1 << 16, reference=False)
    assert r.outcome == "unexpected" and r.unexpected[0].error == "IndexError"
    assert "planted" in r.unexpected[0].traceback


def test_segment_promises_hold_for_a_damaged_log():
    from tests.helpers.batches import STARTS, damaged

    data = damaged(1, 8, 0x7F)
    intact = tuple(
        (p, STARTS[i + 1] - p if i + 1 < len(STARTS) else len(data) - p) for i, p in enumerate(STARTS) if i != 1
    )
    r = check_segment(data, intact, STARTS[1], limit=1 << 20)
    assert not r.unexpected and r.outcome == "truncated"


def test_replay_runs_a_saved_note():
    from tests.helpers.batches import V2_BATCH

    assert replay(V2_BATCH, {"target": "record_batch v2"}).outcome == "decoded"
    assert replay(V2_BATCH[:-1], {"target": "segment", "intact": [], "first_damage": 0}).outcome == "truncated"


# ---------------------------------------------------------------------------- the runner and the command


def test_bounded_fuzz_with_a_fixed_seed():
    """What CI runs every time: every entity version and mixed-magic logs, damaged every way."""
    iterations = 150 * len(all_targets())  # targets are drawn at random: enough rounds to reach each one
    stats = fuzz(FuzzConfig(iterations=iterations, seed=20261122, limit=256 << 10))
    summary = format_summary(stats)
    assert stats.iterations == iterations
    assert stats.outcomes["unexpected"] == 0 and stats.outcomes["hang"] == 0, summary
    assert set(stats.by_target) == set(all_targets()), summary
    assert stats.outcomes["decoded"] > 300
    kinds = {
        "crc",
        "truncated",
        "length",
        "varint",
        "record_count",
        "magic",
        "compression",
        "decompression",
        "decompression_limit",
        "corrupt",
    }
    assert kinds <= set(stats.outcomes), summary
    assert set(stats.by_mutator) >= set(M.TREE_MUTATORS) | set(M.BYTE_MUTATORS), summary


def test_the_same_seed_gives_the_same_run():
    a = fuzz(FuzzConfig(targets=["record v2", "legacy_message v1"], iterations=300, seed=3))
    b = fuzz(FuzzConfig(targets=["record v2", "legacy_message v1"], iterations=300, seed=3))
    assert a.outcomes == b.outcomes and a.by_mutator == b.by_mutator


def test_parallel_jobs_merge():
    stats = fuzz(FuzzConfig(targets=["record_batch v2", "segment"], iterations=400, seed=9, jobs=2))
    assert stats.iterations == 400 and not stats.failed
    assert stats.peak_rss_kib > 0


def test_cli_fuzz(capsys, tmp_path):
    code = main(
        [
            "fuzz",
            "--entity",
            "record_header",
            "--entity",
            "segment",
            "--iterations",
            "200",
            "--seed",
            "1",
            "--json",
            str(tmp_path / "s.json"),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("200 iterations in ") and "/s)" in out and "peak memory" in out
    assert "outcomes: " in out and "unexpected 0" in out and "hang 0" in out
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["iterations"] == 200 and set(stats["by_target"]) == {"record_header v2", "segment"}
    assert main(["fuzz", "--entity", "nope", "--iterations", "1"]) == 2


def test_cli_fuzz_saves_reproducers_and_fails(capsys, tmp_path, monkeypatch):
    import kcodec.fuzz.targets as T

    real = T.package().fast_decoders[("record_header", 2)]

    def flaky(buf, pos=0, end=None, *a):
        if len(buf) % 3 == 0:
            raise struct.error("planted")
        return real[0](buf, pos, end)

    monkeypatch.setitem(T.package().fast_decoders, ("record_header", 2), (flaky, real[1]))
    crashes = tmp_path / "crashes"
    code = main(["fuzz", "--entity", "record_header", "--iterations", "150", "--save-crashes", str(crashes), "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "UNEXPECTED unexpected in record_header v2 / fast: error: planted" in out
    saved = sorted(crashes.glob("*.bin"))
    assert saved and all(p.name.startswith("unexpected-record_header-v2-") for p in saved)
    note = json.loads(saved[0].with_suffix(".json").read_text())
    assert note["target"] == "record_header v2" and note["error"] == "error" and "planted" in note["traceback"]
    assert not list(crashes.glob(".inflight-*"))
