"""Kafka's default partitioner for keyed records: which partition of a topic
the Java producer sends a record to (``BuiltInPartitioner.partitionForKey``:
``Utils.toPositive(Utils.murmur2(key)) % numPartitions``).

Keyless records have no fixed partition in Kafka (the producer's uniform
sticky partitioner, KIP-794, fills a batch for one partition and then picks
another); writers here choose a deterministic rule and document it."""

from __future__ import annotations

__all__ = ["murmur2", "murmur2_python", "to_positive", "partition_for_key"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """MurmurHash2 of ``data`` as Kafka's ``Utils.murmur2`` computes it: a signed 32-bit int (the compiled
    kernel's, the one the column encoder uses; computed here only where no kernel was built)."""
    from kcodec.generated.fast.kernel import compiled_kernel

    kernel = compiled_kernel()
    return kernel.murmur2(data) if kernel is not None else murmur2_python(data)


def murmur2_python(data: bytes) -> int:
    """:func:`murmur2` in Python: the fallback where no compiled kernel was built."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    if length & 3:  # the last 1-3 bytes, little-endian, as Java's fall-through switch adds them
        h ^= int.from_bytes(data[whole:], "little")
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h if h < 0x80000000 else h - 0x100000000  # as a signed Java int


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: the low 31 bits (not ``abs``, which fails for the minimum int)."""
    return n & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition the Java producer's default partitioner gives a record with this (serialized) key."""
    return to_positive(murmur2(key)) % num_partitions
