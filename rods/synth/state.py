"""How synthesis reads a large environment state: a shared base once, then only what each call changed.

The profile (`rods.synth.profile`) and the resolver (`rods.synth.resolver`)
need, after every call, whether the call changed the state and which values
it created there. For BFCL and a small Python class they walk the whole
public state after each call. A Python class whose state is a large database
shared by every rollout (tau2's copy-on-write databases) says so by pickling
as a delta from its base: it defines its own `__getstate__`. For such a class
(a *delta class*, docs/design.md §4.8):

* the values of the loaded state are walked once per initial config
  (`initial_values`, cached);
* after a call, only the class's `__getstate__()` (what differs from the base)
  is walked (`view`): a value there that the state did not hold before is
  created;
* the call changed the state iff its public state no longer equals the one
  before (`==`, which costs only the differing entries when unchanged entries
  are shared objects).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from rods.envs.classes import api_class
from rods.envs.contract import RolloutEnvironment
from rods.envs.environment import public_state

_INITIAL: dict[tuple[str, str], tuple[frozenset, frozenset]] = {}
_LOCK = threading.Lock()


def is_delta(cls: str) -> bool:
    """Whether a class pickles as a delta from a shared base (it defines its own `__getstate__`)."""
    klass = api_class(cls)
    return any("__getstate__" in vars(k) for k in klass.__mro__[:-1])


def view(env: RolloutEnvironment, cls: str) -> Any:
    """What a delta class's instance holds beyond its base (its `__getstate__()`)."""
    return env.instance(cls).__getstate__()


def initial_values(env: RolloutEnvironment, cls: str, config: Any) -> tuple[frozenset, frozenset]:
    """(scalars, string values) of a delta class's loaded state, walked once per initial config."""
    from rods.envs.state import walk
    from rods.synth.profile import scalars

    key = (cls, json.dumps(config, sort_keys=True, default=str))
    with _LOCK:
        cached = _INITIAL.get(key)
    if cached is None:
        values = scalars(walk({cls: public_state(env.instance(cls))}))
        cached = (frozenset(values), frozenset(v for v in values if isinstance(v, str)))
        with _LOCK:
            _INITIAL[key] = cached
    return cached


def same_state(before: RolloutEnvironment, after: RolloutEnvironment, cls: str) -> bool:
    """Whether a class's public state is unchanged between two environments."""
    return bool(public_state(before.instance(cls)) == public_state(after.instance(cls)))
