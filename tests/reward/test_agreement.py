"""Agreement with BFCL's own checker on a corpus of perturbed trajectories.

For every trajectory: our binary reward equals `multi_turn_checker`'s `valid`
(plus the eval runner's force-termination rule); per turn, our verdicts equal
BFCL's `state_checker` / `response_checker` / `is_empty_execute_response`
applied to that turn (BFCL itself stops at the first failing turn; the first
failure it reports is the first one we find, of the same kind).
"""

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rods.envs.bfcl.official import official_turn_checks, official_verdict
from rods.reward import score
from rods.reward.perturb import KINDS, perturbations, read_only_calls
from rods.tasks import API_CLASSES, CATEGORIES

PER_CATEGORY = 12

_ERROR_KIND = {
    "multi_turn:instance_state_mismatch": "state",
    "multi_turn:execution_response_mismatch": "exec",
    "multi_turn:empty_turn_model_response": "empty",
    "multi_turn:force_terminated": "truncated",
}


def _first_failure(task, ours):
    if len(ours.turns) < task.num_turns:
        return "truncated"
    for v in ours.turns:
        if not v.checked:
            continue
        if v.empty:
            return "empty"
        if not v.state_pass:
            return "state"
        if not v.exec_pass:
            return "exec"
    return None


@pytest.fixture(scope="module")
def corpus(bfcl_tasks):
    chosen = []
    for category in CATEGORIES:
        of_cat = [t for t in bfcl_tasks if t.category == category]
        chosen += of_cat[:: len(of_cat) // PER_CATEGORY][:PER_CATEGORY]
    for cls in API_CLASSES:  # every API class at least 3 times
        extra = [t for t in bfcl_tasks if cls in t.involved_classes and t not in chosen]
        chosen += extra[: max(0, 3 - sum(cls in t.involved_classes for t in chosen))]
    return [(task, kind, steps) for task in chosen for kind, steps in perturbations(task)]


@pytest.fixture()
def odd_global_precision():
    """BFCL's MathAPI leaves mpmath's global precision wherever a call set it: start from an odd one."""
    import mpmath

    before = mpmath.mp.dps
    mpmath.mp.dps = 7
    yield
    mpmath.mp.dps = before


def test_corpus_covers_every_kind_and_category(corpus):
    kinds = Counter(kind for _, kind, _ in corpus)
    assert set(kinds) == set(KINDS)
    assert {t.category for t, _, _ in corpus} == set(CATEGORIES)
    assert {c for t, _, _ in corpus for c in t.involved_classes} == set(API_CLASSES)
    assert len(corpus) >= 500


def test_verdicts_agree_with_bfcl(corpus, odd_global_precision):
    disagreements = []
    outcomes = Counter()
    for task, kind, steps in corpus:
        ours = score(task, steps)
        official = official_verdict(task, steps)
        outcomes[official["valid"]] += 1
        problems = []
        if ours.binary != int(official["valid"]):
            problems.append(f"binary {ours.binary} vs valid {official['valid']}")
        if not official["valid"] and _ERROR_KIND[official["error_type"]] != _first_failure(task, ours):
            problems.append(f"first failure {_first_failure(task, ours)} vs {official['error_type']}")
        if len(steps) == task.num_turns:
            for v, o in zip(ours.turns, official_turn_checks(task, steps), strict=True):
                expected_exec = (not o["empty"] and o["response"]) if o["checked"] else True
                if (v.state_pass, v.exec_pass, v.empty) != (o["state"], expected_exec, o["empty"]):
                    problems.append(f"turn {v.turn}: ours {v} vs bfcl {o}")
        if problems:
            disagreements.append((task.id, kind, problems))
    assert disagreements == []
    # the corpus is not trivially one-sided
    assert outcomes[True] > 100 and outcomes[False] > 100


@st.composite
def _random_trajectory(draw, tasks):
    """A trajectory drawn from the task's own ground-truth calls, read-only calls and junk."""
    task = draw(st.sampled_from(tasks))
    pool = [c for turn in task.ground_truth for c in turn]
    pool += [c for cls in task.involved_classes for c in read_only_calls(cls)]
    pool += ["nonexistent_function(x=1)", "ls(", "cd(folder=undefined_name)"]
    steps = []
    for gt_turn in task.ground_truth:
        if draw(st.booleans()):  # mostly follow the ground truth, with edits
            calls = list(gt_turn)
            for _ in range(draw(st.integers(0, 2))):
                edit = draw(st.sampled_from(["drop", "insert", "swap"]))
                if edit == "drop" and calls:
                    calls.pop(draw(st.integers(0, len(calls) - 1)))
                elif edit == "insert":
                    calls.insert(draw(st.integers(0, len(calls))), draw(st.sampled_from(pool)))
                elif edit == "swap" and len(calls) > 1:
                    i = draw(st.integers(0, len(calls) - 2))
                    calls[i], calls[i + 1] = calls[i + 1], calls[i]
        else:
            calls = draw(st.lists(st.sampled_from(pool), max_size=4))
        cuts = sorted(draw(st.lists(st.integers(0, len(calls)), max_size=2)))
        bounds = [0, *cuts, len(calls)]
        turn_steps = [calls[a:b] for a, b in zip(bounds, bounds[1:])]
        if draw(st.booleans()):
            turn_steps.append([])  # the model's closing text answer
        steps.append(turn_steps if calls or draw(st.booleans()) else [])
    return task, steps


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_random_trajectories_agree_with_bfcl(bfcl_tasks, data):
    tasks = [t for c in CATEGORIES for t in [x for x in bfcl_tasks if x.category == c][3::20]]
    task, steps = data.draw(_random_trajectory(tasks))
    ours = score(task, steps)
    assert ours.binary == int(official_verdict(task, steps)["valid"])
    for v, o in zip(ours.turns, official_turn_checks(task, steps), strict=True):
        expected_exec = (not o["empty"] and o["response"]) if o["checked"] else True
        assert (v.state_pass, v.exec_pass, v.empty) == (o["state"], expected_exec, o["empty"]), (task.id, steps, v, o)
