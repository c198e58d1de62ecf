"""A vLLM server kept on the trainer's policy: when to sync, what each reply was sampled from, stale servers.

``grpo.generation: vllm_server`` generates every rollout reply on a vLLM server.
Without a sync the server keeps the weights it started with, so after the first
optimizer step every rollout would come from an old policy while GRPO treats it
as the current one. `PolicyServer` wraps the generator and, at the start of each
rollout call (TRL calls the rollout function once per optimizer step), gives the
server the current policy through a `WeightSync` when it is due:

* every ``grpo.sync_every`` optimizer steps, and earlier whenever the server's
  weights would otherwise trail the trainer's by more than
  ``grpo.max_policy_lag`` steps;
* the policy *version* is the trainer's ``global_step`` when it was pushed, and
  every reply carries the version that sampled it (read from the served adapter's
  name when the sync loads adapters), so the rollout can log the lag and
  regenerate groups found older than the bound.

`PolicySyncCallback` also pushes right after every optimizer step that makes a
sync due, so the server serves the policy the trainer just produced (and, after
the last step, the final one). A server that cannot be synced stops the run with `SyncError` (naming the server
and the flags it lacks) unless ``grpo.allow_stale_server`` is set; then every
step logs a warning with the lag instead. Under several training processes the
owner rank pushes and the outcome is broadcast, so every rank continues or stops
together.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from transformers import TrainerCallback

from rods.integrations.trl.ranks import RankGroup
from rods.integrations.trl.vllm_server import Reply, VLLMServerGenerator
from rods.integrations.trl.weight_sync import SyncError, WeightSync

log = logging.getLogger(__name__)


class PolicyServer:
    """`VLLMServerGenerator` plus the schedule that keeps its server on the trainer's policy.

    Args:
        generator: the HTTP generator of the server.
        sync: how the policy reaches the server; None: never (a stale server, allowed by the caller).
        sync_every: optimizer steps between scheduled syncs.
        lag_bound: the most steps a reply's weights may trail the trainer's.
        allow_stale: on a failed sync, warn every step and keep generating (else raise).
        ranks: the training processes (the owner pushes).
    """

    def __init__(
        self, generator: VLLMServerGenerator, sync: WeightSync | None, *, sync_every: int = 1, lag_bound: int = 0,
        allow_stale: bool = False, ranks: RankGroup | None = None,
    ) -> None:
        self.generator = generator
        self.sync = sync
        self.sync_every = sync_every
        self.lag_bound = lag_bound
        self.allow_stale = allow_stale
        self.ranks = ranks or RankGroup()
        #: The policy version the server serves; None: the weights it was started with (counted as version 0).
        self.version: int | None = None
        #: True once the server is known not to follow the policy (no sync, or a failed one under allow_stale).
        self.stale = sync is None
        self.step = 0
        self.sync_seconds: list[float] = []

    @property
    def syncs(self) -> int:
        return len(self.sync_seconds)

    @property
    def served_version(self) -> int:
        return 0 if self.version is None else self.version

    # -- the rollout's hooks --------------------------------------------------------------

    def prepare(self, trainer: Any, *, force: bool = False) -> None:
        """Before a rollout at the trainer's current step: push the policy if due (or `force`)."""
        self.step = trainer.state.global_step if trainer is not None else 0
        if self.stale:
            log.warning(
                "vLLM server %s is not synced (grpo.allow_stale_server): rollouts of step %d come from policy "
                "version %d, %d optimizer steps behind the trainer", self.generator.base_url, self.step,
                self.served_version, self.step - self.served_version,
            )
            return
        if force or self.due(self.step):
            self._push(trainer.model, self.step)

    def due(self, step: int) -> bool:
        """Whether the server must get the policy of `step`: never synced, on schedule, or past the lag bound."""
        if self.stale:
            return False
        if self.version is None:
            return True
        lag = step - self.version
        return lag >= self.sync_every or lag > self.lag_bound

    def after_step(self, model: Any, step: int) -> None:
        """After an optimizer step: push the new policy if a sync is due."""
        if self.due(step):
            self._push(model, step)

    def generate(self, contexts: list[list[int]], max_new_tokens: int, *, temperature: float, top_p: float,
                 stop_token_ids: list[int]) -> list[Reply]:
        replies = self.generator.generate(contexts, max_new_tokens, temperature=temperature, top_p=top_p,
                                          stop_token_ids=stop_token_ids)
        for reply in replies:
            told = self.sync.version_of(reply.model) if (self.sync is not None and reply.model) else None
            reply.version = self.served_version if told is None else told
        return replies

    # -- pushing ---------------------------------------------------------------------------

    def _push(self, model: Any, version: int) -> None:
        assert self.sync is not None
        start = time.perf_counter()
        error: str | None = None
        if self.ranks.is_owner:
            try:
                self.generator.served = self.sync.push(model, version)
            except SyncError as err:
                error = str(err)
        served, error = self.ranks.broadcast((self.generator.served, error))
        self.generator.served = served
        if error is not None:
            if not self.allow_stale:
                raise SyncError(
                    f"{error}. The server cannot be given the policy of step {version} (grpo.weight_sync "
                    f"{self.sync.kind}), so its rollouts would be off-policy; fix the server, or set "
                    "grpo.allow_stale_server: true to train on its stale weights anyway"
                )
            log.warning("weight sync to %s failed (%s); grpo.allow_stale_server: generating from its stale weights",
                        self.generator.base_url, error)
            self.stale = True
            return
        self.version = version
        self.sync_seconds.append(time.perf_counter() - start)
        log.log(logging.INFO if self.syncs == 1 else logging.DEBUG, "vLLM server %s serves policy version %d "
                "(%s sync, %.2fs)", self.generator.base_url, version, self.sync.kind, self.sync_seconds[-1])

    def close(self) -> None:
        self.generator.close()


class PolicySyncCallback(TrainerCallback):
    """Pushes the policy to the server after each optimizer step that makes a sync due."""

    def __init__(self, server: PolicyServer) -> None:
        self.server = server

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if model is not None:
            self.server.after_step(model, state.global_step)
        return control
