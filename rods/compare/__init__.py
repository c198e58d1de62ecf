"""`rods compare`: several training configs (arms) side by side, same seeds, same budget, several random seeds.

The data flows arms -> runs -> summary: `arms` turns config files into one
resolved config per (arm, random seed) plus the fixed held-out split; `job`
runs one of them in its own process (training, held-out evaluation before and
after); `runner` schedules the jobs and resumes an interrupted comparison;
`summary` reads the run directories back into `comparison.json`, `table.md`
and figures.
"""

from rods.compare.arms import Arm, RunSpec, load_arms, plan_runs
from rods.compare.runner import CompareResult, run_comparison, summarize_finished
from rods.compare.summary import summarize_comparison

__all__ = ["Arm", "CompareResult", "RunSpec", "load_arms", "plan_runs", "run_comparison", "summarize_comparison",
           "summarize_finished"]
