"""The progress reward RP and the binary reward (docs/design.md §2.3), per turn and per rollout.

Per turn t (model and ground truth executed cumulatively on separate envs):

* `r_state` = 1 iff every public attribute of every involved instance equals
  the ground truth's (BFCL `state_checker`);
* `r_exec` = 1 iff the ground-truth turn's results are a multiset subset of all
  the model's results so far (BFCL `response_checker`);
* a turn with non-empty ground truth and an empty model response (BFCL's
  `is_empty_execute_response`: no step, or one step without calls) fails:
  `exec_pass` is False (`state_pass` is still reported);
* a turn with empty ground truth has `r_exec` = 1 and `r_state` as computed.

RP = mean over the task's N turns of r_state * r_exec; binary = 1 iff every
turn with non-empty ground truth passes, which is BFCL's `valid`. Unlike BFCL's
checker, every turn is scored, not only those up to the first failure. A
trajectory with fewer turns than the task (BFCL: "force-terminated") gets
binary 0; its missing turns are reported as `None` and count 0 in RP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rods.envs.contract import RolloutEnvironment
from rods.reward.ground_truth import GroundTruth, call_keys, ground_truth_for, state_equal

if TYPE_CHECKING:
    from rods.tasks.model import Task

_MISSING = object()


@dataclass(frozen=True)
class TurnVerdict:
    """One turn's verdict."""

    turn: int
    state_pass: bool
    exec_pass: bool
    #: Whether BFCL checks this turn (non-empty ground truth).
    checked: bool
    #: Whether the model's response counted as empty (BFCL's rule).
    empty: bool

    @property
    def passed(self) -> bool:
        return self.state_pass and self.exec_pass

    @property
    def reward(self) -> float:
        """r_state * r_exec."""
        return 1.0 if self.passed else 0.0


@dataclass(frozen=True)
class RewardResult:
    """A rollout's reward: per-turn verdicts (None where a turn was not played), RP and binary."""

    state_pass: list[bool | None]
    exec_pass: list[bool | None]
    progress: float
    binary: int
    turns: tuple[TurnVerdict, ...] = ()

    def to_json(self, task_id: str) -> dict[str, Any]:
        """The line `rods reward` writes for this rollout."""
        return {
            "task_id": task_id,
            "state_pass": self.state_pass,
            "exec_pass": self.exec_pass,
            "progress": self.progress,
            "binary": self.binary,
        }


def is_empty_response(steps: Sequence[Sequence[Any]]) -> bool:
    """BFCL's `is_empty_execute_response`: no step at all, or a single step without calls."""
    return len(steps) == 0 or (len(steps) == 1 and len(steps[0]) == 0)


def state_matches(
    env: RolloutEnvironment,
    expected: dict[str, dict[str, Any]],
    untouched_verdicts: dict[str, bool] | None = None,
) -> bool:
    """Whether the env's public state equals a ground-truth snapshot (BFCL `_compare_instances`).

    `untouched_verdicts` (class -> bool) answers for classes the env never
    thawed from its template, if that template is the ground truth's.
    """
    if untouched_verdicts is None:
        return state_equal(env, expected)
    for cls, attrs in expected.items():
        if env.untouched(cls):
            if not untouched_verdicts[cls]:
                return False
            continue
        instance = env.instance(cls)
        for name, value in attrs.items():
            if getattr(instance, name, _MISSING) != value:
                return False
    return True


class ProgressScorer:
    """Scores one rollout turn by turn, on an env the rollout loop already drove.

    Usage: `env = scorer.new_env()` (or any environment of the task),
    execute the model's calls of turn t on it, then
    `scorer.end_turn(env, results_of_turn_t)`; after the last turn,
    `scorer.result()`. No call is executed again.
    """

    def __init__(self, task: Task, ground_truth: GroundTruth | None = None):
        self.task = task
        self.ground_truth = ground_truth if ground_truth is not None else ground_truth_for(task)
        self._results_so_far: Counter[str] = Counter()
        self._verdicts: list[TurnVerdict] = []

    @property
    def turn(self) -> int:
        """Index of the next turn to end."""
        return len(self._verdicts)

    def new_env(self) -> RolloutEnvironment:
        """A fresh environment for this rollout (forked from the cached template)."""
        return self.ground_truth.new_env()

    def end_turn(self, env: RolloutEnvironment, results: Sequence[str], *, empty: bool | None = None) -> TurnVerdict:
        """Close the current turn: `results` are the formatted results of this turn's calls.

        `empty` says whether the model's response was empty by BFCL's rule;
        by default, whether the turn made no call.
        """
        t = self.turn
        gt = self.ground_truth
        if t >= gt.num_turns:
            raise ValueError(f"task {self.task.id} has {gt.num_turns} turns; cannot end turn {t}")
        self._results_so_far.update(results)
        empty = (len(results) == 0) if empty is None else empty
        checked = gt.checked[t]
        state_pass = state_matches(env, gt.states[t], gt.untouched_verdicts(env, t))
        if not checked:
            exec_pass = True
        elif empty:
            exec_pass = False
        else:
            have = self._results_so_far
            exec_pass = all(have[r] >= n for r, n in gt.needed[t])
        verdict = TurnVerdict(t, state_pass, exec_pass, checked, empty)
        self._verdicts.append(verdict)
        return verdict

    def end_turn_as_ground_truth(self, *, empty: bool) -> TurnVerdict:
        """Close a turn whose calls were exactly the ground truth's, from a ground-truth state.

        The rollout is then in the ground truth's state after this turn: its
        results and state verdict are the cached ones; nothing is executed.
        """
        t = self.turn
        gt = self.ground_truth
        if t >= gt.num_turns:
            raise ValueError(f"task {self.task.id} has {gt.num_turns} turns; cannot end turn {t}")
        self._results_so_far.update(gt.results[t])
        checked = gt.checked[t]
        exec_pass = True if not checked else (not empty and all(self._results_so_far[r] >= n for r, n in gt.needed[t]))
        verdict = TurnVerdict(t, gt.self_match[t], exec_pass, checked, empty)
        self._verdicts.append(verdict)
        return verdict

    def result(self) -> RewardResult:
        """The reward so far; turns not ended count as unplayed (None, 0 in RP, binary 0)."""
        n = self.ground_truth.num_turns
        verdicts = self._verdicts
        missing = n - len(verdicts)
        progress = sum(v.reward for v in verdicts) / n
        binary = int(missing == 0 and all(v.passed for v in verdicts if v.checked))
        return RewardResult(
            state_pass=[v.state_pass for v in verdicts] + [None] * missing,
            exec_pass=[v.exec_pass for v in verdicts] + [None] * missing,
            progress=progress,
            binary=binary,
            turns=tuple(verdicts),
        )


def _same_calls(calls: list[str], gt: GroundTruth, t: int) -> bool:
    """Whether a turn's calls are the ground truth's: the same texts, or the same parsed calls."""
    if tuple(calls) == gt.calls[t]:
        return True  # identical text executes identically, parsable or not
    keys = gt.call_keys[t]
    return keys is not None and call_keys(calls) == keys


def check_steps(steps: Any, num_turns: int | None = None) -> None:
    """Validate a trajectory's shape (per turn, a list of steps, each a list of call strings).

    Raises ValueError naming the turn/step/call at fault.
    """
    if not isinstance(steps, list):
        raise ValueError(f"steps: expected a list of turns, got {type(steps).__name__}")
    if num_turns is not None and len(steps) > num_turns:
        raise ValueError(f"steps: {len(steps)} turns but the task has {num_turns}")
    for t, turn in enumerate(steps):
        if not isinstance(turn, list):
            raise ValueError(f"steps[{t}]: expected a list of steps, got {type(turn).__name__}")
        for s, step in enumerate(turn):
            if not isinstance(step, list):
                raise ValueError(f"steps[{t}][{s}]: expected a list of call strings, got {type(step).__name__}")
            if all(type(call) is str for call in step):
                continue
            for c, call in enumerate(step):
                if not isinstance(call, str):
                    raise ValueError(f"steps[{t}][{s}][{c}]: expected a call string, got {type(call).__name__}")


def score(
    task: Task,
    steps: Sequence[Sequence[Sequence[str]]],
    ground_truth: GroundTruth | None = None,
    *,
    validate: bool = True,
) -> RewardResult:
    """Execute a trajectory's calls on a fresh env and score it.

    `steps[t]` is turn t's list of steps, each a list of call strings (BFCL's
    decoded model result format). `validate=False` skips the shape check for
    callers that already ran `check_steps`.

    While the trajectory's turns repeat the ground truth's calls (same texts, or
    the same parsed calls), nothing is executed: the ground truth's cached
    results and state verdicts are exact for them, since execution from the same
    state is deterministic. At the first other turn the rollout continues on a
    thawed copy of the ground truth's state after the previous turn.
    """
    if validate:
        check_steps(steps, task.num_turns)
    scorer = ProgressScorer(task, ground_truth)
    gt = scorer.ground_truth
    formatter = gt.result_formatter()
    env: RolloutEnvironment | None = None  # None while the rollout is still on the ground truth's path
    for t, turn_steps in enumerate(steps):
        calls = [call for step in turn_steps for call in step]
        empty = is_empty_response(turn_steps)
        # Fast path: same calls as the ground truth from the ground truth's state ->
        # same results and state; reuse them (exact: execution is deterministic).
        if env is None and _same_calls(calls, gt, t):
            scorer.end_turn_as_ground_truth(empty=empty)
            continue
        if env is None:
            env = gt.env_after(t - 1)
        scorer.end_turn(env, env.execute_all(calls, formatter), empty=empty)
    return scorer.result()
