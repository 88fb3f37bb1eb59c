"""Schema Registry wire-format values (Avro, Protobuf, JSON Schema) decoded with schemas found offline."""
