"""Kafka's log on disk, over a small filesystem interface (local paths or
pyarrow's filesystems, :mod:`kcodec.log.fs`):

* :mod:`~kcodec.log.names`: what Kafka's file and directory names say (segments, partitions, tiered copies);
* :mod:`~kcodec.log.files`: the segments a directory holds;
* :mod:`~kcodec.log.index`: the index files: read, encode, rebuild, seek;
* :mod:`~kcodec.log.index_check`: index files checked against their log;
* :mod:`~kcodec.log.partition`: a partition's segments, seeks and reads;
* :mod:`~kcodec.log.writer`: atomic files and the segment writer."""
