"""Key and value decoders for ``kcodec dump --key-decoder/--value-decoder``: kcodec's counterpart of
kafka-dump-log's ``--key-decoder-class``/``--value-decoder-class`` (``org.apache.kafka.tools.api.Decoder``).

A decoder turns a record's key or value bytes into the text printed after ``key:`` / ``payload:``.
Built in: ``string`` (Kafka's StringDecoder: UTF-8, invalid bytes as U+FFFD), ``hex``, ``base64``,
``json`` (checked and printed compact), ``confluent`` (Schema Registry framed Avro, Protobuf or JSON Schema,
printed as JSON: :mod:`kcodec.tools.dump.values`); anything else is a Python callable named
``module:attribute`` that takes ``bytes`` and returns ``str``.
"""

from __future__ import annotations

import base64
import importlib
import json
from collections.abc import Callable

from kcodec.errors import KcodecError

__all__ = [
    "Decoder",
    "DecoderError",
    "DataDecoders",
    "BUILTIN_DECODERS",
    "CONFLUENT",
    "KAFKA_DECODER_CLASSES",
    "KAFKA_STRING_DECODER",
    "resolve_decoder",
]

Decoder = Callable[[bytes], str]
CONFLUENT = "confluent"  # Schema Registry framed keys/values (kcodec.tools.dump.values), built by the command


class DecoderError(KcodecError):
    """A key or value decoder failed on one record (names the decoder and the record's offset)."""

    kind = "decoder"


def _string(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def _json(b: bytes) -> str:
    return json.dumps(json.loads(b), separators=(",", ":"), ensure_ascii=False)


BUILTIN_DECODERS: dict[str, Decoder] = {
    "string": _string,
    "hex": bytes.hex,
    "base64": lambda b: base64.b64encode(b).decode("ascii"),
    "json": _json,
}

#: kafka-dump-log's --key-decoder-class / --value-decoder-class names of the decoders kcodec has built in
KAFKA_STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"  # the Java tool's default
KAFKA_DECODER_CLASSES = {
    KAFKA_STRING_DECODER: "string",
    "kafka.serializer.StringDecoder": "string",  # the Scala tool's
}


def resolve_decoder(spec: str) -> Decoder:
    """The decoder a command line names; ValueError (a usage error) for a name that is neither built in
    nor an importable ``module:callable`` (Kafka's class name of a built-in decoder names it too)."""
    spec = KAFKA_DECODER_CLASSES.get(spec, spec)
    if spec in BUILTIN_DECODERS:
        return BUILTIN_DECODERS[spec]
    if spec == CONFLUENT:
        raise ValueError("the confluent decoder needs a schema source")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"unknown decoder {spec!r}: use one of {', '.join(BUILTIN_DECODERS)} or module:callable")
    try:
        obj = importlib.import_module(module_name)
    except Exception as exc:  # a user's module may fail in any way while importing
        raise ValueError(f"decoder {spec!r}: cannot import {module_name}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"decoder {spec!r}: {module_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"decoder {spec!r}: {attr} is not callable")
    return obj


def _apply(decoder: Decoder, name: str, what: str, data: bytes, offset: int) -> str:
    try:
        text = decoder(data)
    except Exception as exc:  # a user's decoder may raise anything; it becomes one line naming the record
        raise DecoderError(f"{what} decoder {name} failed on the record at offset {offset}: {exc}") from None
    if not isinstance(text, str):
        raise DecoderError(
            f"{what} decoder {name} returned {type(text).__name__}, not str, for the record at offset {offset}"
        )
    return text


class DataDecoders:
    """The key and value decoders of one dump, by the names the command line gave
    (ValueError, as :func:`resolve_decoder`, for a name that does not resolve).

    ``confluent`` (:class:`kcodec.tools.dump.values.SchemaRegistryDecoding`) decodes the keys and values
    named ``confluent``: Schema Registry framed, read with the topic of the file (:meth:`for_topic`)."""

    def __init__(self, key: str = "string", value: str = "string", confluent=None, topic: str | None = None):
        self.key_name, self.value_name = key, value
        self.confluent, self.topic = confluent, topic
        self._key, self._value = self._resolve(key, True), self._resolve(value, False)

    def _resolve(self, spec: str, key: bool) -> Decoder:
        if spec != CONFLUENT:
            return resolve_decoder(spec)
        if self.confluent is None:
            raise ValueError("the confluent decoder needs a schema source")
        confluent = self.confluent
        return lambda data: confluent.text(data, self.topic, key)

    def for_topic(self, topic: str | None) -> DataDecoders:
        """These decoders for the records of ``topic`` (the Schema Registry subjects it names)."""
        return DataDecoders(self.key_name, self.value_name, self.confluent, topic)

    def key_text(self, data: bytes, offset: int) -> str:
        return _apply(self._key, self.key_name, "key", data, offset)

    def value_text(self, data: bytes, offset: int) -> str:
        return _apply(self._value, self.value_name, "value", data, offset)

    def parse(self, record) -> tuple[str | None, str | None]:
        """The texts after ``key:`` and ``payload:`` (None: not printed), as Kafka's MessageParser.parse;
        the internal topics' decoders (kcodec.tools.dump.internal) read key and value together."""
        key = None if record.key is None else self.key_text(record.key, record.offset)
        value = None if record.value is None else self.value_text(record.value, record.offset)
        return key, value


STRING = DataDecoders()
