"""Hypothesis strategies for logs that mix v2 data batches of every codec (LogAppendTime, producer sequences,
some of which wrap past Int32.MAX, transactional batches), control batches and v1 entries, and those logs with
a byte flipped or cut anywhere: what the kernel's batch walks and the per-entry path must read alike (the same
result, or the same error)."""

from __future__ import annotations

from hypothesis import strategies as st

from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.model import TimestampType

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

headers = st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=4)), max_size=2)
records = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.none() | st.binary(max_size=6),
            "value": st.none() | st.binary(max_size=12),
            "headers": headers,
            "timestamp": st.integers(-1, 2**42),
        }
    ),
    max_size=4,
)


@st.composite
def v2_batch(draw) -> bytes:
    options: dict = {
        "compression": draw(st.sampled_from(CODECS)),
        "base_offset": draw(st.integers(0, 2**40)),
    }
    if draw(st.booleans()):
        options.update(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=draw(st.integers(0, 2**41)))
    if draw(st.booleans()):  # sequences, some of which wrap past Int32.MAX
        options.update(producer_id=7, producer_epoch=1, base_sequence=draw(st.integers(2**31 - 6, 2**31 - 1)))
    elif draw(st.booleans()):
        options.update(producer_id=9, producer_epoch=2, base_sequence=draw(st.integers(0, 1000)), transactional=True)
    return encode_batch(draw(records), **options)


control = st.builds(
    lambda kind, offset: encode_control_batch(kind, producer_id=7, producer_epoch=1, offset=offset),
    st.sampled_from(["commit", "abort"]),
    st.integers(0, 2**40),
)
v1_entry = st.builds(
    lambda recs, codec: encode_batch(recs, magic=1, compression=codec, base_offset=3, allow_lossy=True),
    records.filter(bool),
    st.sampled_from(CODECS[:4]),
)
#: logs of one to six entries, v2 data batches the most frequent
logs = st.lists(st.one_of(v2_batch(), v2_batch(), v2_batch(), control, v1_entry), min_size=1, max_size=6).map(b"".join)


@st.composite
def flipped_log(draw) -> bytes:
    """A log with one byte changed, anywhere: a length, a header field, a CRC, a record, a compressed stream."""
    data = bytearray(draw(logs))
    data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    return bytes(data)


flipped_logs = flipped_log()
#: logs cut anywhere, from no byte to all of them
cut_logs = logs.flatmap(lambda data: st.integers(0, len(data)).map(lambda cut: data[:cut]))
