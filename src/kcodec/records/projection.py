"""The plan by which the compiled kernel builds a :class:`~kcodec.records.model.Record` from a decoded
record's fields (``project_record_v2``; ``csrc/entry.c`` reads it), with every item named.

The kernel takes one item per Record field, in the Record's order: a field of the decoded record as it
is (:func:`field`), an array field as a tuple (:func:`as_tuple`), an integer field plus a base
(:func:`plus`: a delta made absolute), or a constant (:func:`constant`). :func:`record_plan` takes the
items by the Record's field names, so no caller counts positions.
"""

from __future__ import annotations

from typing import Any

from kcodec.records.model import Record

__all__ = ["PlanItem", "field", "as_tuple", "plus", "constant", "record_plan"]

PlanItem = tuple  # the kernel's spelling: ("f", i), ("t", i), ("a", i, base), ("c", value)


def field(index: int) -> PlanItem:
    """The decoded record's field ``index`` as it is."""
    return ("f", index)


def as_tuple(index: int) -> PlanItem:
    """The decoded record's array field ``index`` as a tuple (a Record's headers)."""
    return ("t", index)


def plus(index: int, base: int) -> PlanItem:
    """The decoded record's integer field ``index`` plus ``base`` (an offset or timestamp delta made absolute)."""
    return ("a", index, base)


def constant(value: Any) -> PlanItem:
    """The same value for every record (the batch's timestamp type, its magic, None)."""
    return ("c", value)


def record_plan(**items: PlanItem) -> tuple[PlanItem, ...]:
    """The plan for a Record, given one item per Record field by name (``offset=plus(...)``, ...)."""
    names = Record._fields
    if set(items) != set(names):
        missing, extra = sorted(set(names) - set(items)), sorted(set(items) - set(names))
        raise TypeError(f"record_plan: missing {missing}, unknown {extra}")
    return tuple(items[name] for name in names)
