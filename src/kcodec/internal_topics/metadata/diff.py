"""What changed in the cluster image between two offsets: topics created and deleted, partition leaders,
ISRs and replicas, configs set and removed, brokers registered, fenced and unfenced, feature levels, quotas,
ACLs, SCRAM credentials, delegation tokens, the producer-id block. Each change is plain data
(``{"change", "subject", "field", "before", "after"}``) with one readable line (:func:`change_line`)."""

from __future__ import annotations

from typing import Any

from kcodec.internal_topics.metadata.image import MetadataImage

__all__ = ["diff_images", "change_line"]

# image section (as_dict key) -> the word a change names it by
_SECTIONS = {
    "brokers": "broker",
    "controllers": "controller",
    "acls": "acl",
    "scramCredentials": "scram_credential",
    "delegationTokens": "delegation_token",
    "clientQuotas": "client_quota",
}


def _change(change: str, subject: str, field: str | None = None, before: Any = None, after: Any = None) -> dict:
    return {"change": change, "subject": subject, "field": field, "before": before, "after": after}


def _fields(kind: str, subject: str, before: dict, after: dict, skip: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for name in sorted(before.keys() | after.keys()):
        if name in skip or before.get(name) == after.get(name):
            continue
        if kind == "broker" and name == "fenced":
            out.append(_change("broker_fenced" if after[name] else "broker_unfenced", subject))
        else:
            out.append(_change(f"{kind}_changed", subject, name, before.get(name), after.get(name)))
    return out


def _entries(kind: str, before: dict, after: dict) -> list[dict]:
    out = []
    for key in sorted(before.keys() | after.keys(), key=str):
        registers = kind in ("broker", "controller")
        if key not in before:
            out.append(_change(f"{kind}_registered" if registers else f"{kind}_created", key, after=after[key]))
        elif key not in after:
            out.append(_change(f"{kind}_unregistered" if registers else f"{kind}_deleted", key, before[key]))
        elif isinstance(before[key], dict):
            out += _fields(kind, key, before[key], after[key])
        elif before[key] != after[key]:
            out.append(_change(f"{kind}_changed", key, None, before[key], after[key]))
    return out


def _topics(before: dict, after: dict) -> list[dict]:
    out = []
    for topic_id in sorted(before.keys() | after.keys()):
        if topic_id not in before:
            t = after[topic_id]
            out.append(
                _change("topic_created", t["name"], after={"topicId": topic_id, "partitions": len(t["partitions"])})
            )
            continue
        if topic_id not in after:
            out.append(_change("topic_deleted", before[topic_id]["name"], before={"topicId": topic_id}))
            continue
        name = after[topic_id]["name"]
        old, new = before[topic_id]["partitions"], after[topic_id]["partitions"]
        for pid in sorted(old.keys() | new.keys(), key=int):
            subject = f"{name}-{pid}"
            if pid not in old:
                out.append(_change("partition_created", subject, after=new[pid]))
            elif pid not in new:
                out.append(_change("partition_deleted", subject, before=old[pid]))
            else:
                out += _fields("partition", subject, old[pid], new[pid], skip=("partitionId",))
    return out


def _configs(before: dict, after: dict) -> list[dict]:
    out = []
    for rtype in sorted(before.keys() | after.keys()):
        old_resources, new_resources = before.get(rtype, {}), after.get(rtype, {})
        for resource in sorted(old_resources.keys() | new_resources.keys()):
            old, new = old_resources.get(resource, {}), new_resources.get(resource, {})
            subject = f"{rtype} {resource}"
            for name in sorted(old.keys() | new.keys()):
                if name not in new:
                    out.append(_change("config_removed", subject, name, old[name]))
                elif old.get(name) != new[name]:
                    out.append(_change("config_set", subject, name, old.get(name), new[name]))
    return out


def diff_images(before: MetadataImage, after: MetadataImage) -> list[dict]:
    """The changes that turn ``before`` into ``after``, section by section."""
    a, b = before.as_dict(), after.as_dict()
    out = _topics(a["topics"], b["topics"])
    for name, (old, new) in {"features": (a["features"], b["features"])}.items():
        for feature in sorted(old.keys() | new.keys()):
            if old.get(feature) != new.get(feature):
                out.append(_change("feature_level_changed", feature, name, old.get(feature), new.get(feature)))
    out += _configs(a["configs"], b["configs"])
    for section, kind in _SECTIONS.items():
        out += _entries(kind, a[section], b[section])
    if a["producerIds"] != b["producerIds"]:
        out.append(_change("producer_ids_changed", "producer ids", None, a["producerIds"], b["producerIds"]))
    return out


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    if value is None:
        return "none"
    return str(value)


def change_line(c: dict) -> str:
    """One change as a line of text."""
    kind, subject = c["change"], c["subject"]
    if kind == "topic_created":
        return f"topic created: {subject} (id {c['after']['topicId']}, {c['after']['partitions']} partition(s))"
    if kind == "topic_deleted":
        return f"topic deleted: {subject} (id {c['before']['topicId']})"
    if kind in ("broker_fenced", "broker_unfenced"):
        return f"broker {subject} {kind.split('_')[1]}"
    if kind == "config_set":
        was = "" if c["before"] is None else f" (was {c['before']})"
        return f"config {subject}: {c['field']} set to {c['after']}{was}"
    if kind == "config_removed":
        return f"config {subject}: {c['field']} removed (was {c['before']})"
    if kind == "feature_level_changed":
        return f"feature {subject}: level {_short(c['before'])} -> {_short(c['after'])}"
    if kind == "producer_ids_changed":
        before, after = c["before"] or {}, c["after"] or {}
        return f"producer ids: next {before.get('nextProducerId', 'none')} -> {after.get('nextProducerId')}"
    what, _, verb = kind.rpartition("_")
    what = what.replace("_", " ")
    if verb in ("created", "deleted", "registered", "unregistered"):
        return f"{what} {verb}: {subject}"
    field = f" {c['field']}" if c["field"] else ""
    return f"{what} {subject}:{field} {_short(c['before'])} -> {_short(c['after'])}"
