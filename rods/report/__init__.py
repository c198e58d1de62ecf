"""Run reports: the paper's pool-dynamics figures drawn from an engine's logs (matplotlib, PNG)."""

from rods.report.pool_dynamics import RunLogs, find_engine_dir, load_run, make_report

__all__ = ["RunLogs", "find_engine_dir", "load_run", "make_report"]
