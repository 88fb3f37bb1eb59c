"""The cost table against the real encoders: every size ``size_as`` gives for a batch is the length of
what ``encode_batch`` writes for its records at that magic and codec (v0/v1 lossy: no headers, no v0
timestamps), whether it comes from the encoded payloads (sampled batches) or from arithmetic."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcodec.records import encode
from kcodec.records.encode import NewRecord, encode_batch
from kcodec.records.model import TimestampType
from kcodec.records.reader import read_batches
from kcodec.spark.cost_table import COMBINATIONS, label, size_as

headers_st = st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=10))), max_size=3)


@st.composite
def source_batches(draw):
    n = draw(st.integers(1, 40))
    offset = draw(st.integers(0, 1 << 40))
    first_offset, records = offset, []
    for _ in range(n):
        records.append(
            NewRecord(
                key=draw(st.one_of(st.none(), st.binary(max_size=30))),
                value=draw(st.one_of(st.none(), st.binary(max_size=200), st.just(b"abc" * 100))),
                headers=tuple(draw(headers_st)),
                timestamp=draw(st.one_of(st.just(-1), st.integers(0, 1 << 42))),
                offset=offset,
            )
        )
        offset += 1 + draw(st.integers(0, 3))
    codec = draw(st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]))
    options = {"compression": codec, "base_offset": first_offset - draw(st.integers(0, min(first_offset, 5)))}
    if draw(st.booleans()):
        options.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=1_700_000_000_000)
    (batch,) = list(read_batches(encode_batch(records, **options)))
    return batch


def encoded_length(batch, magic: int, codec: str) -> int:
    if magic == 2:
        return len(encode_batch(batch.records, compression=codec, base_offset=batch.base_offset))
    return len(encode_batch(batch.records, magic=magic, compression=codec, allow_lossy=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source_batches())
def test_size_as_equals_the_encoders(batch):
    sizes = size_as(batch)
    assert sizes is not None and set(sizes) == {label(m, c) for m, c in COMBINATIONS}
    for magic, codec in COMBINATIONS:
        assert sizes[label(magic, codec)] == encoded_length(batch, magic, codec), (magic, codec)
    # a batch the sample leaves out gets the same uncompressed sizes: from the kernel's payload lengths,
    # and by arithmetic without the kernel
    uncompressed = {k: v for k, v in sizes.items() if k.endswith("/none")}
    assert size_as(batch, sample=0.0) == uncompressed
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encode._enc(), "records", None)
        mp.setattr(encode._enc(), "legacy", None)
        assert size_as(batch, sample=0.0) == uncompressed
