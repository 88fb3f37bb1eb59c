"""The names the benchmark's modules share and the command line is built from (cheap to import: no
measuring module behind it)."""

from __future__ import annotations

IMPLEMENTATIONS = ("kcodec", "aiokafka", "kafka-python", "primitive")
STREAM_OPERATION = "stream_segment"
STREAM_DESCRIPTION = "peak memory of a child process decoding every record of a --segment-mib MiB segment"
