"""Running a call of a BFCL class: MathAPI's process-global precision kept in, and its costly arguments capped."""

from __future__ import annotations

import decimal
import inspect
from collections.abc import Callable
from typing import Any

#: MathAPI arguments whose size sets the cost of a call: beyond these limits a
#: call would run for minutes or exhaust memory (`power(base=9, exponent=10**11)`),
#: so it fails instead. BFCL has no limit (it would hang); its data stays far below.
MATH_LIMITS = {("power", "exponent"): 10_000, ("logarithm", "precision"): 10_000, ("square_root", "precision"): 10_000}


def _check_math_limits(method: Any, args: tuple, kwargs: dict) -> None:
    name = method.__name__
    if not any(key[0] == name for key in MATH_LIMITS):
        return
    try:
        bound = inspect.signature(method).bind(*args, **kwargs).arguments
    except TypeError:
        return  # the call itself will fail with BFCL's message
    for (fn, param), limit in MATH_LIMITS.items():
        value = bound.get(param)
        if fn == name and isinstance(value, int) and not isinstance(value, bool) and abs(value) > limit:
            if fn == "power" and isinstance(bound.get("base"), float):
                continue  # float powers overflow quickly and cheaply
            raise ValueError(f"{param}={value} exceeds the limit of {limit} for {fn}")


def run_isolating_precision(method: Any, args: tuple, kwargs: dict, formatter: Callable[[Any], str] | None) -> Any:
    """Run a MathAPI method without leaking its process-global precision changes.

    The result is formatted inside the call's precision, as BFCL formats it
    (`repr` of an `mpmath.mpf` depends on the precision in force).
    """
    import mpmath

    _check_math_limits(method, args, kwargs)
    dps = mpmath.mp.dps
    try:
        with decimal.localcontext():
            result = method(*args, **kwargs)
            return formatter(result) if formatter is not None else result
    finally:
        mpmath.mp.dps = dps
