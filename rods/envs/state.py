"""Reading a state as leaves: (path, scalar) pairs, for synthesis to find the values a call can take.

Two readers: `walk` goes through live objects (public attributes, every dict
key a leaf), `json_leaves` through a state's JSON form (a key is a leaf only
when it holds a record or a list: an id, not a field name). A domain chooses
its reader (`Domain.state_leaves`).
"""

from __future__ import annotations

from typing import Any

from rods.envs.python.running import to_json


def walk(value: Any) -> list[tuple[str, Any]]:
    """(path, scalar) leaves of a live state, walking objects' public attributes once each.

    Dict keys appear as leaves too (path ending in "#key"), so created names count,
    except the keys of the state itself (its attributes: `orders` is no order);
    an object's link back to its container (`parent`) is not followed.
    """
    out: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    seen: set[int] = set()
    while stack:
        path, node = stack.pop()
        if isinstance(node, (str, int, float, bool)) or node is None:
            out.append((path, node))
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for k, v in node.items():
                if node is not value:
                    out.append((f"{path}/{k}#key", k))
                stack.append((f"{path}/{k}", v))
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}/{i}", v) for i, v in enumerate(node))
        elif isinstance(node, set):
            stack.extend((f"{path}/{v!r}", v) for v in node)
        elif hasattr(node, "__dict__") and not isinstance(node, type):
            stack.extend((f"{path}.{k}", v) for k, v in vars(node).items() if k != "parent" and not k.startswith("_"))
    return out


def json_leaves(state: Any) -> list[tuple[str, Any]]:
    """(path, scalar) leaves of a state as JSON (`rods.envs.python.to_json`).

    The key of an entry that holds a record or a list (`orders/o1001`) is a
    leaf too (`orders/o1001#key`: an id); the key of a scalar (`balance`) is a
    field name, and a key of the state itself (`orders`) an attribute: neither
    is a value a call could take.
    """
    out: list[tuple[str, Any]] = []
    root = to_json(state)
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, (dict, list)) and node is not root:
                    out.append((f"{path}/{k}#key", k))
                stack.append((f"{path}/{k}", v))
        elif isinstance(node, list):
            stack.extend((f"{path}/{i}", v) for i, v in enumerate(node))
        else:
            out.append((path, node))
    return out
