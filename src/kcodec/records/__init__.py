"""Kafka's record semantics on top of the generated codecs: the record and batch
model, decoding (offsets, timestamps, control records, compressed wrappers),
readers over bytes, files and streams, resynchronisation after damage,
encoding, and Arrow columns."""
