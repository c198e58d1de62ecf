"""What synthesis knows of BFCL's states: default configs, Config Patches for common preconditions,
and a last touch to a re-drawn config (the BFCL domain's config hooks).

A Config Patch edits a variant's initial config so a call that failed can
succeed: log in (authenticate), add funds, open the market, empty the fuel
tank, or create the missing file or directory in the folder the call ran in.
Each is keyed on the failure's message and touches only keys the class's
config already has.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from faker.providers.person.en_US import Provider as People

from rods.envs.bfcl.classes import default_state
from rods.envs.vocabulary import NOUNS


def default_config(cls: str) -> dict[str, Any]:
    """A class's `DEFAULT_STATE` as plain JSON (sets and unserialisable values dropped)."""
    out = {}
    for key, value in copy.deepcopy(default_state(cls)).items():
        try:
            out[key] = json.loads(json.dumps(value))
        except TypeError:
            continue
    return out


def patch_config(cls: str, config: dict[str, Any], failure: str, call: Any, env: Any,
                 fresh_text: Callable[[str], str]) -> str | None:
    """A patch for the common preconditions, keyed on the failure's message (see the module docstring)."""
    text = failure.lower()
    if "not authenticated" in text or "log in" in text or "logged in" in text:
        if "authenticated" in config and not config["authenticated"]:
            config["authenticated"] = True
            return f"{cls}: authenticated"
        if "current_user" in config and not config["current_user"]:
            users = config.get("user_map") or {}
            config["current_user"] = next(iter(users.values()), None) or fresh_text("Owner")
            return f"{cls}: logged in as {config['current_user']}"
    if "market is closed" in text and config.get("market_status") != "Open":
        config["market_status"] = "Open"
        return f"{cls}: market opened"
    if "insufficient funds" in text or "balance" in text:
        account = config.get("account_info")
        if isinstance(account, dict) and isinstance(account.get("balance"), (int, float)):
            account["balance"] = round(account["balance"] * 10 + 10000, 2)
            return f"{cls}: funds added"
        cards = config.get("credit_card_list")
        if isinstance(cards, dict) and cards:
            for card in cards.values():
                if isinstance(card, dict) and isinstance(card.get("balance"), (int, float)):
                    card["balance"] = round(card["balance"] * 10 + 10000, 2)
            return f"{cls}: card funds added"
    if "above the tank capacity" in text and isinstance(config.get("fuelLevel"), (int, float)):
        config["fuelLevel"] = round(min(config["fuelLevel"], 5.0) * 0.5, 1)
        return f"{cls}: emptied the fuel tank"
    if "no such file" in text or "no such directory" in text:
        return _create_missing(cls, config, call, env.instance(cls), fresh_text)
    return None


def _create_missing(cls: str, config: dict[str, Any], call: Any, fs: Any,
                    fresh_text: Callable[[str], str]) -> str | None:
    """Create the missing file (or directory) in the directory the failing call ran in."""
    name = call.arguments.get("file_name") or call.arguments.get("source") or call.arguments.get("folder") \
        or (call.args[0] if call.args else None)
    if fs is None or not isinstance(name, str) or "/" in name or name in (".", ".."):
        return None
    path = _dir_path(fs.root, fs._current_dir)
    if path is None or "root" not in config:
        return None
    node = {"contents": config["root"]}
    for part in path:
        node = node["contents"].get(part)
        if not isinstance(node, dict) or node.get("type") != "directory":
            return None
    if name in node["contents"]:
        return None
    if call.name == "cd":
        node["contents"][name] = {"type": "directory", "contents": {}}
        return f"{cls}: created directory {name}"
    node["contents"][name] = {"type": "file", "content": fresh_text("Notes about the quarterly plan.")}
    return f"{cls}: created file {name}"


def _dir_path(root: Any, target: Any) -> list[str] | None:
    """Names from the config's top directory down to `target` (a live Directory)."""
    stack = [(root, [root.name] if hasattr(root, "name") else [])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for name, child in getattr(node, "contents", {}).items():
            if hasattr(child, "contents"):
                stack.append((child, [*path, name]))
    return None


def rename_unchanged_root(config: dict[str, dict[str, Any]], seed_config: dict[str, Any], rng: random.Random) -> None:
    """A file system made only of environment words would come out unchanged: rename its top directory (a user's
    home named for its user, 'alex', after another user: "I am referrals_applications" read as no one's name)."""
    fs = config.get("GorillaFileSystem")
    root = (fs or {}).get("root")
    if fs is None or not isinstance(root, dict) or len(root) != 1 or fs != seed_config.get("GorillaFileSystem"):
        return
    ((name, node),) = root.items()
    firsts = sorted(n.lower() for n in People.first_names if n.isalpha())
    if name in firsts:  # a user's home named for its user ('alex': "I am alex"): another user's
        fs["root"] = {rng.choice([n for n in firsts if n != name]): node}
        return
    fs["root"] = {f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}": node}
