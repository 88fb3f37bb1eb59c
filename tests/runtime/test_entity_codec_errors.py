"""A value an entity codec cannot encode is refused alike by ``build``, ``size`` and ``field_sizes``:
a typed EncodeError naming the missing field, never Python's KeyError or TypeError (issue 22, class 7)."""

from __future__ import annotations

import pytest

import kcodec
from kcodec.errors import EncodeError

RECORD = {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": b"k", "value": b"v", "headers": []}


@pytest.mark.parametrize("method", ["build", "size", "field_sizes"])
def test_a_missing_field_is_named(method):
    codec = kcodec.codec("record", 2)
    with pytest.raises(EncodeError, match="missing field 'headers' in record v2"):
        getattr(codec, method)({"key": 5})


@pytest.mark.parametrize("method", ["build", "size", "field_sizes"])
def test_a_value_of_the_wrong_type_is_an_encode_error(method):
    codec = kcodec.codec("record", 2)
    with pytest.raises(EncodeError):
        getattr(codec, method)({**RECORD, "key": 5})


def test_size_of_a_good_value_is_its_built_length():
    codec = kcodec.codec("record", 2)
    assert codec.size(RECORD) == len(codec.build(RECORD))
