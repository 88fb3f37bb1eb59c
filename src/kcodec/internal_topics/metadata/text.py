"""The cluster image as readable text: one section per kind of thing it holds."""

from __future__ import annotations

from kcodec.internal_topics.metadata.image import Endpoint, MetadataImage

__all__ = ["image_lines"]


def _list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _endpoints(endpoints: list[Endpoint]) -> str:
    return ", ".join(f"{e.name}://{e.host}:{e.port} ({e.security_protocol})" for e in endpoints) or "none"


def _features(features: dict[str, list[int]]) -> str:
    return ", ".join(f"{n} {lo}-{hi}" for n, (lo, hi) in sorted(features.items())) or "none"


def _section(title: str, body: list[str]) -> list[str]:
    return [f"{title}:", *(body or ["  (none)"])]


def image_lines(image: MetadataImage, directory: str) -> list[str]:
    start = "the start of the log"
    if image.snapshot:
        s = image.snapshot
        start = f"snapshot {s['file']} (end offset {s['endOffset']}, epoch {s['epoch']})"
    out = [f"Cluster metadata image of {directory} at offset {image.offset}, replayed from {start}"]
    out += _section("Features", [f"  {n}: {level}" for n, level in sorted(image.features.items())])
    brokers = []
    for b in sorted(image.brokers.values(), key=lambda b: b.broker_id):
        brokers.append(
            f"  broker {b.broker_id}: epoch {b.broker_epoch}, incarnation {b.incarnation_id}, rack {b.rack or 'none'}, "
            f"fenced: {_yes(b.fenced)}, in controlled shutdown: {_yes(b.in_controlled_shutdown)}"
        )
        brokers.append(f"    listeners: {_endpoints(b.endpoints)}")
        brokers.append(f"    features: {_features(b.features)}")
        if b.log_dirs:
            brokers.append(f"    log dirs: {_list(b.log_dirs)}")
    out += _section("Brokers", brokers)
    controllers = []
    for c in sorted(image.controllers.values(), key=lambda c: c.controller_id):
        controllers.append(f"  controller {c.controller_id}: incarnation {c.incarnation_id}")
        controllers.append(f"    listeners: {_endpoints(c.endpoints)}")
        controllers.append(f"    features: {_features(c.features)}")
    out += _section("Controllers", controllers)
    topics = []
    for t in sorted(image.topics.values(), key=lambda t: t.name):
        topics.append(f"  {t.name} (id {t.topic_id}): {len(t.partitions)} partition(s)")
        for p in sorted(t.partitions.values(), key=lambda p: p.partition_id):
            line = (
                f"    {p.partition_id}: leader {p.leader} (epoch {p.leader_epoch}), replicas {_list(p.replicas)}, "
                f"isr {_list(p.isr)}, elr {_list(p.eligible_leader_replicas)}, "
                f"last known elr {_list(p.last_known_elr)}, partition epoch {p.partition_epoch}"
            )
            if p.adding_replicas or p.removing_replicas:
                line += f", adding {_list(p.adding_replicas)}, removing {_list(p.removing_replicas)}"
            if p.leader_recovery_state:
                line += ", leader recovering"
            if p.directories:
                line += f", directories {_list(p.directories)}"
            topics.append(line)
    out += _section("Topics", topics)
    configs = []
    for rtype, resources in sorted(image.configs.items()):
        for name, values in sorted(resources.items()):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
            configs.append(f"  {rtype} {name or '<default>'}: {shown}")
    out += _section("Configs", configs)
    quotas = [
        f"  {entity}: " + ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
        for entity, values in sorted(image.client_quotas.items())
    ]
    out += _section("Client quotas", quotas)
    p_ids = image.producer_ids
    out += _section(
        "Producer ids",
        [f"  next producer id {p_ids.next_producer_id} (block of broker {p_ids.broker_id}, epoch {p_ids.broker_epoch})"]
        if p_ids
        else [],
    )
    acls = [
        f"  {a.principal} {a.permission_type} {a.operation} on {a.resource_type} {a.pattern_type} {a.resource_name} "
        f"from host {a.host} (id {a.acl_id})"
        for a in sorted(image.acls.values(), key=lambda a: (a.resource_type, a.resource_name, a.principal, a.acl_id))
    ]
    out += _section("ACLs", acls)
    scram = [
        f"  {s.user}: {s.mechanism}, {s.iterations} iterations"
        for s in sorted(image.scram_credentials.values(), key=lambda s: (s.user, s.mechanism))
    ]
    out += _section("SCRAM credentials", scram)
    tokens = [
        f"  {t.token_id}: owner {t.owner}, requester {t.requester}, renewers {_list(t.renewers)}, "
        f"issued {t.issue_timestamp}, expires {t.expiration_timestamp}, max {t.max_timestamp}"
        for t in sorted(image.delegation_tokens.values(), key=lambda t: t.token_id)
    ]
    out += _section("Delegation tokens", tokens)
    if image.problems:
        out += _section(
            "Not applied",
            [f"  offset {p.offset} ({p.record or 'unknown record'}): {p.reason}" for p in image.problems]
            + ([f"  and {image.more_problems} more, not listed"] if image.more_problems else []),
        )
    return out
