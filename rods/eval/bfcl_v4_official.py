"""bfcl-eval's own code for BFCL V4's single-turn categories: data, prompts, decoders, checkers and summaries.

`rods.eval.bfcl_v4` runs a policy on these categories; everything that says what
an entry is, how BFCL prompts it and how a decoded answer is scored comes from
the installed bfcl-eval, through this module:

* the entries and possible answers (`bfcl_eval.utils.load_dataset_entry`, with
  the language hints the model sees and without them for the checker, as
  BFCL's runner loads them; `load_ground_truth_entry`);
* the prompt: BFCL's system prompt for prompting models
  (`system_prompt_pre_processing_chat_model`, which also writes the 26 prompt
  variants of format sensitivity) and BFCL's OpenAI tool schemas for
  function-calling models (`convert_to_tool`, which renames `a.b` to `a_b`);
* the XML decoders of format sensitivity (`default_decode_ast_prompting`);
* the verdicts: `ast_checker` with BFCL's runner's choice of language and
  category, and the runner's relevance rule (`is_empty_output`);
* the summary formulas (`calculate_unweighted_accuracy`,
  `calculate_weighted_accuracy`).

bfcl-eval is installed with ``--no-deps`` (`rods.tasks.bfcl.BFCL_EVAL`), and
three of its modules import at module level packages that the functions used
here never touch: `ast_checker` and `eval_runner_helper` import the model
registry (which imports every provider's SDK) only to read a model's
``underscore_to_dot``, and `model_handler.utils` imports tenacity (a retry
decorator) and the tree-sitter Java/JavaScript decoders. When such an import is
missing, the module is imported with a stand-in for exactly that import (a
registry holding the two model names below; decoders and a decorator that raise
if called) and the stand-ins are removed again; a full install uses the real
modules.
"""

from __future__ import annotations

import copy
import importlib
import sys
import types
from functools import cache
from typing import Any

#: The checker's model for function-calling policies: BFCL renames `a.b` to `a_b` for it (underscore_to_dot).
FC_MODEL = "gpt-4o-2024-11-20-FC"
#: The checker's model for prompting policies: names as BFCL's prompt shows them.
PROMPT_MODEL = "gpt-4o-2024-11-20"

_REGISTRY = "bfcl_eval.constants.model_config"
_JAVA = "bfcl_eval.model_handler.parser.java_parser"
_JS = "bfcl_eval.model_handler.parser.js_parser"


def _unavailable(what: str):
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"{what} is not installed (bfcl-eval was installed with --no-deps)")

    return refuse


def _stand_ins() -> dict[str, dict[str, Any]]:
    registry = {
        FC_MODEL: types.SimpleNamespace(underscore_to_dot=True, is_fc_model=True),
        PROMPT_MODEL: types.SimpleNamespace(underscore_to_dot=False, is_fc_model=False),
    }
    retry = {n: _unavailable("tenacity") for n in
             ("retry", "retry_if_exception_message", "retry_if_exception_type", "wait_random_exponential")}
    return {
        _REGISTRY: {"MODEL_CONFIG_MAPPING": registry},
        "tenacity": retry,
        _JAVA: {"parse_java_function_call": _unavailable("tree-sitter-java")},
        _JS: {"parse_javascript_function_call": _unavailable("tree-sitter-javascript")},
    }


def _import(name: str) -> types.ModuleType:
    """Import a bfcl-eval module; where a module-level import of it is missing, with the stand-ins."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    added = []
    for module, attributes in _stand_ins().items():
        if module in sys.modules:
            continue
        try:
            importlib.import_module(module)
            continue
        except ImportError:
            stand_in = types.ModuleType(module, "rods' stand-in for a missing optional dependency of bfcl-eval")
            stand_in.__dict__.update(attributes)
            sys.modules[module] = stand_in
            added.append(module)
    try:
        return importlib.import_module(name)
    finally:
        for module in added:
            sys.modules.pop(module, None)


@cache
def bfcl() -> types.SimpleNamespace:
    """bfcl-eval's modules used here (imported once)."""
    from rods.tasks.bfcl import bfcl_package_dir

    bfcl_package_dir()  # a clear error when bfcl-eval is missing
    return types.SimpleNamespace(
        categories=_import("bfcl_eval.constants.category_mapping"),
        enums=_import("bfcl_eval.constants.enums"),
        types=_import("bfcl_eval.constants.type_mappings"),
        utils=_import("bfcl_eval.utils"),
        handler=_import("bfcl_eval.model_handler.utils"),
        checker=_import("bfcl_eval.eval_checker.ast_eval.ast_checker"),
        summary=_import("bfcl_eval.eval_checker.eval_runner_helper"),
    )


# -- entries -------------------------------------------------------------------------


def load_entries(category: str) -> tuple[list[dict], list[dict], list[dict] | None]:
    """(entries as the model sees them, the same entries as the checker reads them, possible answers or None).

    The model's copy carries BFCL's language hints (Java/JavaScript types
    written as strings); the checker's has the original types, as BFCL's
    runner loads it. Relevance categories have no possible answers.
    """
    utils = bfcl().utils
    shown = utils.load_dataset_entry(category, include_prereq=False, include_language_specific_hint=True)
    checked = utils.load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False)
    answers = None if utils.is_relevance_or_irrelevance(category) else utils.load_ground_truth_entry(category)
    if [e["id"] for e in shown] != [e["id"] for e in checked] or (answers is not None and len(answers) != len(shown)):
        raise RuntimeError(f"bfcl-eval's {category} entries and possible answers are not aligned")
    return shown, checked, answers


# -- prompts -------------------------------------------------------------------------


def prompting_messages(messages: list[dict], functions: list[dict], entry_id: str) -> list[dict]:
    """The first turn with BFCL's system prompt for prompting models (the entry id picks the prompt variant)."""
    return bfcl().handler.system_prompt_pre_processing_chat_model(copy.deepcopy(messages), functions, entry_id)


def openai_tools(functions: list[dict]) -> list[dict]:
    """The functions as BFCL's OpenAI-style function-calling handlers send them (`a.b` named `a_b`)."""
    b = bfcl()
    return b.handler.convert_to_tool(functions, b.types.GORILLA_TO_OPENAPI, b.enums.ModelStyle.OPENAI_COMPLETIONS)


def prompt_variant(entry_id: str) -> tuple[str, bool]:
    """(return format, whether calls are wrapped in <TOOLCALL>) that BFCL's prompt for this entry asks for."""
    b = bfcl()
    fmt, tag, *_ = b.handler.parse_prompt_variation_params(b.utils.extract_prompt_format_from_id(entry_id))
    return fmt, tag


def decode_with_bfcl(reply: str, return_format: str, tool_call_tag: bool) -> list[dict]:
    """BFCL's own prompting decoder (used for the XML formats, which rods' call reader does not read)."""
    b = bfcl()
    return b.handler.default_decode_ast_prompting(reply, b.enums.ReturnFormat(return_format), tool_call_tag)


# -- verdicts ------------------------------------------------------------------------


def is_relevance(category: str) -> bool:
    return bool(bfcl().utils.is_relevance_or_irrelevance(category))


def ast_verdict(category: str, entry_id: str, functions: list[dict], decoded: list[dict], possible_answer: list,
                native: bool) -> dict[str, Any]:
    """BFCL's `ast_checker` on decoded calls, with the language and category its runner passes.

    `functions` are the checker's copy (without language hints). Format
    sensitivity is checked as Python under the original entry's category (the
    id's last part), as BFCL's runner does. An exception inside the checker
    (a value of a shape it does not expect) is an invalid answer.
    """
    b = bfcl()
    language = b.enums.Language
    lang = (language.JAVA if b.utils.is_java(category) else language.JAVASCRIPT if b.utils.is_js(category)
            else language.PYTHON)
    checked_as = entry_id.split(":")[-1] if b.utils.is_format_sensitivity(category) else category
    if not b.utils.is_function_calling_format_output(decoded):
        return {"valid": False, "error": ["not a list of {function: {parameter: value}}"],
                "error_type": "ast_decoder:decoder_wrong_output_format"}
    try:
        result = b.checker.ast_checker(functions, decoded, possible_answer, lang, checked_as,
                                       FC_MODEL if native else PROMPT_MODEL)
    except Exception as err:  # noqa: BLE001 - bfcl's checker on an odd value: the answer is wrong
        return {"valid": False, "error": [f"{type(err).__name__}: {err}"], "error_type": "checker_exception"}
    return {"valid": bool(result["valid"]), "error": result.get("error", []), "error_type": result.get("error_type")}


def relevance_verdict(category: str, decoded: list[dict], unreadable: bool = False) -> dict[str, Any]:
    """BFCL's runner's rule: irrelevance passes without a function call, relevance with one.

    A reply holds a call when it decodes to a non-empty call list
    (`is_empty_output`) or, `unreadable`, holds calls that BFCL's decoder
    reads and rods' does not; a reply that does not decode holds none.
    """
    has_call = unreadable or not bfcl().utils.is_empty_output(decoded)
    if "irrelevance" in category:
        return {"valid": not has_call, "error": [] if not has_call else ["a function call where none should be"],
                "error_type": None if not has_call else "irrelevance_error:decoder_success"}
    return {"valid": has_call, "error": [] if has_call else ["no function call where one should be"],
            "error_type": None if has_call else "relevance_error:decoder_failed"}


# -- summaries -----------------------------------------------------------------------


def summaries(scores: dict[str, tuple[float, int]]) -> dict[str, dict[str, Any]]:
    """BFCL's single-turn summary columns from per-category (accuracy, entry count), with its own formulas.

    A summary is given only when every category it averages was evaluated
    (BFCL shows N/A otherwise). Counts are what BFCL weights by; the caller
    passes each category's full size so that a subset stands for the whole.
    """
    calc = bfcl().summary

    def score(category: str) -> dict[str, Any]:
        accuracy, count = scores[category]
        return {"accuracy": accuracy, "total_count": count, "display_accuracy": accuracy}

    out: dict[str, dict[str, Any]] = {}
    simple = ("simple_python", "simple_java", "simple_javascript")
    non_live = ("multiple", "parallel", "parallel_multiple")
    live = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
    if all(c in scores for c in simple):
        out["non_live_simple_ast"] = {
            "formula": "unweighted mean of simple_python, simple_java, simple_javascript",
            **calc.calculate_unweighted_accuracy([score(c) for c in simple])}
        if all(c in scores for c in non_live):
            out["non_live_ast_summary"] = {
                "formula": "unweighted mean of the simple AST summary, multiple, parallel, parallel_multiple",
                **calc.calculate_unweighted_accuracy([out["non_live_simple_ast"]] + [score(c) for c in non_live])}
    if all(c in scores for c in live):
        out["live_ast_summary"] = {"formula": "mean of the live AST categories weighted by their entry counts",
                                   **calc.calculate_weighted_accuracy([score(c) for c in live])}
    if all(c in scores for c in ("irrelevance", "live_irrelevance")):
        out["irrelevance_detection"] = {
            "formula": "unweighted mean of irrelevance and live_irrelevance",
            **calc.calculate_unweighted_accuracy([score("irrelevance"), score("live_irrelevance")])}
    if "live_relevance" in scores:
        out["relevance_detection"] = {"formula": "live_relevance", **score("live_relevance")}
    for item in out.values():
        item.pop("display_accuracy", None)
    return out
