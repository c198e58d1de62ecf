"""Training runs: typed config, YAML experiments, run directories, and `train(config)`.

The trainer adapter itself lives in `rods.integrations.trl`; this package is
what the `rods train` command and `make demo` drive.
"""

from rods.train.config import TrainConfig
from rods.train.load import ConfigError, config_from_dict, dump_config, load_config

__all__ = ["ConfigError", "TrainConfig", "config_from_dict", "dump_config", "load_config"]
