"""The KRaft cluster metadata image (Kafka's MetadataImage), as plain data, and how each metadata record
changes it (Kafka's MetadataDelta.replay per record type).

:data:`HANDLERS` maps a ``cluster_metadata`` registry record name to the function applying its decoded
value; values are read by the field names of the record schemas (``schemas/internal/*.yaml``), so a record
type whose schema is added later plugs in by its name. Records the image does not hold (NoOp, ZK migration
state, KRaft transaction markers, handled by the replay) have no handler.

Secrets never enter the image: a SCRAM credential keeps its mechanism and iteration count (not the salt and
keys), a delegation token its id, owner and times (not its HMAC, which the record does not hold anyway).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from kcodec.generated.kafka_enums import (
    ACL_OPERATION_BY_VALUE,
    ACL_PERMISSION_TYPE_BY_VALUE,
    CONFIG_RESOURCE_TYPE,
    CONFIG_RESOURCE_TYPE_BY_VALUE,
    PATTERN_TYPE_BY_VALUE,
    RESOURCE_TYPE_BY_VALUE,
    SCRAM_MECHANISM_BY_VALUE,
    SECURITY_PROTOCOL_BY_VALUE,
)
from kcodec.internal_topics.json_converter import camel
from kcodec.runtime.uuids import uuid_to_text

__all__ = [
    "MetadataImage",
    "TopicImage",
    "PartitionImage",
    "BrokerImage",
    "ControllerImage",
    "Endpoint",
    "ProducerIdsBlock",
    "AclEntry",
    "ScramCredential",
    "DelegationToken",
    "HANDLERS",
    "ImageProblem",
]


def _kafka_names(by_value: dict[int, str], sep: str = "_") -> dict[int, str]:
    """Value -> name as Kafka prints it: a generated enum's name in upper case, Kafka's Java constant
    (``sasl_plaintext`` -> ``SASL_PLAINTEXT``); ``sep`` joins the words instead of ``_``."""
    return {value: name.upper().replace("_", sep) for value, name in by_value.items()}


# Kafka's enums by the ids its Java classes give them (schemas/internal/kafka_enums.yaml)
SECURITY_PROTOCOLS = _kafka_names(SECURITY_PROTOCOL_BY_VALUE)
CONFIG_RESOURCE_TYPES = _kafka_names(CONFIG_RESOURCE_TYPE_BY_VALUE)
ACL_RESOURCE_TYPES = _kafka_names(RESOURCE_TYPE_BY_VALUE)
PATTERN_TYPES = _kafka_names(PATTERN_TYPE_BY_VALUE)
ACL_OPERATIONS = _kafka_names(ACL_OPERATION_BY_VALUE)
PERMISSION_TYPES = _kafka_names(ACL_PERMISSION_TYPE_BY_VALUE)
SCRAM_MECHANISMS = _kafka_names(SCRAM_MECHANISM_BY_VALUE, "-")  # ScramMechanism.mechanismName: SCRAM-SHA-256
TOPIC_CONFIGS = CONFIG_RESOURCE_TYPES[CONFIG_RESOURCE_TYPE["topic"]]  # the configs key of topics: TOPIC

NO_LEADER_CHANGE = -2  # PartitionChangeRecord.leader: the leader stays (Kafka's LeaderConstants)
NO_RECOVERY_STATE_CHANGE = -1  # PartitionChangeRecord.leader_recovery_state: unchanged
# BrokerRegistrationChangeRecord: BrokerRegistrationFencingChange and ...InControlledShutdownChange
FENCING_CHANGE = {1: True, -1: False}
IN_CONTROLLED_SHUTDOWN = 1


def _name(table: dict[int, str], value: int) -> str:
    return table.get(value, f"UNKNOWN({value})")


def _uuid(value: Any) -> str:
    return uuid_to_text(value) if isinstance(value, uuid.UUID) else str(value)


#: bounds on what the image keeps, whatever the log says: the problems (the first ones, then a count), and
#: each broker-id or directory list of a partition or broker (a replication factor is at most the number of
#: brokers; a record naming more is said as a problem and cut). Records arrive compressed, so a small log
#: can name millions of either.
MAX_PROBLEMS = 1000
MAX_LIST = 1024


def _bounded(image: MetadataImage, offset: int, record: str, name: str, values, convert) -> list | None:
    """``values`` converted, at most MAX_LIST of them (a problem says how many more there were)."""
    if values is None:
        return None
    if len(values) > MAX_LIST:
        _problem(image, offset, record, f"{name} holds {len(values)} entries: the first {MAX_LIST} are kept")
        values = values[:MAX_LIST]
    return [convert(v) for v in values]


@dataclass
class PartitionImage:
    partition_id: int
    replicas: list[int]
    isr: list[int]
    removing_replicas: list[int]
    adding_replicas: list[int]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    directories: list[str]
    eligible_leader_replicas: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)


@dataclass
class TopicImage:
    name: str
    topic_id: str
    partitions: dict[int, PartitionImage] = field(default_factory=dict)


@dataclass
class Endpoint:
    name: str
    host: str
    port: int
    security_protocol: str


@dataclass
class BrokerImage:
    broker_id: int
    incarnation_id: str
    broker_epoch: int
    endpoints: list[Endpoint]
    features: dict[str, list[int]]  # name -> [min supported, max supported]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    log_dirs: list[str]


@dataclass
class ControllerImage:
    controller_id: int
    incarnation_id: str
    zk_migration_ready: bool
    endpoints: list[Endpoint]
    features: dict[str, list[int]]


@dataclass
class ProducerIdsBlock:
    broker_id: int
    broker_epoch: int
    next_producer_id: int


@dataclass
class AclEntry:
    acl_id: str
    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission_type: str


@dataclass
class ScramCredential:
    user: str
    mechanism: str
    iterations: int  # the salt, stored key and server key are never kept


@dataclass
class DelegationToken:
    token_id: str
    owner: str
    requester: str
    renewers: list[str]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int


@dataclass
class ImageProblem:
    """A record the replay could not apply (an unknown record type, a change to something that does not
    exist): said, not fatal, as the image is still the best account of the log."""

    offset: int
    record: str | None
    reason: str


@dataclass
class MetadataImage:
    offset: int = -1  # the last offset the image holds, -1 for none
    snapshot: dict | None = None  # {"endOffset", "epoch", "file"} of the snapshot it started from
    topics: dict[str, TopicImage] = field(default_factory=dict)  # by topic id
    brokers: dict[int, BrokerImage] = field(default_factory=dict)
    controllers: dict[int, ControllerImage] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    configs: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # type -> resource -> name -> value
    client_quotas: dict[str, dict[str, float]] = field(default_factory=dict)  # entity ("user=alice") -> key -> value
    producer_ids: ProducerIdsBlock | None = None
    acls: dict[str, AclEntry] = field(default_factory=dict)  # by ACL id
    scram_credentials: dict[str, ScramCredential] = field(default_factory=dict)  # "user mechanism"
    delegation_tokens: dict[str, DelegationToken] = field(default_factory=dict)
    problems: list[ImageProblem] = field(default_factory=list)  # the first MAX_PROBLEMS
    more_problems: int = 0  # found after those

    def problem(self, offset: int, record: str | None, reason: str) -> None:
        """A record the replay could not apply (or applied in part): kept while there are fewer than
        MAX_PROBLEMS, counted after."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(ImageProblem(offset, record, reason))
        else:
            self.more_problems += 1

    def topic_by_name(self, name: str) -> TopicImage | None:
        return next((t for t in self.topics.values() if t.name == name), None)

    def as_dict(self) -> dict:
        """The image as JSON-ready data, keys in lowerCamel as kcodec's other JSON (map keys kept as strings)."""
        return _camel_keys(asdict(self))


# how many levels of map keys (topic ids, config resources and names, quota keys) each image map has: those
# keys are data, kept as they are; only field names become lowerCamel
_MAP_DEPTH = {"topics": 1, "partitions": 1, "brokers": 1, "controllers": 1, "features": 1, "configs": 3}
_MAP_DEPTH |= {"clientQuotas": 2, "acls": 1, "scramCredentials": 1, "delegationTokens": 1}


def _camel_keys(value: Any, depth: int = 0) -> Any:
    """Field names to lowerCamel; the keys of the image's maps (topic ids, config names) as they are."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = str(k) if depth else camel(str(k))
            out[key] = _camel_keys(v, depth - 1 if depth else _MAP_DEPTH.get(key, 0))
        return out
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


# ---------------------------------------------------------------------------- handlers, one per record type

Handler = Callable[[MetadataImage, Any, int], None]


def _problem(image: MetadataImage, offset: int, record: str, reason: str) -> None:
    image.problem(offset, record, reason)


def _endpoints(values) -> list[Endpoint]:
    return [
        Endpoint(e["name"], e["host"], e["port"], _name(SECURITY_PROTOCOLS, e["security_protocol"])) for e in values
    ]


def _features(values) -> dict[str, list[int]]:
    return {f["name"]: [f["min_supported_version"], f["max_supported_version"]] for f in values}


def _register_broker(image: MetadataImage, v, offset: int) -> None:
    image.brokers[v["broker_id"]] = BrokerImage(
        broker_id=v["broker_id"],
        incarnation_id=_uuid(v["incarnation_id"]),
        broker_epoch=v["broker_epoch"],
        endpoints=_endpoints(v["end_points"]),
        features=_features(v["features"]),
        rack=v["rack"],
        fenced=bool(v["fenced"]),
        in_controlled_shutdown=bool(v.get("in_controlled_shutdown", False)),
        is_migrating_zk_broker=bool(v.get("is_migrating_zk_broker", False)),
        log_dirs=_bounded(image, offset, "register_broker_record", "log_dirs", v.get("log_dirs") or [], _uuid) or [],
    )


def _broker(image: MetadataImage, broker_id: int, epoch: int, offset: int, record: str) -> BrokerImage | None:
    """The registration a record changes, when its epoch is the one registered (ClusterDelta.getBrokerOrThrow)."""
    broker = image.brokers.get(broker_id)
    if broker is None:
        _problem(image, offset, record, f"broker {broker_id} is not registered")
    elif broker.broker_epoch != epoch:
        _problem(image, offset, record, f"broker {broker_id} has epoch {broker.broker_epoch}, not {epoch}")
        return None
    return broker


def _unregister_broker(image: MetadataImage, v, offset: int) -> None:
    if _broker(image, v["broker_id"], v["broker_epoch"], offset, "unregister_broker_record"):
        del image.brokers[v["broker_id"]]


def _fence(fenced: bool) -> Handler:
    record = "fence_broker_record" if fenced else "unfence_broker_record"

    def apply(image: MetadataImage, v, offset: int) -> None:
        broker = _broker(image, v["id"], v["epoch"], offset, record)
        if broker is not None:
            broker.fenced = fenced

    return apply


def _broker_registration_change(image: MetadataImage, v, offset: int) -> None:
    broker = _broker(image, v["broker_id"], v["broker_epoch"], offset, "broker_registration_change_record")
    if broker is None:
        return
    fenced = FENCING_CHANGE.get(v.get("fenced", 0))
    if fenced is not None:
        broker.fenced = fenced
    if v.get("in_controlled_shutdown", 0) == IN_CONTROLLED_SHUTDOWN:
        broker.in_controlled_shutdown = True
    if v.get("log_dirs"):
        record = "broker_registration_change_record"
        broker.log_dirs = _bounded(image, offset, record, "log_dirs", v["log_dirs"], _uuid) or []


def _register_controller(image: MetadataImage, v, offset: int) -> None:
    image.controllers[v["controller_id"]] = ControllerImage(
        controller_id=v["controller_id"],
        incarnation_id=_uuid(v["incarnation_id"]),
        zk_migration_ready=bool(v["zk_migration_ready"]),
        endpoints=_endpoints(v["end_points"]),
        features=_features(v["features"]),
    )


def _topic(image: MetadataImage, v, offset: int) -> None:
    topic_id = _uuid(v["topic_id"])
    image.topics[topic_id] = TopicImage(v["name"], topic_id)


def _remove_topic(image: MetadataImage, v, offset: int) -> None:
    topic = image.topics.pop(_uuid(v["topic_id"]), None)
    if topic is None:
        _problem(image, offset, "remove_topic_record", f"no topic with id {_uuid(v['topic_id'])}")
        return
    # MetadataDelta replays the removal into the configs too: the topic's configs go with it
    image.configs.get(TOPIC_CONFIGS, {}).pop(topic.name, None)


def _partition(image: MetadataImage, v, offset: int) -> None:
    topic = image.topics.get(_uuid(v["topic_id"]))
    if topic is None:
        _problem(image, offset, "partition_record", f"no topic with id {_uuid(v['topic_id'])}")
        return

    def ints(name: str) -> list[int]:
        return _bounded(image, offset, "partition_record", name, v.get(name), int) or []

    topic.partitions[v["partition_id"]] = PartitionImage(
        partition_id=v["partition_id"],
        replicas=ints("replicas"),
        isr=ints("isr"),
        removing_replicas=ints("removing_replicas"),
        adding_replicas=ints("adding_replicas"),
        leader=v["leader"],
        leader_recovery_state=v.get("leader_recovery_state", 0),
        leader_epoch=v["leader_epoch"],
        partition_epoch=v["partition_epoch"],
        directories=_bounded(image, offset, "partition_record", "directories", v.get("directories"), _uuid) or [],
        eligible_leader_replicas=ints("eligible_leader_replicas"),
        last_known_elr=ints("last_known_elr"),
    )


def _partition_change(image: MetadataImage, v, offset: int) -> None:
    """PartitionRegistration.merge: null fields stay; a new leader bumps the leader epoch; every change
    bumps the partition epoch."""
    topic = image.topics.get(_uuid(v["topic_id"]))
    p = topic.partitions.get(v["partition_id"]) if topic else None
    if p is None:
        what = f"{_uuid(v['topic_id'])}-{v['partition_id']}"
        _problem(image, offset, "partition_change_record", f"no partition {what}")
        return
    record = "partition_change_record"
    for name in ("replicas", "isr", "removing_replicas", "adding_replicas", "eligible_leader_replicas"):
        if v.get(name) is not None:
            setattr(p, name, _bounded(image, offset, record, name, v[name], int))
    if v.get("last_known_elr") is not None:
        p.last_known_elr = _bounded(image, offset, record, "last_known_elr", v["last_known_elr"], int) or []
    if v.get("directories") is not None:
        p.directories = _bounded(image, offset, record, "directories", v["directories"], _uuid) or []
    if v.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
        p.leader = v["leader"]
        p.leader_epoch += 1
    if v.get("leader_recovery_state", NO_RECOVERY_STATE_CHANGE) != NO_RECOVERY_STATE_CHANGE:
        p.leader_recovery_state = v["leader_recovery_state"]
    p.partition_epoch += 1


def _clear_elr(image: MetadataImage, v, offset: int) -> None:
    """ClearElrRecord (Kafka 4.1): an empty topic name clears every topic's ELRs."""
    if v["topic_name"]:
        topic = image.topic_by_name(v["topic_name"])
        if topic is None:
            _problem(image, offset, "clear_elr_record", f"no topic named {v['topic_name']!r}")
            return
        topics = [topic]
    else:
        topics = list(image.topics.values())
    for t in topics:
        for p in t.partitions.values():
            p.eligible_leader_replicas, p.last_known_elr = [], []


def _config(image: MetadataImage, v, offset: int) -> None:
    resources = image.configs.setdefault(_name(CONFIG_RESOURCE_TYPES, v["resource_type"]), {})
    configs = resources.setdefault(v["resource_name"], {})
    if v["value"] is None:  # a null value removes the config
        configs.pop(v["name"], None)
        if not configs:
            del resources[v["resource_name"]]
        if not resources:
            del image.configs[_name(CONFIG_RESOURCE_TYPES, v["resource_type"])]
    else:
        configs[v["name"]] = v["value"]


def quota_entity(entity) -> str:
    """A client quota entity as Kafka's tools print it: ``user=alice,client-id=app``; a null name is the
    default entity, ``<default>``."""
    parts = sorted((e["entity_type"], "<default>" if e["entity_name"] is None else e["entity_name"]) for e in entity)
    return ",".join(f"{t}={n}" for t, n in parts)


def _client_quota(image: MetadataImage, v, offset: int) -> None:
    key = quota_entity(v["entity"])
    quotas = image.client_quotas.setdefault(key, {})
    if v["remove"]:
        quotas.pop(v["key"], None)
        if not quotas:
            del image.client_quotas[key]
    else:
        quotas[v["key"]] = v["value"]


def _feature_level(image: MetadataImage, v, offset: int) -> None:
    if v["feature_level"] == 0 and v["name"] != "metadata.version":  # level 0 removes a feature (FeaturesDelta)
        image.features.pop(v["name"], None)
    else:
        image.features[v["name"]] = v["feature_level"]


def _producer_ids(image: MetadataImage, v, offset: int) -> None:
    image.producer_ids = ProducerIdsBlock(v["broker_id"], v.get("broker_epoch", -1), v["next_producer_id"])


def _acl(image: MetadataImage, v, offset: int) -> None:
    acl_id = _uuid(v["id"])
    image.acls[acl_id] = AclEntry(
        acl_id=acl_id,
        resource_type=_name(ACL_RESOURCE_TYPES, v["resource_type"]),
        resource_name=v["resource_name"],
        pattern_type=_name(PATTERN_TYPES, v["pattern_type"]),
        principal=v["principal"],
        host=v["host"],
        operation=_name(ACL_OPERATIONS, v["operation"]),
        permission_type=_name(PERMISSION_TYPES, v["permission_type"]),
    )


def _remove_acl(image: MetadataImage, v, offset: int) -> None:
    if image.acls.pop(_uuid(v["id"]), None) is None:
        _problem(image, offset, "remove_access_control_entry_record", f"no ACL with id {_uuid(v['id'])}")


def _scram_key(v) -> tuple[str, str]:
    mechanism = _name(SCRAM_MECHANISMS, v["mechanism"])
    return f"{v['name']} {mechanism}", mechanism


def _scram(image: MetadataImage, v, offset: int) -> None:
    key, mechanism = _scram_key(v)
    image.scram_credentials[key] = ScramCredential(v["name"], mechanism, v["iterations"])


def _remove_scram(image: MetadataImage, v, offset: int) -> None:
    key, _ = _scram_key(v)
    if image.scram_credentials.pop(key, None) is None:
        _problem(image, offset, "remove_user_scram_credential_record", f"no SCRAM credential {key}")


def _delegation_token(image: MetadataImage, v, offset: int) -> None:
    image.delegation_tokens[v["token_id"]] = DelegationToken(
        token_id=v["token_id"],
        owner=v["owner"],
        requester=v["requester"],
        renewers=list(v["renewers"]),
        issue_timestamp=v["issue_timestamp"],
        max_timestamp=v["max_timestamp"],
        expiration_timestamp=v["expiration_timestamp"],
    )


def _remove_delegation_token(image: MetadataImage, v, offset: int) -> None:
    if image.delegation_tokens.pop(v["token_id"], None) is None:
        _problem(image, offset, "remove_delegation_token_record", f"no delegation token {v['token_id']!r}")


HANDLERS: dict[str, Handler] = {
    "register_broker_record": _register_broker,
    "unregister_broker_record": _unregister_broker,
    "topic_record": _topic,
    "partition_record": _partition,
    "config_record": _config,
    "partition_change_record": _partition_change,
    "access_control_entry_record": _acl,
    "fence_broker_record": _fence(True),
    "unfence_broker_record": _fence(False),
    "remove_topic_record": _remove_topic,
    "delegation_token_record": _delegation_token,
    "user_scram_credential_record": _scram,
    "feature_level_record": _feature_level,
    "client_quota_record": _client_quota,
    "producer_ids_record": _producer_ids,
    "broker_registration_change_record": _broker_registration_change,
    "remove_access_control_entry_record": _remove_acl,
    "remove_user_scram_credential_record": _remove_scram,
    "remove_delegation_token_record": _remove_delegation_token,
    "register_controller_record": _register_controller,
    "clear_elr_record": _clear_elr,
}
# Records that change nothing the image holds (the KRaft transaction markers are the replay's).
IGNORED = frozenset({"no_op_record", "zk_migration_state_record"})
