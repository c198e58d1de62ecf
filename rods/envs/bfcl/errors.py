"""BFCL's error results beyond every domain's convention (`rods.envs.domain.standard_error`).

Most BFCL functions fail with `{"error": ...}`; a few answer a failure in
another shape, which `rods envs check`'s error-convention check found:

* a list of failures: `[{'error': ...}]` (TradingBot's order and transaction
  histories, TicketAPI's ticket list) or `['Error: ...']` (TradingBot's
  watchlist) when nobody is logged in;
* a refused login: `{"login_status": false, "message": ...}` (MessageAPI's
  `message_login`; its status query answers `{"login_status": false}`, no message).

None of BFCL's gold calls returns one of these. A failed traveler verification
(`{"verification_status": false, ...}`) is an answer, not an error: twelve gold
calls expect it.
"""

from __future__ import annotations

import ast
import json
from typing import Any

#: Longest list result read back as a literal (a failure list is one short item).
MAX_LIST_TEXT = 2_000


def _failure(item: Any) -> str | None:
    if isinstance(item, dict) and item.get("error"):
        return str(item["error"])
    if isinstance(item, str) and item.startswith("Error"):
        return item
    return None


def bfcl_error(result: str) -> str | None:
    """Why a BFCL result in one of the shapes above is a failure, or None."""
    text = result.strip()
    if text.startswith("[") and len(text) <= MAX_LIST_TEXT:
        try:  # BFCL formats a list with str(): read it back as a literal (no code runs)
            items = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        failures = [_failure(i) for i in items] if isinstance(items, list) else []
        if failures and all(failures):
            return failures[0]
        return None
    if text.startswith("{") and '"login_status": false' in text:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if isinstance(value, dict) and value.get("login_status") is False and value.get("message"):
            return str(value["message"])
    return None
