"""The tau2 domain: tau2-bench's airline and retail domains as environments (docs/design.md §2.7).

`environment` holds the two environment classes (tasks name them
`rods.envs.tau2:Tau2AirlineEnv` and `rods.envs.tau2:Tau2RetailEnv`), `tasks`
turns tau2's tasks into seeds, `domain` holds the domain's hooks.
"""

from rods.envs.tau2.environment import ENVIRONMENTS, INSTALL, Tau2AirlineEnv, Tau2Env, Tau2RetailEnv, arithmetic

__all__ = ["ENVIRONMENTS", "INSTALL", "Tau2AirlineEnv", "Tau2Env", "Tau2RetailEnv", "arithmetic"]
