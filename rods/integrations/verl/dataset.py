"""A verl `data.custom_cls` dataset whose rows are rods tasks, live from the engine's pool.

verl builds its train and validation datasets with the class named in
`data.custom_cls`, passing `data.train_files` / `data.val_files`:

- ``rods://pool``: the rows are the engine actor's active pool. The epoch
  boundary comes from an explicit signal: verl's trainer calls
  ``on_batch_end(batch)`` after every training step, and once the epoch's rows
  have all been served (its step count is reached) the dataset asks the engine to
  run its epoch boundary (retire, inject queued variants) and re-reads the pool,
  so the sampler of the next epoch, which reads ``len(dataset)`` (no side
  effect), samples the new pool;
- ``bfcl:train|test|all`` or a tasks JSONL path: a fixed set (validation).

Rows are counted as the dataloader fetches them (hence
`data.dataloader_num_workers: 0`): every `data.train_batch_size` rows start a
training step, which tells the engine actor that the previous step is over (its
seeds go to synthesis; `EngineService.begin_step`). Set
`trainer.total_training_steps` (the pool size changes between epochs). verl's
checkpoints save the dataloader's state, and with it this dataset's
(`state_dict`): a resumed run continues the epoch where it stopped, with the same
rows and the served-row count, so its boundary falls on the same step. Trainers
that never call ``on_batch_end`` (verl's fully-async and one-step-off recipes)
cannot drive a live pool: the first row fetched past an unclosed epoch raises.
Each row carries its task as JSON in
``extra_info['task']`` (verl's per-step ``uid`` is random, so the task id
travels there too) and names the rods agent loop in ``agent_name``.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch.utils.data import Dataset

from rods.integrations.verl.settings import AGENT_NAME, POOL_SOURCE, RodsVerlSettings, check_against_verl
from rods.tasks import Task

logger = logging.getLogger(__name__)


def task_row(task: Task, index: int, *, report: bool) -> dict[str, Any]:
    """One verl row for `task` (what `RLHFDataset.__getitem__` would return)."""
    first = next((m.content for turn in task.question for m in turn if m.role == "user"), "")
    return {
        "raw_prompt": [{"role": "user", "content": first}],
        "data_source": f"rods/{task.category}",
        "agent_name": AGENT_NAME,
        "reward_model": {"style": "rods", "ground_truth": ""},
        "extra_info": {"index": index, "task_id": task.id, "task": task.model_dump_json(), "report": report},
    }


def _sources(data_files: Any) -> list[str]:
    if isinstance(data_files, str):
        return [data_files]
    return [str(f) for f in data_files]


class RodsTaskDataset(Dataset):
    """Rows from the engine's live pool (``rods://pool``) or from fixed task files (see module docstring).

    Args follow verl's `RLHFDataset`: `data_files`, `tokenizer`, `config` (the
    `data:` section), `processor`, `max_samples`. verl hands a dataset only the
    `data:` section, so the rods settings travel in ``data.rods`` (the configs set
    ``rods: ${rods}`` there); `settings` and `engine` override them (tests,
    `from_config`).
    """

    def __init__(
        self,
        data_files: Any,
        tokenizer: Any = None,
        config: Any = None,
        processor: Any = None,
        max_samples: int = -1,
        *,
        settings: RodsVerlSettings | None = None,
        engine: Any = None,
    ) -> None:
        sources = _sources(data_files)
        self.live = sources == [POOL_SOURCE]
        if POOL_SOURCE in sources and not self.live:
            raise ValueError(f"{POOL_SOURCE} cannot be combined with other data files: {sources}")
        # rows per training step, and per dataloader fetch (verl's V1 async modes fetch one row at a time)
        self.step_size = int(config.get("train_batch_size") or 1) if config else 1
        self.batch_size = int(config.get("gen_batch_size") or self.step_size) if config else 1
        self.max_samples = max_samples
        self.settings = settings
        self.engine = engine
        self.epoch = 0
        self.step = 0
        self._served = 0
        self._epoch_rows = 0
        self.last_report: dict[str, Any] | None = None
        if self.live:
            if self.engine is None:
                from rods.integrations.verl.engine_actor import RemoteEngine

                self.settings = self.settings or _settings_from_data_config(config)
                _check_root(self.settings, config)
                self.engine = RemoteEngine.connect(self.settings)
            self.step = int(self.engine.current_step())
            self._set_rows(self.engine.active_tasks())
        else:
            from rods.tasks import read_task_source

            tasks = [t for source in sources for t in read_task_source(source)]
            self._set_rows(tasks)

    def _set_rows(self, tasks: list[Task]) -> None:
        if self.max_samples is not None and self.max_samples > 0:
            tasks = tasks[: self.max_samples]
        self.rows = [task_row(t, i, report=self.live) for i, t in enumerate(tasks)]
        self.task_ids = [t.id for t in tasks]
        self._served = 0
        self._epoch_rows = (len(self.rows) // self.batch_size) * self.batch_size  # drop_last=True
        if self.live and self._epoch_rows == 0:
            raise ValueError(
                f"the active pool has {len(self.rows)} tasks, fewer than one batch of {self.batch_size}"
            )

    def _end_epoch(self) -> None:
        """The epoch was served in full: run the engine's epoch boundary and re-read the pool."""
        result = self.engine.end_epoch(self.step)
        self.last_report = result["report"]
        self.epoch += 1
        self._set_rows(result["tasks"])
        logger.info(
            "epoch %d begins at step %d: %d tasks (%d injected, %d retired)",
            self.epoch, self.step, len(self.rows), len(self.last_report["injected"]), len(self.last_report["retired"]),
        )

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, item: int) -> dict[str, Any]:
        if self.live:
            if self._served >= self._epoch_rows:
                raise RuntimeError(
                    f"epoch {self.epoch} of the rods pool was served in full ({self._epoch_rows} rows) but its "
                    "boundary never ran: the trainer must call dataset.on_batch_end(batch) after every step (verl's "
                    "RayPPOTrainer does)"
                )
            if self._served % self.step_size == 0:
                self.step += 1
                self.engine.begin_step(self.step)
            self._served += 1
        row = dict(self.rows[item])
        row["extra_info"] = dict(row["extra_info"])
        row["raw_prompt"] = list(row["raw_prompt"])
        row["dummy_tensor"] = torch.tensor([0], dtype=torch.uint8)
        row["index"] = row["extra_info"]["index"]
        row["tools_kwargs"] = {}
        row["interaction_kwargs"] = {}
        return row

    def on_batch_end(self, batch: Any = None) -> None:
        """verl's trainer calls this after every training step: the epoch's last step runs the boundary."""
        if self.live and self._served >= self._epoch_rows:
            self._end_epoch()

    # -- resume: verl saves the dataloader's state, which includes this (torchdata's Stateful protocol)

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "step": self.step, "served": self._served, "task_ids": list(self.task_ids)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the saved epoch: its rows (same order, so the sampler's indices still mean them) and count."""
        if not self.live:
            return
        ids = list(state["task_ids"])
        self._set_rows(self.engine.tasks(ids))
        self.epoch, self.step, self._served = int(state["epoch"]), int(state["step"]), int(state["served"])
        logger.info("resumed epoch %d at step %d: %d of %d rows served", self.epoch, self.step, self._served,
                    self._epoch_rows)

    @classmethod
    def from_config(cls, config: Any, split: str = "train", **kwargs: Any) -> RodsTaskDataset:
        """Build from a whole verl trainer config (checks rods against verl settings first)."""
        settings = RodsVerlSettings.from_trainer_config(config)
        check_against_verl(settings, config)
        files = config.data.train_files if split == "train" else config.data.val_files
        return cls(files, None, config.data, settings=settings, **kwargs)


def _settings_from_data_config(data_config: Any) -> RodsVerlSettings:
    """verl hands the dataset only the `data:` section; the rods section travels in `data.rods`."""
    if data_config is not None and data_config.get("rods") is not None:
        return RodsVerlSettings.from_trainer_config(data_config)
    raise ValueError(
        "the rods pool dataset needs the rods settings: set `data.rods: ${rods}` in the verl config "
        "(configs/verl/base/rods_paper.yaml does)"
    )


def _check_root(settings: RodsVerlSettings, data_config: Any) -> None:
    """Cross-check rods against verl's settings when the `data` node still knows its root config."""
    try:
        from omegaconf import OmegaConf

        root = data_config._get_root() if OmegaConf.is_config(data_config) else None
    except Exception:  # not an omegaconf node: nothing to check against
        return
    if root is not None and "actor_rollout_ref" in root:
        check_against_verl(settings, root)
