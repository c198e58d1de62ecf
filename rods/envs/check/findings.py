"""What a check says: findings (`PASS`, `WARN`, `FAIL`, the check's name, the reason) and their report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

Status = Literal["PASS", "WARN", "FAIL"]


@dataclass(frozen=True)
class Finding:
    """One result of one check: its status, the check's name and why."""

    status: Status
    check: str
    reason: str
    #: Lines shown under the finding (the tool list).
    details: tuple[str, ...] = ()

    def line(self) -> str:
        return f"{self.status:<4} {self.check:<16} {self.reason}"


def passed(check: str, reason: str, details: tuple[str, ...] = ()) -> Finding:
    return Finding("PASS", check, reason, details)


def warn(check: str, reason: str) -> Finding:
    return Finding("WARN", check, reason)


def fail(check: str, reason: str) -> Finding:
    return Finding("FAIL", check, reason)


@dataclass
class Report:
    """The findings of one check of an environment, and what ran."""

    environment: str
    findings: list[Finding]
    seeds: int = 0
    gold_calls: int = 0
    drawn_calls: int = 0

    @property
    def failed(self) -> bool:
        return any(f.status == "FAIL" for f in self.findings)

    def summary(self) -> str:
        counts = Counter(f.status for f in self.findings)
        ran = (f"{self.gold_calls} gold calls of {self.seeds} seeds and {self.drawn_calls} drawn calls"
               if self.seeds else f"{self.drawn_calls} drawn calls, no seeds")
        verdict = "FAILED" if self.failed else "passed"
        return (f"{self.environment}: {verdict}: {counts['PASS']} passed, {counts['WARN']} warnings, "
                f"{counts['FAIL']} failed ({ran})")
