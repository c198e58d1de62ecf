"""`rods envs check`: Gymnasium's `check_env` for tool environments (docs/design.md §2.11).

`environment` runs every check (`check_environment`) and says which there are;
`runs` runs an environment from seeds' configs, their gold calls and calls
drawn from the schemas; `calls` checks the tool surface and those calls,
`states` loads again to check resets, replays, forks, JSON state and
constructors; `probes` draws calls and reads results and states (error words,
differences, what JSON cannot hold); `findings` is what they all report.
"""

from rods.envs.check.environment import check_environment
from rods.envs.check.findings import Finding, Report

__all__ = ["Finding", "Report", "check_environment"]
