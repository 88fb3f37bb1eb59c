"""Kafka's own test vectors of its default partitioner's hash (murmur2, signed 32-bit as Java computes it)."""

# Kafka's UtilsTest.testMurmur2
JAVA_CASES = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}
