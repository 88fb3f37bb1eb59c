"""The cost table (kcodec.spark.cost_table) against the generated construct codecs'
size functions, which it replaced for speed: the same numbers for every batch
of the samples and vectors (v0, v1, v2, every codec, headers, null keys and
values, empty and control batches), and the sampling estimate."""

from __future__ import annotations

import random

import pytest

from kcodec.generated import codec as generated_codec
from kcodec.records import values
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.model import TimestampType
from kcodec.records.reader import read_batches
from kcodec.records.sizing import SizeQuery, size_on_disk
from kcodec.spark.cost_table import COMBINATIONS, estimate, label, sampled, size_as

from .conftest import SAMPLES, VECTORS


def _construct_size_as(batch) -> dict[str, int] | None:
    """The cost table as the generated construct codecs compute it (the former implementation)."""
    if batch.is_control:
        return None
    records, out = batch.records, {}
    for magic, codec in COMBINATIONS:
        if magic == 2:
            log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
            value = values.v2_batch(
                records,
                base_offset=batch.base_offset,
                compression=codec if records else "none",
                ts_type=batch.timestamp_type if log_append else TimestampType.CREATE_TIME,
                log_append_time=batch.max_timestamp if log_append else None,
            )
            out[label(magic, codec)] = generated_codec("record_batch", 2).size(value)
        elif not records:
            out[label(magic, codec)] = 0
        else:
            ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
            entries = values.legacy_entries(
                records, magic=magic, base_offset=records[0].offset, compression=codec, ts_type=ts_type
            )
            out[label(magic, codec)] = sum(map(generated_codec("legacy_log_entry", magic).size, entries))
    return out


def _sources() -> list:
    return sorted(SAMPLES.glob("*/*.log")) + sorted(VECTORS.glob("*.bin"))


def test_cost_table_equals_the_generated_size_functions():
    compared = set()
    for path in _sources():
        for b in read_batches(path.read_bytes(), strict=False, skip_corrupt=True):
            assert size_as(b) == _construct_size_as(b), (path, b.position)
            compared.add((b.magic, b.compression, b.is_control, bool(b.records)))
    # sources of every magic and of each v2 codec, control batches among them
    assert {m for m, _, _, _ in compared} == {0, 1, 2}
    assert {c for m, c, _, _ in compared if m == 2} >= {"none", "gzip", "snappy", "lz4", "zstd"}
    assert any(control for _, _, control, _ in compared)


def test_cost_table_on_varied_records():
    """Null keys and values, unicode header keys, null header values, timestamp and offset gaps."""
    rnd = random.Random(7)
    recs = [
        NewRecord(
            key=None if i % 5 == 0 else rnd.randbytes(rnd.randrange(0, 300)),
            value=None if i % 7 == 0 else rnd.randbytes(rnd.randrange(0, 3000)) + b"abc" * rnd.randrange(200),
            headers=tuple((f"h\u00e9{j}", None if j % 2 else rnd.randbytes(j)) for j in range(i % 4)),
            timestamp=1_700_000_000_000 + rnd.randrange(-(10**6), 10**9),
            offset=1000 + i * 3,
        )
        for i in range(300)
    ]
    for ts_type, append in ((TimestampType.CREATE_TIME, None), (TimestampType.LOG_APPEND_TIME, 1_800_000_000_000)):
        data = encode_batch(recs, base_offset=990, compression="lz4", timestamp_type=ts_type, log_append_time=append)
        (b,) = list(read_batches(data))
        assert size_as(b) == _construct_size_as(b)


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize(
    "query", [SizeQuery(-1, -1, 3), SizeQuery(10, 100, 200), SizeQuery(0, 70_000, 2, ((3, 4), (200, -1)))]
)
def test_kcodec_size_arithmetic_equals_the_field_sizes(magic, query):
    """``kcodec size`` totals (arithmetic) agree with the generated size and field size functions."""
    result = size_on_disk(magic, query)
    assert result.total == sum(result.fields.values())


def test_sampling_picks_some_batches_and_estimates_from_them():
    batches = [
        next(iter(read_batches(encode_batch([{"value": b"v%d" % i * 50}] * 20, base_offset=o))))
        for i, o in enumerate(range(0, 4000, 20))
    ]
    picked = [b for b in batches if sampled(b.base_offset, 0.25)]
    assert 0 < len(picked) < len(batches)
    assert all(sampled(b.base_offset, 1.0) for b in batches)
    all_sums: dict[str, int] = {}
    sampled_sums: dict[str, int] = {}
    exact: dict[str, int] = {}
    for b in batches:
        cheap, full = size_as(b, 0.25), size_as(b)
        assert set(cheap) == set(full) if b in picked else set(cheap) == {"v0/none", "v1/none", "v2/none"}
        for k, v in cheap.items():
            into = sampled_sums if len(cheap) == len(COMBINATIONS) else {}
            into[k] = into.get(k, 0) + v
            if k.endswith("/none"):
                all_sums[k] = all_sums.get(k, 0) + v
        for k, v in full.items():
            exact[k] = exact.get(k, 0) + v
    est = estimate(all_sums, sampled_sums)
    assert list(est) == [label(m, c) for m, c in COMBINATIONS]
    for k, v in exact.items():
        assert est[k] == v if k.endswith("/none") else abs(est[k] - v) <= 0.1 * v


def test_pipeline_size_sample(spark, samples, tmp_path, capsys, monkeypatch):
    """--size-sample: uncompressed sizes stay exact, compressed ones are estimated, and the summary says so
    (the text summary of the same run: tests/helpers/pipeline_runs.py)."""
    import json

    from kcodec.cli import main
    from tests.helpers.pipeline_runs import PipelineRuns

    runs = PipelineRuns(monkeypatch)

    exact: dict[str, int] = {}
    for log in sorted(samples.glob("*/*.log")):
        for b in read_batches(log):
            for k, v in (size_as(b) or {}).items():
                exact[k] = exact.get(k, 0) + v
    assert main(["pipeline", str(samples), str(tmp_path / "t"), "--json", "--size-sample", "0.3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["size_sample"] == 0.3
    assert 0 < summary["sampled_batches"] < summary["sized_batches"]
    total = summary["total"]["sizes"]
    assert list(total) == [label(m, c) for m, c in COMBINATIONS]
    for k, v in exact.items():
        assert total[k] == v if k.endswith("/none") else abs(total[k] - v) <= 0.5 * v, k
    runs.replay_next()
    assert main(["pipeline", str(samples), str(tmp_path / "t"), "--size-sample", "0.3"]) == 0
    assert "estimated from a 30% sample" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["pipeline", str(samples), str(tmp_path / "t"), "--size-sample", "0"])
    assert exit_.value.code == 2 and "--size-sample takes a fraction" in capsys.readouterr().err
