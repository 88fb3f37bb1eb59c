"""The ``_schemas`` topic on disk (a partition directory, or a log directory holding one) read into a
:class:`~kcodec.values.registry.RegistryState` with kcodec's own readers: damaged batches are skipped and
reported, records that do not parse are reported, the rest load."""

from __future__ import annotations

import os

from kcodec.log.fs import resolve
from kcodec.log.names import DELETE_SUFFIX, parse_partition_dir
from kcodec.log.partition import Partition
from kcodec.values.errors import SchemaSourceError
from kcodec.values.registry import DamagedRecord, RegistryState, registry_state

__all__ = ["SCHEMAS_TOPIC", "find_registry_partition", "read_registry_topic"]

SCHEMAS_TOPIC = "_schemas"  # the registry's default kafkastore.topic


def _is_registry_dir(path: str, topic: str | None) -> bool:
    try:
        name = parse_partition_dir(path)[0]
    except ValueError:
        return False
    return name == topic if topic else name.startswith(SCHEMAS_TOPIC)


def find_registry_partition(path: str, topic: str | None = None) -> Partition | None:
    """The registry's partition that ``path`` names: itself when it is a ``_schemas-N`` directory (any
    ``_schemas*-N`` name, or ``topic``'s), else the first such directory inside it; None when neither."""
    fs, p = resolve(os.fspath(path))
    if not fs.is_dir(p):
        return None
    if _is_registry_dir(p, topic):
        return Partition(p, fs)
    # listed by hand: a name starting with one underscore is hidden to list_partitions (staging directories)
    names = sorted(fs.name(e.path) for e in fs.list(p) if e.is_dir and not fs.name(e.path).endswith(DELETE_SUFFIX))
    found = [name for name in names if _is_registry_dir(name, topic)]
    return Partition(fs.join(p, found[0]), fs) if found else None


def read_registry_topic(path: str, topic: str | None = None) -> RegistryState:
    """The registry state in the ``_schemas`` partition at (or under) ``path``; :class:`SchemaSourceError`
    when there is none. Damaged batches and records are in the state's ``damaged`` list."""
    part = find_registry_partition(path, topic)
    if part is None:
        raise SchemaSourceError(f"{path}: no {topic or SCHEMAS_TOPIC}-N partition directory here")
    damaged: list[DamagedRecord] = []

    def records():
        for seg in part.segments:
            where = str(seg.log)

            def skipped(r, where=where) -> None:
                damaged.append(DamagedRecord(-1, f"{r.size} damaged bytes at byte {r.start}: {r.reason}", where))

            for batch in seg.batches(skip_corrupt=True, on_skip=skipped):
                if batch.is_control:
                    continue
                for rec in batch.records:
                    yield rec.offset, rec.key, rec.value, where

    state = registry_state(records())
    state.damaged[:0] = damaged
    return state
