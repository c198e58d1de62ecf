"""Dates a state holds (rods.synth.dates): a variant's dates move together by whole weeks."""

from __future__ import annotations

import datetime as dt
import random

from rods.synth.dates import shift_date
from rods.synth.values import ValueRemapper


def test_dates_move_by_whole_weeks():
    assert shift_date("2026-03-09", 14) == "2026-03-23" and shift_date("2026-03-09T10:30", -7) == "2026-03-02T10:30"
    assert shift_date(12, 21) == 33
    day = dt.date(2026, 3, 9)
    for seed in range(20):
        remapper = ValueRemapper(random.Random(seed), frozenset())
        assert remapper.shift % 7 == 0 and remapper.shift != 0
        moved = dt.date.fromisoformat(remapper.date(day.isoformat()))
        assert moved.weekday() == day.weekday()
