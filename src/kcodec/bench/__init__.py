"""``kcodec bench``: one deterministic workload, every implementation, one process.

* :mod:`.workload` builds the records and their encodings (v2 batches per codec,
  v1 message sets) from a seeded :class:`random.Random`;
* :mod:`.implementations` holds one small adapter per implementation and
  operation (kcodec, aiokafka with its C extension, kafka-python, and the bare
  primitives: crc32c, each codec's decompression, a memory copy);
* :mod:`.runner` interleaves them (every repeat runs every row once, in a
  rotated order, so machine noise is shared) and keeps the median;
* :mod:`.memory` measures peak RSS in a child process streaming a segment file;
* :mod:`.report` prints the machine, the markdown table and the target checks,
  and writes ``--json``.

Speed is measured here and never asserted by a test.
"""
