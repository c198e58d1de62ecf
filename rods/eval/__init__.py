"""Evaluation: scoring policies on multi-turn tool tasks, re-checked by a domain's own checker where it has one.

`evaluate` rolls a policy out on tasks and reports per-group accuracy and
progress reward (overall = unweighted mean of the groups, as BFCL's categories);
`rods.eval.official` writes the decoded calls BFCL's `multi_turn_checker`
reads and re-scores them with the domain's checker (`Domain.official_verdict`).
"""

from rods.eval.evaluate import CategoryScore, EvalReport, evaluate, stratified_subset, summarize
from rods.eval.official import Agreement, rescore_file, write_decoded

#: What `rods eval --suite` evaluates: BFCL V3 multi-turn (the default), BFCL V4's offline
#: single-turn categories (`rods.eval.bfcl_v4`), tau2-bench's conversation protocol (`rods.eval.tau2_conversation`).
SUITE_NAMES = ("multi_turn", "bfcl_v4", "tau2")

__all__ = [
    "SUITE_NAMES",
    "Agreement",
    "CategoryScore",
    "EvalReport",
    "evaluate",
    "rescore_file",
    "stratified_subset",
    "summarize",
    "write_decoded",
]
