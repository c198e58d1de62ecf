"""Names a user chose (rods.synth.names): quoted names a call passes are renamed as other users named things there.

The unit tests hold the rule on a made-up model; the BFCL file-system seed shows the whole path: a seed whose world
is a folder and a file the user named, which a recast could not change before, recast with the names of other
users' folders and files, alike in its state, its calls and its words.
"""

from __future__ import annotations

import json
import random

from rods.envs.calls import ToolCall
from rods.envs.validation import validate_task
from rods.llm import make_backend
from rods.synth.names import quoted_names, renamed, with_derived
from rods.synth.pipeline import Pipeline
from rods.synth.profile import parse_ground_truth
from rods.synth.settings import SynthConfig
from rods.synth.value_model import Slot, ValueModel


def _model() -> ValueModel:
    model = ValueModel()
    model.params = {"touch.file_name": Slot("identifier"), "cd.folder": Slot("identifier"),
                    "lock.door": Slot("category", members={"driver", "passenger"})}
    model.passed = {"touch.file_name": frozenset({"notes.txt", "budget.xlsx", "draft.txt", "ideas.txt"}),
                    "cd.folder": frozenset({"Projects", "archive", "Photos"}),
                    "lock.door": frozenset({"driver", "passenger"})}
    return model


def test_quoted_names_a_call_passes_are_the_user_s_and_categories_are_not():
    calls = [ToolCall("cd", {"folder": "Documents"}), ToolCall("touch", {"file_name": "summary.txt"}),
             ToolCall("lock", {"door": "driver"}), ToolCall("touch", {"file_name": "plain.txt"}),
             ToolCall("grep", {"file_name": "summary.txt", "pattern": "update"})]
    text = "Go to 'Documents', make 'summary.txt' and lock the 'driver' door; then plain.txt too. Find 'update'."
    writes = [False, True, True, True, False]
    # 'Documents' is a folder the state holds, 'summary.txt' a file a write makes; 'update' is a read's search term
    assert quoted_names(calls, writes, text, _model(), frozenset({"Documents", "driver"})) == [
        ("cd.folder", "Documents"), ("touch.file_name", "summary.txt")]
    assert quoted_names(calls, writes, text, _model(), frozenset()) == [("touch.file_name", "summary.txt")]
    # a word of the environment's vocabulary is no name of the user's ('archive': a folder and a verb)
    assert quoted_names(calls, writes, text, _model(), frozenset({"Documents"}), frozenset({"documents"})) == [
        ("touch.file_name", "summary.txt")]


def test_a_name_takes_another_user_s_name_of_its_shape_that_the_world_does_not_hold():
    names = [("cd.folder", "Documents"), ("touch.file_name", "summary.txt")]
    world = {"root": {"Documents": {"notes.txt": {}}}}
    for seed in range(20):
        out = renamed(names, _model(), world, "make 'summary.txt'; the ideas.txt can wait", random.Random(seed))
        assert out["Documents"] in {"Projects", "Photos"}  # capitalised as the seed's folder
        assert out["summary.txt"] == "draft.txt"  # a .txt; notes.txt is held, ideas.txt is said
    assert renamed([("touch.file_name", "report.pdf")], _model(), world, "", random.Random(0)) == {}
    # a name sharing a word with the seed's comes first: 'draft_ideas.txt' for 'ideas_list.txt'
    model = _model()
    model.passed["touch.file_name"] = frozenset({"draft_ideas.txt", "budget.txt", "minutes.txt"})
    for seed in range(10):
        assert renamed([("touch.file_name", "ideas_list.txt")], model, {}, "", random.Random(seed)) == {
            "ideas_list.txt": "draft_ideas.txt"}


def test_a_name_made_of_a_renamed_name_follows_it():
    """BFCL read of draw 1818, both readers: 'FinalReport.txt' renamed 'TeamNotes.txt' was copied as
    'ArchivedFinalReport2023.txt', an archived final report of team notes. A text holding a renamed name's stem
    (as a camel-case part or between marks) takes the new stem; a word that merely contains it does not."""
    names = {"FinalReport.txt": "TeamNotes.txt", "notes.txt": "ideas.txt"}
    derived = with_derived(names, ["ArchivedFinalReport2024.txt", "old_notes_2.txt", "footnotes.txt", "FinalReports",
                                   "2024-05-01", 3, "FinalReport.txt"])
    assert derived == {**names, "ArchivedFinalReport2024.txt": "ArchivedTeamNotes2024.txt",
                       "old_notes_2.txt": "old_ideas_2.txt"}
    assert with_derived({"memo": "list"}, ["memo_2.txt"]) == {"memo": "list"}  # a stem too short to be a name


def test_a_file_system_seed_of_named_things_is_recast_with_other_users_names(train_tasks):
    seed = next(t for t in train_tasks if t.id == "multi_turn_base_12")  # 'Documents', 'summary.txt'
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=4, workers=1, seed=3, recast=1.0))
    variants = [v for v in pipeline([seed]) if v.provenance.strategy == "recast"]
    assert variants, pipeline.report()
    for variant in variants:
        assert validate_task(variant) == []
        calls = [c for turn in parse_ground_truth(variant) for c in turn]
        folder, file = calls[0].arguments["folder"], calls[1].arguments["file_name"]
        assert folder != "Documents" and file != "summary.txt" and file.endswith(".txt")
        assert [c.arguments.get("file_name") for c in calls[1:]] == [file] * 3  # one file throughout
        said = " ".join(m.content for turn in variant.question for m in turn)
        assert f"'{folder}'" in said and f"'{file}'" in said and "summary.txt" not in said
        assert folder in json.dumps(variant.initial_config) and "Documents" not in json.dumps(variant.initial_config)
        # the rest of the seed's words stand
        assert "profound topic 'quantum computing'" in said
