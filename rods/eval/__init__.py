"""Evaluation: scoring policies on BFCL V3 multi-turn tasks, re-checked by BFCL's own checker.

`evaluate` rolls a policy out on tasks and reports per-category accuracy and
progress reward (overall = unweighted mean of the categories, as BFCL);
`rods.eval.official` writes the decoded calls BFCL's `multi_turn_checker`
reads and re-scores them with it.
"""

from rods.eval.evaluate import CategoryScore, EvalReport, evaluate, stratified_subset, summarize
from rods.eval.official import Agreement, rescore_file, safe_decoded, safe_official_verdict, write_decoded

__all__ = [
    "Agreement",
    "CategoryScore",
    "EvalReport",
    "evaluate",
    "rescore_file",
    "safe_decoded",
    "safe_official_verdict",
    "stratified_subset",
    "summarize",
    "write_decoded",
]
