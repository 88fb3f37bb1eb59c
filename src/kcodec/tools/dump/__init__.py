"""``kcodec dump``'s printers: :mod:`.log` (batches and records in kafka-dump-log's lines, or NDJSON),
:mod:`.files` (file kinds; checkpoints, metadata and snapshots), :mod:`.index` (index files and their
checks), :mod:`.decoders` (how keys and values print), :mod:`.internal` (internal topics' records) and
:mod:`.run` (one input dumped by its kind, from an options object)."""
