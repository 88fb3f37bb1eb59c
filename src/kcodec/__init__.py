"""kcodec: schema-driven codecs for Apache Kafka's record formats."""
__version__ = "0.1.0"
