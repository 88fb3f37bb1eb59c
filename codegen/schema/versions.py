"""Kafka's version range notation: "N", "A-B", "A+" and "none"."""

from __future__ import annotations

import re
from dataclasses import dataclass

_RANGE = re.compile(r"^(\d+)(?:(\+)|-(\d+))?$")
MAX_VERSION = 32767  # versions are int16 on the wire (Kafka's api version, a record's version field)
MAX_VERSION_SPAN = 256  # an entity's valid versions: one codec each is generated (Kafka's widest is ~20)


@dataclass(frozen=True)
class VersionRange:
    low: int
    high: int | None  # None: open ended ("A+")
    empty: bool = False

    @classmethod
    def parse(cls, text: object) -> VersionRange:
        if isinstance(text, int) and not isinstance(text, bool):
            text = str(text)
        if not isinstance(text, str):
            raise ValueError(f'version range must be a string like "0", "0-1" or "1+", not {text!r}')
        text = text.strip()
        if text == "none":
            return cls(0, 0, empty=True)
        m = _RANGE.match(text)
        if not m:
            raise ValueError(f'bad version range {text!r}: use "N", "A-B", "A+" or "none"')
        if len(text) > 20 or any(int(g) > MAX_VERSION for g in (m.group(1), m.group(3)) if g is not None):
            raise ValueError(f"bad version range {text[:40]!r}: versions are int16, 0 to {MAX_VERSION}")
        low = int(m.group(1))
        if m.group(2):
            return cls(low, None)
        high = int(m.group(3)) if m.group(3) is not None else low
        if high < low:
            raise ValueError(f"bad version range {text!r}: {high} is below {low}")
        return cls(low, high)

    def __contains__(self, version: int) -> bool:
        if self.empty:
            return False
        return version >= self.low and (self.high is None or version <= self.high)

    def versions(self, within: VersionRange) -> list[int]:
        """The concrete versions of this range inside a closed range."""
        if within.high is None:
            raise ValueError("cannot enumerate an open range")
        return [v for v in range(within.low, within.high + 1) if v in self]

    def fits(self, outer: VersionRange) -> bool:
        """Whether this range lies inside ``outer``; an open end ("1+") is
        allowed inside a closed range, as in Kafka's schemas."""
        if self.empty:
            return True
        if outer.empty or self.low < outer.low:
            return False
        if outer.high is None:
            return True
        return self.low <= outer.high and (self.high is None or self.high <= outer.high)

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"
