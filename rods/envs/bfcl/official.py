"""BFCL's own multi-turn checker, run the way BFCL runs it: for `rods eval`'s re-scoring, agreement checks
and benchmarks (the BFCL domain's `official_verdict`).

Not used for training: it `eval`s call text and keeps instances in module
globals keyed by model name + task id, so each call here gets a unique model
name and its globals are dropped afterwards.

`safe_official_verdict` mirrors BFCL's `_evaluate_single_multi_turn_entry` (a
turn count that differs from the ground truth's is a force-terminated entry
and fails). The call strings `rods eval` records come from `format_call` on
calls parsed with `ast` (plain names, literal arguments), and before checking,
a call to a name that is not a public method of the task's classes is replaced
by a call to an undefined name (`safe_decoded`), so it fails as an unknown
function does in our environment instead of reaching a Python builtin (e.g.
`open(...)`).
"""

from __future__ import annotations

import decimal
import itertools
import re
import threading
from collections.abc import Sequence
from typing import Any

from rods.envs.calls import CallParseError, parse_calls
from rods.envs.classes import method_owners
from rods.tasks.model import Task

_counter = itertools.count()


def _modules():
    from rods.tasks.bfcl import bfcl_package_dir

    bfcl_package_dir()  # a clear error when bfcl-eval is missing
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as checker, multi_turn_utils as utils

    return checker, utils


def fresh_model_name(prefix: str = "rods_ref") -> str:
    """A model name no earlier call used (BFCL caches instances under it)."""
    return f"{prefix}_{next(_counter)}"


def forget(model_name: str) -> None:
    """Drop the instances BFCL cached in its module globals for this model name."""
    _, utils = _modules()
    prefix = re.sub(r"[-./:]", "_", model_name) + "_"  # "m_5_" must not match "m_50_..."
    for key in [k for k in utils.__dict__ if k.startswith(prefix) and k.endswith("_instance")]:
        del utils.__dict__[key]


def official_verdict(task: Task, steps: list, model_name: str | None = None) -> dict[str, Any]:
    """BFCL's verdict (`{"valid": bool, ...}`) for a trajectory, as its eval runner computes it.

    Includes the runner's force-termination rule (turn counts differ -> invalid).
    """
    checker, _ = _modules()
    if len(steps) != len(task.ground_truth):
        return {"valid": False, "error_type": "multi_turn:force_terminated"}
    name = model_name or fresh_model_name()
    try:
        return checker.multi_turn_checker(steps, task.ground_truth, task.to_bfcl_entry(), task.category, name)
    finally:
        if model_name is None:
            forget(name)
            forget(name + "_ground_truth")


def official_turn_checks(task: Task, steps: list) -> list[dict[str, Any]]:
    """BFCL's sub-checkers applied to every turn (the official checker stops at the first failure).

    Per turn: `checked` (non-empty ground truth), `empty` (BFCL's empty-response
    rule), `state` (`state_checker` valid), `response` (`response_checker` valid,
    None where the turn is not checked).
    """
    checker, utils = _modules()
    name = fresh_model_name("rods_turns")
    entry = task.to_bfcl_entry()
    kw = dict(
        initial_config=entry["initial_config"],
        involved_classes=entry["involved_classes"],
        test_entry_id=task.id,
        long_context=task.long_context,
        is_evaL_run=True,
    )
    all_results: list[str] = []
    out = []
    try:
        for t, gt_turn in enumerate(task.ground_truth):
            turn_steps = steps[t]
            model_instances: dict = {}
            for step in turn_steps:
                results, model_instances = utils.execute_multi_turn_func_call(
                    func_call_list=step, model_name=name, **kw
                )
                all_results.extend(results)
            if not model_instances:  # no step this turn: fetch the (cached) instances
                _, model_instances = utils.execute_multi_turn_func_call(func_call_list=[], model_name=name, **kw)
            gt_results, gt_instances = utils.execute_multi_turn_func_call(
                func_call_list=gt_turn, model_name=name + "_ground_truth", **kw
            )
            checked = len(gt_turn) > 0
            empty = utils.is_empty_execute_response(turn_steps)
            state = checker.state_checker(model_instances, gt_instances)["valid"]
            response = checker.response_checker(all_results, gt_results, t)["valid"] if checked else None
            out.append({"checked": checked, "empty": empty, "state": state, "response": response})
    finally:
        forget(name + "_eval")
        forget(name + "_ground_truth_eval")
    return out


# -- safely, for decoded rollouts -------------------------------------------------------

#: What an unknown function call becomes before BFCL's `eval` sees it.
UNKNOWN_FUNCTION = "rods_unknown_function"
#: mpmath's default decimal precision (what a fresh process starts with).
DEFAULT_DPS = 15
_lock = threading.Lock()


def safe_decoded(task: Task, decoded: Sequence[Sequence[Sequence[str]]]) -> list[list[list[str]]]:
    """The decoded calls with every call that is not a public method of the task's classes neutralised."""
    known = set(method_owners(task.involved_classes))
    out = []
    for turn in decoded:
        steps = []
        for step in turn:
            calls = []
            for text in step:
                try:
                    parsed = parse_calls(text)
                except CallParseError:
                    parsed = []
                ok = len(parsed) == 1 and parsed[0].name in known
                calls.append(text if ok else f"{UNKNOWN_FUNCTION}()")
            steps.append(calls)
        out.append(steps)
    return out


def safe_official_verdict(task: Task, decoded: Sequence[Sequence[Sequence[str]]]) -> dict:
    """BFCL's verdict on one rollout's decoded calls: ``{"valid": bool, ...}``.

    Runs `official_verdict` (BFCL's checker plus its
    runner's force-termination rule) on the neutralised calls, from mpmath's
    default precision: MathAPI sets the process-global precision and BFCL
    never restores it, which would change how later results print.
    """
    import mpmath


    safe = safe_decoded(task, decoded)
    with _lock:  # BFCL's instance cache and mpmath's precision are process-wide
        dps, mpmath.mp.dps = mpmath.mp.dps, DEFAULT_DPS
        try:
            with decimal.localcontext():
                result = official_verdict(task, safe)
        finally:
            mpmath.mp.dps = dps
    return {k: v for k, v in result.items() if k in ("valid", "error_type", "error_message")}
