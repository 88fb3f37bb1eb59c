"""Kafka's log on disk: segment files and their names, the index files,
partitions with seeks by offset and timestamp, and the segment writer, over a
small filesystem interface (local paths or pyarrow's filesystems)."""
