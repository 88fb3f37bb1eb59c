"""The internal topic a dumped file is read as: the one a kafka-dump-log decoder option names, or the one its
partition directory is named after. Light on purpose (nothing here loads a codec): every ``kcodec dump`` and
``kcodec inspect`` asks, and only a file of an internal topic needs :mod:`kcodec.tools.dump.internal`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath

from kcodec.internal_topics.topics import topic_registry

__all__ = ["DECODER_OPTIONS", "registry_for_path"]

# kafka-dump-log's option -> the registry it decodes with
DECODER_OPTIONS = {
    "offsets_decoder": "consumer_offsets",
    "transaction_log_decoder": "transaction_state",
    "share_group_state_decoder": "share_group_state",
    "cluster_metadata_decoder": "cluster_metadata",
    "remote_log_metadata_decoder": "remote_log_metadata",
}


def registry_for_path(path: PurePath, registries: Mapping[str, dict]) -> str | None:
    """The registry of a segment under a partition directory named after an internal topic
    (``__consumer_offsets-7/00000000000000000000.log``), among ``registries`` (a package's, as
    :attr:`kcodec.tools.schema_package.SchemaPackage.registries` gives them)."""
    return topic_registry(path.parent.name, registries) if path.parent.name else None
