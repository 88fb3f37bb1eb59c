"""Rows for Schema Registry framed Avro values: ``kcodec`` decodes the workload's records as framed Avro values
through :class:`kcodec.values.decoder.ValueDecoder` (header read by the generated decoder, schema looked up
and compiled once, payload read by fastavro), ``primitive`` is fastavro's own ``schemaless_reader`` loop
over the same payloads with the parsed schema at hand: the floor kcodec's decode sits on. The values (an
Avro record of the workload's key, value, timestamp and a decimal) are built outside the timing."""

from __future__ import annotations

import io
import json
from decimal import Decimal

from kcodec.bench.clients import Unavailable
from kcodec.bench.workload import Workload

OPERATION = "avro_values"
DESCRIPTION = (
    "decode the records as Schema Registry framed Avro values (a record of key, value, timestamp and a decimal): "
    "kcodec.values' ValueDecoder, or fastavro's schemaless_reader alone (primitive)"
)
SCHEMA = {
    "type": "record",
    "name": "BenchRecord",
    "fields": [
        {"name": "key", "type": "bytes"},
        {"name": "value", "type": "bytes"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 4}},
    ],
}
SCHEMA_ID = 1


def _fastavro():
    try:
        import fastavro
    except ImportError:
        raise Unavailable("needs fastavro (the confluent extra)") from None
    return fastavro


def framed_values(w: Workload) -> list[bytes]:
    """The workload's records as framed Avro values: the generated header encoder, then fastavro's bytes."""
    from datetime import datetime, timezone

    from kcodec.generated.fast.schema_registry_frame import encode_schema_registry_frame_v0

    fastavro = _fastavro()
    schema = fastavro.parse_schema(SCHEMA)
    header = encode_schema_registry_frame_v0((0, SCHEMA_ID))
    out = []
    for n, (k, v, t) in enumerate(zip(w.keys, w.values, w.timestamps)):
        buf = io.BytesIO()
        at = datetime.fromtimestamp(t / 1000, timezone.utc)
        record = {"key": k, "value": v, "ts": at, "amount": Decimal(n) / 100}
        fastavro.schemaless_writer(buf, schema, record)
        out.append(header + buf.getvalue())
    return out


def _kcodec(w: Workload, magic: int, codec: str):
    from kcodec.values.decoder import ValueDecoder
    from kcodec.values.registry import RegisteredSchema, RegistryState
    from kcodec.values.sources import RegistryStateSource

    values = framed_values(w)
    state = RegistryState()
    state.versions[("bench-value", 1)] = RegisteredSchema(SCHEMA_ID, "AVRO", json.dumps(SCHEMA), (), "bench-value", 1)
    decode = ValueDecoder(RegistryStateSource(state, "bench")).decode_value
    n = len(values)

    def run() -> int:
        for v in values:
            decode(v)
        return n

    return run


def _primitive(w: Workload, magic: int, codec: str):
    fastavro = _fastavro()
    schema = fastavro.parse_schema(SCHEMA)
    from kcodec.values.frame import HEADER_SIZE

    payloads = [v[HEADER_SIZE:] for v in framed_values(w)]
    read = fastavro.schemaless_reader
    n = len(payloads)

    def run() -> int:
        for p in payloads:
            read(io.BytesIO(p), schema, None)
        return n

    return run


ADAPTERS = {("kcodec", OPERATION): _kcodec, ("primitive", OPERATION): _primitive}
