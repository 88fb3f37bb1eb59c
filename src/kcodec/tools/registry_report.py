"""What ``kcodec schemas DIR`` prints: the Schema Registry state a ``_schemas`` topic holds (subjects, their
versions with ids and types, soft and hard deletions, compatibility configs, damaged records), as text
lines or one JSON document."""

from __future__ import annotations

from kcodec.values.registry import RegistryState

__all__ = ["registry_json", "registry_lines"]


def registry_json(state: RegistryState, source: str) -> dict:
    subjects = []
    for subject in state.subjects():
        versions = [
            {
                "version": s.version,
                "id": s.id,
                "schemaType": s.schema_type,
                "deleted": s.deleted,
                "references": [{"name": r.name, "subject": r.subject, "version": r.version} for r in s.references],
            }
            for (subj, _), s in sorted(state.versions.items())
            if subj == subject
        ]
        hard = sorted((v, i) for (subj, v), i in state.hard_deleted.items() if subj == subject)
        subjects.append(
            {
                "subject": subject,
                "versions": versions,
                "hardDeleted": [{"version": v, "id": i} for v, i in hard],
                "compatibility": state.configs.get(subject),
            }
        )
    return {
        "source": source,
        "records": state.records,
        "schemas": len({s.id for s in state.versions.values()}),
        "subjects": subjects,
        "globalCompatibility": state.configs.get(None),
        "otherKeytypes": dict(sorted(state.other_keytypes.items())),
        "damaged": [{"file": d.file, "offset": d.offset, "reason": d.reason} for d in state.damaged],
    }


def registry_lines(state: RegistryState, source: str) -> list[str]:
    doc = registry_json(state, source)
    live = sum(1 for s in state.versions.values() if not s.deleted)
    soft = len(state.versions) - live
    lines = [
        f"Schema Registry state in {source}: {doc['records']} record(s), {len(doc['subjects'])} subject(s), "
        f"{doc['schemas']} schema id(s), {live} live version(s), {soft} soft-deleted, "
        f"{len(state.hard_deleted)} hard-deleted"
    ]
    if doc["globalCompatibility"]:
        lines.append(f"global compatibility: {doc['globalCompatibility']}")
    for subject in doc["subjects"]:
        extra = f" (compatibility {subject['compatibility']})" if subject["compatibility"] else ""
        lines.append(f"subject {subject['subject']}{extra}")
        for v in subject["versions"]:
            refs = ", ".join(f"{r['name']} -> {r['subject']} v{r['version']}" for r in v["references"])
            flags = " soft-deleted" if v["deleted"] else ""
            lines.append(
                f"  version {v['version']}: id {v['id']} {v['schemaType']}{flags}"
                + (f" references {refs}" if refs else "")
            )
        for h in subject["hardDeleted"]:
            was = f" (was id {h['id']})" if h["id"] is not None else ""
            lines.append(f"  version {h['version']}: hard-deleted{was}")
    if doc["otherKeytypes"]:
        lines.append("other records: " + ", ".join(f"{k} {n}" for k, n in doc["otherKeytypes"].items()))
    for d in doc["damaged"]:
        at = f"offset {d['offset']}" if d["offset"] >= 0 else "a damaged batch"
        lines.append(f"damaged: {d['file']}: {at}: {d['reason']}")
    return lines
