"""BFCL's last edit of a variant's config (rods.envs.bfcl.patches): a file system that came out unchanged gets
a new top directory, a user's home another user's name."""

from __future__ import annotations

import copy
import random

from rods.envs.bfcl.patches import rename_unchanged_root


def _fs(root: str) -> dict:
    return {"GorillaFileSystem": {"root": {root: {"type": "directory", "contents": {}}}}}


def test_an_unchanged_home_named_for_its_user_becomes_another_users():
    """The BFCL read: "I am alex" of a home 'alex' came back as "I am referrals_applications"."""
    for seed in range(20):
        config = _fs("alex")
        rename_unchanged_root(config, copy.deepcopy(config), random.Random(seed))
        (name,) = config["GorillaFileSystem"]["root"]
        assert name != "alex" and name.isalpha() and name.islower(), name
    config = _fs("workspace")
    rename_unchanged_root(config, copy.deepcopy(config), random.Random(0))
    (name,) = config["GorillaFileSystem"]["root"]
    assert name != "workspace" and "_" in name  # not a person's: two words of things, as before
    moved = _fs("alex")
    rename_unchanged_root(moved, _fs("bob"), random.Random(0))
    assert moved == _fs("alex")  # a file system the variant already changed stays
