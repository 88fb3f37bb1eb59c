"""Kafka's default partitioner: murmur2 as the Java client computes it (signed
32-bit, Kafka's own test vectors) and against kafka-python's implementation
(an independent oracle, which returns the unsigned value) on many keys; the
compiled kernel's murmur2 and the Python fallback, each."""

from __future__ import annotations

import random

import pytest

from kcodec.generated.fast.kernel import compiled_kernel
from kcodec.records.partitioner import murmur2, murmur2_python, partition_for_key, to_positive
from tests.helpers.murmur2 import JAVA_CASES


@pytest.mark.parametrize("key,expected", sorted(JAVA_CASES.items()))
@pytest.mark.parametrize("hash_", [murmur2, murmur2_python])
def test_murmur2_matches_kafkas_test_vectors(hash_, key, expected):
    assert hash_(key) == expected


def test_murmur2_and_partition_match_kafka_python_on_many_keys():
    oracle = pytest.importorskip("kafka.partitioner.default")
    rng = random.Random(14)
    keys = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 64))) for _ in range(5000)]
    keys += [f"user-{i}".encode() for i in range(2000)] + [b""]
    for key in keys:
        assert murmur2(key) & 0xFFFFFFFF == oracle.murmur2(key), key
        assert murmur2_python(key) == murmur2(key), key
        for n in (1, 3, 12, 100):
            assert partition_for_key(key, n) == (oracle.murmur2(key) & 0x7FFFFFFF) % n


def test_to_positive_keeps_low_31_bits_like_java():
    assert to_positive(-(1 << 31)) == 0  # Math.abs would stay negative; Utils.toPositive gives 0
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(5) == 5


def test_murmur2_is_the_kernels_when_it_is_built():
    kernel = compiled_kernel()
    if kernel is None:
        pytest.skip("no compiled kernel: murmur2 is the Python fallback")
    rng = random.Random(21)
    for key in [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40))) for _ in range(500)]:
        assert kernel.murmur2(key) == murmur2(key) == murmur2_python(key)
    assert kernel.murmur2(bytearray(b"abc")) == kernel.murmur2(memoryview(b"abc")) == JAVA_CASES[b"abc"]
