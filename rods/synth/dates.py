"""Dates as a state holds them: ISO strings (`2026-03-09`, date-times too) or day numbers beside a `today`.

A variant moves every date of its seed by one whole number of weeks
(`shift_date`), so each stays as far from today and from the others as in
the seed, and a Monday stays a Monday (docs/design.md §4.2).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_day_number(value: Any) -> bool:
    """An integer (not a bool): a day number, where a state counts days."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_date(value: Any) -> dt.date | None:
    """An ISO date (`2026-03-09`, also the date part of a date-time), else None."""
    if isinstance(value, str) and _ISO_DATE.match(value):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def shift_date(value: Any, days: int) -> Any:
    """A date moved by `days`: an ISO string keeps whatever follows its date part, a day number is added to."""
    day = as_date(value)
    if day is not None:
        return (day + dt.timedelta(days=days)).isoformat() + value[10:]
    if is_day_number(value):
        return value + days
    return value


def days_between(value: Any, today: Any) -> int | None:
    """How many days `value` lies after `today` (both ISO dates, or both day numbers), else None."""
    day, now = as_date(value), as_date(today)
    if day is not None and now is not None:
        return (day - now).days
    if is_day_number(value) and is_day_number(today):
        return value - today
    return None
