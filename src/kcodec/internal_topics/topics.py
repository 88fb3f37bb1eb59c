"""Which registry serves a topic, answered from the topic names the registries list (``kcodec.generated.registries``
or a ``--schemas-from`` package's) alone: no codec, schema or registry machinery is loaded for it, so a command
can ask about every file it reads and pay for the decoders only when one is an internal topic's."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["topic_registry"]


def topic_registry(topic: str, registries: Mapping[str, dict]) -> str | None:
    """The registry decoding ``topic`` (a topic name, or a partition directory such as ``__consumer_offsets-7``)
    among ``registries``; None for a topic that is not an internal one. KRaft control records have no topic
    (their registry is never a topic's)."""
    for name, reg in registries.items():
        if reg["framing"] == "control":
            continue
        for t in reg["topics"]:
            if topic == t or topic.startswith(t + "-") and topic[len(t) + 1 :].isdigit():
                return name
    return None
