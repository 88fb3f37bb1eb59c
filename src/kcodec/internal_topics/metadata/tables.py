"""The KRaft metadata image (:mod:`kcodec.internal_topics.metadata.image`) as typed tables, one per kind, for
``kcodec pipeline``: built from the image's plain data (``MetadataImage.as_dict()``, what ``kcodec metadata
image --json`` prints), so the tables and the JSON cannot disagree. Column names are the JSON's lowerCamel
keys; lists stay lists (replicas, ISR, endpoints), timestamps are timestamp columns; secrets are not in the
image, so not in the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pyarrow as pa

__all__ = ["IMAGE_TABLES", "image_tables"]

_INTS = pa.list_(pa.field("element", pa.int32()))
_STRINGS = pa.list_(pa.field("element", pa.string()))
_TS = pa.timestamp("ms", tz="UTC")
_ENDPOINTS = pa.list_(
    pa.field(
        "element",
        pa.struct(
            [("name", pa.string()), ("host", pa.string()), ("port", pa.int32()), ("securityProtocol", pa.string())]
        ),
    )
)
_FEATURE_RANGES = pa.list_(
    pa.field("element", pa.struct([("name", pa.string()), ("minSupported", pa.int32()), ("maxSupported", pa.int32())]))
)

Rows = Callable[[dict], Iterable[dict]]


def _topics(image: dict) -> Iterable[dict]:
    for t in image["topics"].values():
        yield {"topicId": t["topicId"], "name": t["name"], "partitions": len(t["partitions"])}


def _partitions(image: dict) -> Iterable[dict]:
    for t in image["topics"].values():
        for p in t["partitions"].values():
            yield {"topic": t["name"], "topicId": t["topicId"], **p}


def _feature_ranges(features: dict[str, list[int]]) -> list[dict]:
    return [{"name": n, "minSupported": lo, "maxSupported": hi} for n, (lo, hi) in features.items()]


def _brokers(image: dict) -> Iterable[dict]:
    for b in image["brokers"].values():
        yield b | {"features": _feature_ranges(b["features"])}


def _controllers(image: dict) -> Iterable[dict]:
    for c in image["controllers"].values():
        yield c | {"features": _feature_ranges(c["features"])}


def _features(image: dict) -> Iterable[dict]:
    return ({"name": n, "level": level} for n, level in image["features"].items())


def _configs(image: dict) -> Iterable[dict]:
    for rtype, resources in image["configs"].items():
        for resource, configs in resources.items():
            for name, value in configs.items():
                yield {"resourceType": rtype, "resourceName": resource, "name": name, "value": value}


def _client_quotas(image: dict) -> Iterable[dict]:
    for entity, quotas in image["clientQuotas"].items():
        for k, v in quotas.items():
            yield {"entity": entity, "key": k, "value": v}


def _values(section: str) -> Rows:
    return lambda image: image[section].values()


def _producer_ids(image: dict) -> Iterable[dict]:
    return [image["producerIds"]] if image["producerIds"] else []


def _problems(image: dict) -> Iterable[dict]:
    return image["problems"]


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in fields])


#: table name -> (rows from the image's plain data, columns)
IMAGE_TABLES: dict[str, tuple[Rows, pa.Schema]] = {
    "topics": (_topics, _schema(("topicId", pa.string()), ("name", pa.string()), ("partitions", pa.int32()))),
    "partitions": (
        _partitions,
        _schema(
            ("topic", pa.string()),
            ("topicId", pa.string()),
            ("partitionId", pa.int32()),
            ("leader", pa.int32()),
            ("leaderEpoch", pa.int32()),
            ("partitionEpoch", pa.int32()),
            ("replicas", _INTS),
            ("isr", _INTS),
            ("eligibleLeaderReplicas", _INTS),
            ("lastKnownElr", _INTS),
            ("addingReplicas", _INTS),
            ("removingReplicas", _INTS),
            ("leaderRecoveryState", pa.int8()),
            ("directories", _STRINGS),
        ),
    ),
    "brokers": (
        _brokers,
        _schema(
            ("brokerId", pa.int32()),
            ("brokerEpoch", pa.int64()),
            ("incarnationId", pa.string()),
            ("rack", pa.string()),
            ("fenced", pa.bool_()),
            ("inControlledShutdown", pa.bool_()),
            ("isMigratingZkBroker", pa.bool_()),
            ("endpoints", _ENDPOINTS),
            ("features", _FEATURE_RANGES),
            ("logDirs", _STRINGS),
        ),
    ),
    "controllers": (
        _controllers,
        _schema(
            ("controllerId", pa.int32()),
            ("incarnationId", pa.string()),
            ("zkMigrationReady", pa.bool_()),
            ("endpoints", _ENDPOINTS),
            ("features", _FEATURE_RANGES),
        ),
    ),
    "features": (_features, _schema(("name", pa.string()), ("level", pa.int16()))),
    "configs": (
        _configs,
        _schema(
            ("resourceType", pa.string()), ("resourceName", pa.string()), ("name", pa.string()), ("value", pa.string())
        ),
    ),
    "client_quotas": (_client_quotas, _schema(("entity", pa.string()), ("key", pa.string()), ("value", pa.float64()))),
    "acls": (
        _values("acls"),
        _schema(
            ("aclId", pa.string()),
            ("resourceType", pa.string()),
            ("resourceName", pa.string()),
            ("patternType", pa.string()),
            ("principal", pa.string()),
            ("host", pa.string()),
            ("operation", pa.string()),
            ("permissionType", pa.string()),
        ),
    ),
    "scram_credentials": (
        _values("scramCredentials"),
        _schema(("user", pa.string()), ("mechanism", pa.string()), ("iterations", pa.int32())),
    ),
    "delegation_tokens": (
        _values("delegationTokens"),
        _schema(
            ("tokenId", pa.string()),
            ("owner", pa.string()),
            ("requester", pa.string()),
            ("renewers", _STRINGS),
            ("issueTimestamp", _TS),
            ("maxTimestamp", _TS),
            ("expirationTimestamp", _TS),
        ),
    ),
    "producer_ids": (
        _producer_ids,
        _schema(("brokerId", pa.int32()), ("brokerEpoch", pa.int64()), ("nextProducerId", pa.int64())),
    ),
    "problems": (_problems, _schema(("offset", pa.int64()), ("record", pa.string()), ("reason", pa.string()))),
}


def image_tables(image: dict) -> dict[str, pa.Table]:
    """Every table of :data:`IMAGE_TABLES` from ``image``, a ``MetadataImage.as_dict()``."""
    out = {}
    for name, (rows, schema) in IMAGE_TABLES.items():
        picked = [{f.name: r.get(f.name) for f in schema} for r in rows(image)]
        out[name] = pa.Table.from_pylist(picked, schema=schema)
    return out
