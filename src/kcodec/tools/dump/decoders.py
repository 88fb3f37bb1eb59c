"""Key and value decoders for ``kcodec dump --key-decoder/--value-decoder``: kcodec's counterpart of
kafka-dump-log's ``--key-decoder-class``/``--value-decoder-class`` (``org.apache.kafka.tools.api.Decoder``).

A decoder turns a record's key or value bytes into the text printed after ``key:`` / ``payload:``.
Built in: ``string`` (Kafka's StringDecoder: UTF-8, invalid bytes as U+FFFD), ``hex``, ``base64``,
``json`` (checked and printed compact); anything else is a Python callable named ``module:attribute``
that takes ``bytes`` and returns ``str``.
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
    "KAFKA_DECODER_CLASSES",
    "KAFKA_STRING_DECODER",
    "resolve_decoder",
]

Decoder = Callable[[bytes], str]


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
    (ValueError, as :func:`resolve_decoder`, for a name that does not resolve)."""

    def __init__(self, key: str = "string", value: str = "string"):
        self.key_name, self.value_name = key, value
        self._key, self._value = resolve_decoder(key), resolve_decoder(value)

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
