"""Parsing the data source's options as Spark passes them (a case-insensitive
string map): booleans, integers with a floor, fractions, one of a few words,
timestamps."""

from __future__ import annotations

__all__ = ["bool_option", "int_option", "choice_option", "timestamp_option", "fraction_option"]


def bool_option(options, name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"option {name} must be true or false, not {raw!r}")


def int_option(options, name: str, default: int | None, minimum: int | None = None) -> int | None:
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"option {name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"option {name} must be >= {minimum}, not {value}")
    return value


def choice_option(options, name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = options.get(name.lower())
    value = default if raw is None else str(raw).strip().lower()
    if value not in choices:
        raise ValueError(f"option {name} must be one of {', '.join(choices)}, not {raw!r}")
    return value


def timestamp_option(options, name: str) -> int | None:
    """Milliseconds since the epoch, or an ISO-8601 date-time (UTC unless it says otherwise)."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        pass
    from datetime import datetime, timezone

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"option {name} must be milliseconds since the epoch or an ISO-8601 time, not {raw!r}"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def fraction_option(options, name: str, default: float) -> float:
    """A fraction in (0, 1]."""
    raw = options.get(name.lower())
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ValueError(f"option {name} must be a number in (0, 1], not {raw!r}") from None
    if not 0 < value <= 1:
        raise ValueError(f"option {name} must be in (0, 1], not {raw!r}")
    return value
