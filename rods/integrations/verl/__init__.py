"""rods on verl and Ray (`pip install rods[verl]`): the engine as a service, a registered agent loop,
a live-pool dataset and Ray synthesis workers.

Modules (each imports verl or Ray only when used):

- `settings`: the `rods:` section of a verl config (typed, paper defaults);
- `engine_actor`: `DataEngine` behind a named Ray actor; `RemoteEngine` client;
- `agent_loop`: `RodsAgentLoop`, registered with verl as ``rods_multiturn``;
- `dataset`: `RodsTaskDataset`, verl's `data.custom_cls`, rows = the active pool;
- `synthesis`: `RaySynthesisWorker`, N actors calling an OpenAI-compatible endpoint.

Configs live in `configs/verl/`; `scripts/launch_verl.sh` starts a run.
"""

from rods.integrations.verl.settings import AGENT_NAME, POOL_SOURCE, RodsVerlSettings, VerlSynthesisSettings

__all__ = ["AGENT_NAME", "POOL_SOURCE", "RodsVerlSettings", "VerlSynthesisSettings"]
