"""``kcodec dump --key-decoder confluent`` / ``--value-decoder confluent``: Schema Registry framed keys and
values printed as JSON in the ``key:`` / ``payload:`` position (:mod:`kcodec.values` decodes them), and
in ``--json`` as ``valueSchemaId``, ``valueDecoded``, ``valueError`` (``key...`` for keys).

A key or value that does not decode (not framed, an unknown schema id, a payload that does not match its
schema ...) is not damage of the log: the text output prints it as the string decoder would, and each
file ends with one line on stderr counting them by reason; ``--json`` gives the reason per record."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

from kcodec.records.model import Batch, Record
from kcodec.tools.dump.decoders import CONFLUENT
from kcodec.tools.dump.log import as_ndjson, batch_json
from kcodec.values.decoder import ValueDecoder
from kcodec.values.json_text import value_json

__all__ = ["CONFLUENT", "SchemaRegistryDecoding", "batch_ndjson_with_values"]


def _raw_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")  # as the string decoder (Kafka's StringDecoder)


class SchemaRegistryDecoding:
    """The framed keys and/or values of one dump, decoded with ``decoder``; counts what stayed raw."""

    def __init__(self, decoder: ValueDecoder, *, keys: bool, values: bool):
        self.decoder, self.keys, self.values = decoder, keys, values
        self.left_raw: Counter[tuple[str, str]] = Counter()  # (key|value, reason) -> records

    def text(self, data: bytes, topic: str | None, key: bool) -> str:
        decoded = self.decoder.try_decode(data, topic=topic, key=key)
        if decoded.error is None:
            return value_json(decoded.value)
        self.left_raw[("key" if key else "value", decoded.error.kind)] += 1
        return _raw_text(data)

    def json_fields(self, record: Record, topic: str | None) -> tuple[dict, dict[str, str]]:
        """The record's added fields, and those whose JSON text is given whole (decoded values: exact)."""
        plain: dict = {}
        texts: dict[str, str] = {}
        for part, wanted, data in (("key", self.keys, record.key), ("value", self.values, record.value)):
            if not wanted:
                continue
            if data is None:
                plain.update({f"{part}SchemaId": None, f"{part}Decoded": None, f"{part}Error": None})
                continue
            decoded = self.decoder.try_decode(data, topic=topic, key=part == "key")
            plain[f"{part}SchemaId"] = decoded.schema_id
            if decoded.error is None:
                texts[f"{part}Decoded"] = value_json(decoded.value)
                plain[f"{part}Error"] = None
            else:
                self.left_raw[(part, decoded.error.kind)] += 1
                plain[f"{part}Decoded"] = None
                plain[f"{part}Error"] = f"{decoded.error.kind}: {decoded.error}"
        return plain, texts

    def take_summary(self, json: bool = False) -> str | None:
        """One line on what stayed raw since the last call (None: everything decoded)."""
        if not self.left_raw:
            return None
        parts = []
        for part in ("key", "value"):
            reasons = {r: n for (p, r), n in self.left_raw.items() if p == part}
            if reasons:
                listed = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
                parts.append(f"{sum(reasons.values())} {part}(s) not decoded ({listed})")
        self.left_raw.clear()
        return "; ".join(parts) + (
            " (the records' valueError/keyError say why)" if json else ", printed as UTF-8 (--json says why per record)"
        )


def _with_texts(obj: dict, texts: dict[str, str]) -> str:
    line = as_ndjson(obj)
    if not texts:
        return line
    return line[:-1] + "".join(f",{json.dumps(k)}:{v}" for k, v in texts.items()) + "}"


def batch_ndjson_with_values(
    batch: Batch, file: str, encoding: str, decoding: SchemaRegistryDecoding, topic: str | None
) -> Iterator[str]:
    """A ``dump --json`` batch line whose records carry their decoded keys/values, in pieces."""
    out = batch_json(batch, file, encoding)
    records = out.pop("records")
    head = as_ndjson({**out, "records": None})
    yield head[: -len("null}")] + "["
    for n, (rec_json, rec) in enumerate(zip(records, batch.records)):
        texts: dict[str, str] = {}
        if not batch.is_control:
            plain, texts = decoding.json_fields(rec, topic)
            rec_json.update(plain)
        yield ("," if n else "") + _with_texts(rec_json, texts)
    yield "]}"
