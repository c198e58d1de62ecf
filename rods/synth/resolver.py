"""Resolve a plan against the live environment: one concrete call per position.

A planned position is either *fixed* (its arguments are given; bound ones are
filled from earlier results) or *to resolve*: its function is the planned
one or one of its graph-valid alternatives, its arguments come from the
:class:`~rods.synth.arguments.ArgumentProposer` in the state just before the
call. A resolved call is kept only if

* its data-flow sources (the latest earlier call that produced each of its
  argument values, exactly as :func:`rods.synth.profile.data_flow_edges`
  computes them) are the plan's, so Φ's edges come out equal, and each fed
  value keeps its role (`rods.synth.coherence.Coherence.flow_fits`: a flow the
  seeds showed, or the same role where it came from);
* it fits its tool's schema (`rods.envs.validation`: the gate checks it too),
  runs without an error, and changes the state iff the seed's call did;
* it is new to the task at a miss_func held-out position, and says a value
  the user must give at a miss_param position;
* it leaves in the state what an earlier call made for a later one (no move
  or deletion of the file a later call reads), and, as a read, finds
  something (`tells_nothing`: not nothing, not its own arguments back) unless the seed's read there found nothing too.

Each candidate runs on a fork of the environment, so a rejected one leaves no
trace. When no candidate fits a position the search steps back one position
and takes that position's next candidate (a depth-first search with a budget
of trial calls), so one dead end does not sink the whole plan; a function
whose draws keep failing at a position is given up after a few.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rods.envs.calls import ToolCall
from rods.envs.contract import RolloutEnvironment, environment_from
from rods.envs.domains import domain_of_task
from rods.envs.environment import public_state
from rods.envs.validation import static_failure
from rods.synth import state as state_view
from rods.synth.api_graph import function_docs, seeds_of
from rods.synth.arguments import ArgumentProposer, result_fields
from rods.synth.coherence import Coherence, Known, same_call
from rods.synth.findings import is_empty, is_failed, reads_what_it_made, tells_nothing
from rods.synth.free_text import FreeText
from rods.synth.plan import Plan, PlannedCall
from rods.synth.profile import (
    incoming_edges,
    produced_values,
    result_value,
    scalars,
    value_paths,
    walk,
)
from rods.synth.retelling import retelling
from rods.synth.value_kinds import is_distinctive

#: Argument draws per function; candidates of one function kept for backtracking; trial calls per run.
TRIALS_PER_FUNCTION = 8
KEPT_PER_FUNCTION = 3
TRIAL_BUDGET = 400
#: Runs in a row that failed, or took away what a later call needs, after which a function is given up at a
#: position (its next draws do alike).
FAILURES_IN_A_ROW = 3


@dataclass
class Step:
    """One executed position: the call, its result, the environment after it, what it produced.

    `state` is the walk of each class's public state after the call (what
    :func:`rods.synth.profile.trace_task` walks, class by class) and `seen` the
    scalars of each; a call changes only its own class, so only that one is walked again.
    """

    call: ToolCall
    result: str
    env: RolloutEnvironment
    state: dict[str, list]
    seen: dict[str, set]
    produced: set = field(default_factory=set)
    offers: list[list] = field(default_factory=list)
    changed: bool = False
    bindings: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    #: Created value -> where in the state it appeared (what it is, for the roles of flows).
    created_at: dict[Any, str] = field(default_factory=dict)


def class_state(env: RolloutEnvironment, cls: str) -> list:
    """The walk of one class's public state (paths and scalars); of its delta for a delta class (`rods.synth.state`)."""
    if state_view.is_delta(cls):
        return walk({cls: state_view.view(env, cls)})
    return walk({cls: public_state(env.instance(cls))})


@dataclass
class DeadEnd:
    """Why the search stopped: the deepest position it reached, and the call that failed there (if any)."""

    index: int
    function: str
    result: str
    kind: str  # execution | binding | plan
    call: ToolCall | None = None
    env: RolloutEnvironment | None = None
    steps: list[Step] = field(default_factory=list)  # the positions before it, as they ran


@dataclass
class Resolution:
    steps: list[Step]
    dead_end: DeadEnd | None = None
    fallbacks: list[tuple[int, str]] = field(default_factory=list)
    trials: int = 0  # calls run on forks, the failed ones included


def asked_again(call: ToolCall, steps: list[Step]) -> bool:
    """Whether an earlier step made the same call and no step since changed the state."""
    for step in reversed(steps):
        if same_call(step.call, call):
            return True
        if step.changed:
            return False
    return False


def retold_arguments(retold: dict[str, int], arguments: dict[str, Any], fed: dict[str, int],
                     steps: list[Step]) -> dict[str, Any] | None:
    """`arguments` with each text the seed's call retold an earlier result with retelling that result here too;
    None when a read to retell found nothing to tell (a post of "that text" after a search that matched
    nothing would pass on a made-up note). A write with nothing in its result is retold by its own arguments
    ("About archive")."""
    for param, source in retold.items():
        if source >= len(steps) or param not in arguments or param in fed:
            continue
        step = steps[source]
        told = retelling(step.result, step.call if step.changed else None)
        if told is None and not step.changed:
            return None
        if told is not None:
            arguments = {**arguments, param: told}
    return arguments


def offers_of(result: str, created: set, produced: set) -> list[list]:
    """A call's produced values as later calls should take them: result values and created ones, else result keys."""
    leaves = [v for _, v in value_paths(result_value(result)) if v in produced and v != "None"]
    made = sorted((v for v in created if v in produced and v not in leaves and v != "None"), key=repr)
    keys = sorted((v for v in produced if v not in leaves and v not in created), key=repr)
    return [list(dict.fromkeys(leaves)), made] if leaves or made else [keys]


def start(plan: Plan) -> Step:
    """The step before the first position: the plan's initial config loaded, nothing called."""
    env = environment_from(plan.initial_config, plan.seed.involved_classes, long_context=plan.seed.long_context)
    state = {cls: class_state(env, cls) for cls in env.involved_classes}
    seen = {cls: state_view.initial_values(env, cls, plan.initial_config.get(cls, {}))[0]
            if state_view.is_delta(cls) else scalars(walked) for cls, walked in state.items()}
    return Step(ToolCall("start", {}), "", env, state, seen)


def resolve(plan: Plan, budget: int = TRIAL_BUDGET) -> Resolution:
    """Run the plan position by position, stepping back from dead ends (see the module docstring)."""
    origin = start(plan)
    rng = random.Random(plan.rng_seed)
    free_text = None
    if domain_of_task(plan.seed).free_text_from_seeds:  # else free text stays the proposer's fresh words
        free_text = FreeText([plan.seed, *seeds_of(plan.seed.environment)], plan.remapper,
                             random.Random(f"{plan.rng_seed}:free_text"))
    proposer = ArgumentProposer(plan.remapper, rng, plan.seed.involved_classes, plan.initial_config, free_text)
    search = _Search(plan, proposer, budget)
    steps: list[Step] = []
    options: list[Iterator[Step] | None] = [None] * len(plan.calls)
    j = 0
    while j < len(plan.calls):
        if options[j] is None:
            options[j] = search.options(j, steps[-1] if steps else origin, steps)
        step = next(options[j], None)
        if step is not None:
            steps.append(step)
            j += 1
            continue
        options[j] = None
        if j == 0 or search.trials >= budget:
            return Resolution(steps, search.dead_end, trials=search.trials)
        steps.pop()
        j -= 1
    for planned, step in zip(plan.calls, steps):
        if planned.sources is None:
            continue
        planned.name, planned.arguments, planned.args = step.call.name, dict(step.call.arguments), ()
        planned.bindings = step.bindings
    return Resolution(steps, None, search.fallbacks(steps), search.trials)


class _Search:
    """Candidate generation per position, with the trial budget and the deepest dead end."""

    def __init__(self, plan: Plan, proposer: ArgumentProposer, budget: int):
        self.plan = plan
        self.proposer = proposer
        self.budget = budget
        self.trials = 0
        self.dead_end: DeadEnd | None = None
        self.names = [c.name for c in plan.calls]  # as planned, before any write-back
        self.owners = {name: doc["class"] for name, doc in function_docs(plan.seed.involved_classes).items()}
        self.rules = _rules(plan.seed.environment, tuple(plan.seed.involved_classes), plan.observed_flows)
        self.words = plan.remapper.vocabulary
        #: Whether the seed has no read whose answer it already knew (`Coherence.known_reads`): a variant may not.
        self.no_known_reads = self.rules.seed_groups(plan.seed).known_reads == 0

    def settings(self, planned: PlannedCall, name: str) -> dict[str, Any]:
        """What `name` is passed besides its required arguments' own values: the seed's settings for it
        (`Plan.settings`; not where the user must give a value: a setting is no value of theirs), and at the
        seed's own function the optional arguments the seed passed there, at another the optional arguments its
        human calls always pass some of (`Plan.usual_optional`: "Nothing to change" is no call a person makes)."""
        settings = {} if planned.user_value else self.plan.settings.get(name, {})
        own = planned.optional if name == planned.original else self.plan.usual_optional.get(name, {})
        return {**settings, **own}

    def repeated(self, planned: PlannedCall, name: str, steps: list[Step]) -> dict[str, Any]:
        """The values `name` takes again where the seed's call here repeated an earlier call's (`PlannedCall.echoes`):
        parameter -> the value the variant's earlier call was given there, for the parameters `name` has."""
        doc = function_docs(self.plan.seed.involved_classes).get(name, {})
        params = doc.get("parameters", {}).get("properties", {})
        out: dict[str, Any] = {}
        for param, (i, source) in planned.echoes.items():
            own = param if param in params else next((p for p in params if _bare(p) == _bare(param)), None)
            if own is not None and i < len(steps) and source in steps[i].call.arguments:
                out[own] = steps[i].call.arguments[source]  # `diff`'s file_name1 is `tail`'s file_name
        return out

    def feeds_later(self, j: int) -> bool:
        """Whether a later planned call takes a value from position j."""
        return any(j in (c.sources or ()) for c in self.plan.calls[j + 1:])

    def loses_a_source(self, j: int, step: Step, steps: list[Step]) -> bool:
        """Whether the write at j leaves nothing of what an earlier position made for a later one to take.

        The later call takes what that position made: a thing it created in the state (a file, a folder, a
        record), not the words of its result ("'a.txt' moved to 'b.txt'"). When none of those is there after j,
        every candidate at the later position fails on it. Only a class walked whole can tell (a delta class's
        seen values only grow).
        """
        takers = {s for c in self.plan.calls[j + 1:] for s in (c.sources or ()) if s < j}
        for s in takers:
            source = steps[s]
            made = {v for group in source.offers for v in group} & source.created_at.keys()
            owner = self.owners.get(source.call.name)
            if not made or owner is None or state_view.is_delta(owner):
                continue
            if made & steps[-1].seen.get(owner, set()) and not made & step.seen.get(owner, set()):  # there before j
                return True
        return False

    def fallbacks(self, steps: list[Step]) -> list[tuple[int, str]]:
        return [(j, self.names[j]) for j, step in enumerate(steps) if step.call.name != self.names[j]]

    def _fail(self, j: int, function: str, result: str, kind: str, call: ToolCall | None, env: RolloutEnvironment,
              steps: list[Step]):
        """Keep the deepest dead end; at one position an error (a Config Patch may fix it) beats "nothing fits"."""
        if self.dead_end is None or j > self.dead_end.index or (
                j == self.dead_end.index and self.dead_end.kind == "plan" and kind != "plan"):
            self.dead_end = DeadEnd(j, function, result, kind, call, env, list(steps))

    def _run(self, call: ToolCall, before: Step) -> Step:
        """Run a call on a copy of `before`'s environment (only the call's class is copied)."""
        self.trials += 1
        owner = self.owners.get(call.name)
        trial = before.env.fork(None if owner is None else [owner])
        result = trial.execute(call)
        if is_failed(result) or owner is None:
            return Step(call, result, trial, before.state, before.seen)
        walked = class_state(trial, owner)
        state = {**before.state, owner: walked}
        now = scalars(walked)
        created = now.difference(*before.seen.values())
        produced = produced_values(result, created)
        if state_view.is_delta(owner):  # the delta walked; the values seen so far accumulate
            changed = not state_view.same_state(before.env, trial, owner)
            now = before.seen.get(owner, frozenset()) | now
        else:
            changed = sorted(map(repr, walked)) != sorted(map(repr, before.state.get(owner, [])))
        created_at = {v: path for path, v in walked if v in created}
        return Step(call, result, trial, state, {**before.seen, owner: now}, produced,
                    offers_of(result, created, produced), changed, created_at=created_at)

    def options(self, j: int, before: Step, steps: list[Step]) -> Iterator[Step]:
        """Candidate steps for position j, best first; each has already run without an error on its own fork."""
        planned = self.plan.calls[j]
        env = before.env
        if planned.sources is None:
            yield from self._fixed(j, planned, before, steps)
            return
        names = self.names
        produced = [s.produced for s in steps]
        wanted = set(planned.sources)
        feeds = {i: steps[i].offers for i in wanted}
        fields = result_fields(steps[i].result for i in sorted(wanted))
        used = {s.call.name for s in steps}
        judged: dict[tuple, bool] = {}  # (source, function, parameter, value) -> whether it fits: asked per draw
        told: Known | None = None  # what the steps before j told (`known`), built at the first read tried
        for name in [names[j], *planned.alternatives]:
            if (planned.held_out and name in used) or name not in env.functions:
                continue
            kept = failed = 0
            later: list[Step] = []

            def fits(src: int, param: str, value: Any, name: str = name) -> bool:
                """A fed value keeps its role (`rods.synth.coherence`): no order id given as a price."""
                key = (src, name, param, repr(value))
                if key not in judged:
                    step = steps[src]
                    judged[key] = self.rules.flow_fits(step.call, step.result, step.created_at, name, param, value)
                return judged[key]

            self.proposer.remember(s.call for s in steps)
            proposals = self.proposer.propose(name, env, feeds, limit=TRIALS_PER_FUNCTION,
                                              reading=planned.changed is False, fits=fits, fields=fields,
                                              optional=self.settings(planned, name),
                                              scales=self.plan.scales.get(name, {}))
            if name == names[j] and planned.suggested:
                proposals = _suggested_first(proposals, planned.suggested)
            repeated = self.repeated(planned, name, steps)
            if repeated:  # the thing an earlier call named, where the seed named it again
                proposals = _suggested_first(proposals, repeated)
            for arguments, fed in proposals:
                if self.trials >= self.budget or kept >= KEPT_PER_FUNCTION or failed >= FAILURES_IN_A_ROW:
                    break
                passed_on = retold_arguments(planned.retold, arguments, fed, steps)
                if passed_on is None:  # the seed passed a result on here; this one has nothing to pass on
                    continue
                arguments = passed_on
                call = ToolCall(name, arguments)
                if incoming_edges(call, produced) != wanted:
                    continue
                if planned.user_value and not any(k not in fed and is_distinctive(v, self.words)
                                                  and not isinstance(v, (list, dict)) for k, v in arguments.items()):
                    continue
                if static_failure(call, self.owners) is not None:  # the gate would refuse it: no trial spent
                    continue
                step = self._run(call, before)
                if is_failed(step.result):
                    self._fail(j, name, step.result, "execution", call, env, steps)
                    self.proposer.refuse(call, step.result)
                    failed += 1
                    continue
                if planned.changed is not None and step.changed != planned.changed:
                    continue
                if step.changed and self.loses_a_source(j, step, steps):
                    failed += 1  # its next draws take the same value away
                    continue  # it moves away or deletes what a later call is planned to take
                failed = 0
                if not step.changed and (is_empty(step.result) or reads_what_it_made(
                        call, step.result, ((s.call, s.changed, s.created_at) for s in steps))
                        or (tells_nothing(call, step.result) and not planned.may_find_nothing)):
                    continue  # a read that finds nothing asks for nothing, unless the seed's did too
                if not step.changed and asked_again(call, steps):
                    continue  # the same read with nothing changed since: the coherence rule would turn it away
                step.bindings = _bindings(arguments, fed, [s.result for s in steps])
                if not step.changed:
                    told = told or known(steps)  # the steps before j stay the same while this position is tried
                    if told.answers(step.result, [*arguments.values()]):
                        if self.no_known_reads and not self.feeds_later(j):
                            continue  # the seed has no such read, nothing later uses it: the rule would turn it away
                        later.append(step)  # its answer is known already (the end of a file just shown): tried last
                        continue
                kept += 1
                yield step
            for step in later[: max(0, KEPT_PER_FUNCTION - kept)]:
                yield step
        self._fail(j, names[j], "no function and arguments fit the planned data flow here", "plan", None, env, steps)

    def _fixed(self, j: int, planned: PlannedCall, before: Step, steps: list[Step]) -> Iterator[Step]:
        env = before.env
        args, arguments = list(planned.args), dict(planned.arguments)
        for key, (src, path) in planned.bindings.items():
            try:
                value = _follow(result_value(steps[src].result), path)
            except (KeyError, IndexError):
                self._fail(j, planned.name, f"bound value missing at {path} of call {src}", "binding", None, env, steps)
                return
            if key in planned.rounded and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _rounded_like(value, planned.rounded[key], _argument(planned, key))
            name, _, element = key.partition("[")
            container, slot = (args, int(name[1:])) if name.startswith("#") else (arguments, name)
            if (isinstance(slot, int) and slot >= len(container)) or (isinstance(slot, str) and slot not in container):
                continue
            if element:
                items = list(container[slot])
                items[int(element.rstrip("]"))] = value
                container[slot] = items
            else:
                container[slot] = value
        call = ToolCall(planned.name, arguments, tuple(args))
        step = self._run(call, before)
        if is_failed(step.result) != planned.fails:  # a call meant to fail (a recast's of its seed's) must fail
            result = step.result if not planned.fails else "meant to fail, as its seed's call, but it succeeded"
            self._fail(j, planned.name, result, "execution" if not planned.fails else "succeeded", call, env, steps)
            return
        step.bindings = dict(planned.bindings)
        yield step


def _argument(planned: PlannedCall, key: str) -> Any:
    """The planned value at a binding's key ("param", "param[k]", "#i"): the seed's, before the binding fills it."""
    name, _, element = key.partition("[")
    value = planned.args[int(name[1:])] if name.startswith("#") else planned.arguments.get(name)
    return value[int(element.rstrip("]"))] if element and isinstance(value, list) else value


def _rounded_like(value: float, places: int, seed: Any) -> float | int:
    """`value` rounded to `places` decimals, of the seed's number type (40.0 stays a float, 40 an int)."""
    out = round(float(value), places)
    return int(out) if isinstance(seed, int) and not isinstance(seed, bool) else out


def known(steps: list[Step]) -> Known:
    """What the steps so far told (`rods.synth.coherence.Known`)."""
    out = Known()
    for step in steps:
        out.add(step.result, [*step.call.arguments.values(), *step.call.args])
    return out


@functools.lru_cache(maxsize=64)
def _rules(environment: str, classes: tuple[str, ...], observed: frozenset) -> Coherence:
    """The coherence rules of a plan's environment (one per environment, classes and seen flows, not per run)."""
    return Coherence(environment, classes, observed)


def _suggested_first(proposals: Iterator[tuple[dict, dict]], suggested: dict[str, Any]) -> Iterator[tuple[dict, dict]]:
    """The backend's suggested values over the first proposal, then the proposals as drawn."""
    for k, (arguments, fed) in enumerate(proposals):
        if k == 0:
            yield {**arguments, **suggested}, {p: src for p, src in fed.items() if p not in suggested}
        yield arguments, fed


def _bare(param: str) -> str:
    """A parameter's name without its digits: `file_name1` and `file_name` name one kind of thing."""
    return "".join(ch for ch in param if not ch.isdigit())


def _follow(value: Any, path: tuple) -> Any:
    for step in path:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            raise KeyError(path)
    return value


def _bindings(arguments: dict[str, Any], fed: dict[str, int], results: list[str]) -> dict[str, tuple[int, tuple]]:
    """Where each fed argument sits in its source's result (values the source only created stay unbound)."""
    out = {}
    for key, src in fed.items():
        value = arguments[key]
        target, key = (value[0], f"{key}[0]") if isinstance(value, list) else (value, key)
        paths = [p for p, v in value_paths(result_value(results[src])) if v == target and type(v) is type(target)]
        if paths:
            out[key] = (src, paths[0])
    return out
