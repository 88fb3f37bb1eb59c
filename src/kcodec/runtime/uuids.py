"""Kafka's text form of a UUID: URL-safe base64 of its 16 bytes without padding (``Uuid.toString``),
22 characters; the zero UUID is ``AAAAAAAAAAAAAAAAAAAAAA``."""

from __future__ import annotations

import base64
import binascii
import uuid

__all__ = ["uuid_to_text", "uuid_from_text", "ZERO_UUID"]

ZERO_UUID = uuid.UUID(int=0)


def uuid_to_text(value: uuid.UUID) -> str:
    """The UUID as Kafka prints it."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_text(text: str) -> uuid.UUID:
    """A UUID from Kafka's text form; ValueError when it is not 22 base64url characters of 16 bytes."""
    if not isinstance(text, str) or len(text) != 22:
        raise ValueError(f"a uuid is 22 URL-safe base64 characters, not {text!r}")
    try:
        data = base64.b64decode(text + "==", altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{text!r} is not URL-safe base64") from None
    return uuid.UUID(bytes=data)
