"""The Python domain's hooks: a user's plain class, or a user's `Environment` subclass hosted by replay.

A plain class is loaded, run and read by `rods.envs.python`; what it knows
better than the defaults it declares as class attributes: `rods_error(result)`
(its error convention, beside `ERROR_PREFIX` and an `error` key),
`volatile_state`, `tool_time_limit`, or a whole `Domain` as `rods_domain`.
"""

from __future__ import annotations

from typing import Any

from rods.envs import python as python_env
from rods.envs.domain import Domain


class PythonDomain(Domain):
    """A user's Python class: public methods are tools, public attributes the state."""

    name = "python"

    def load_class(self, key: str) -> type:
        return python_env.load_class(key)

    def tool_names(self, key: str) -> tuple[str, ...]:
        return python_env.tool_methods(self.load_class(key))

    def tool_docs(self, key: str) -> list[dict[str, Any]]:
        return python_env.tool_docs(self.load_class(key))

    def load(self, key: str, config: dict[str, Any], *, long_context: bool, seed: int | None) -> Any:
        return python_env.load_instance(self.load_class(key), config, seed)

    def invoke(self, key: str, method: Any, args: tuple, kwargs: dict[str, Any], formatter: Any) -> Any:
        """Under the class's time limit; a result that is not text is sent as JSON."""
        limit = python_env.time_limit(self.load_class(key))
        text = python_env.result_text(python_env.call_with_time_limit(method, args, kwargs, limit))
        return formatter(text) if formatter is not None else text

    def error_of(self, key: str, result: str) -> str | None:
        """`standard_error`, then the class's own `rods_error(result)` if it declares one."""
        found = super().error_of(key, result)
        if found is not None:
            return found
        own = getattr(self.load_class(key), "rods_error", None)
        if callable(own):
            verdict = own(result)
            return str(verdict) if verdict else None
        return None

    def vocabulary(self, key: str) -> frozenset[str]:
        return cached_vocabulary(self, key, lambda: self.build_vocabulary(key))

    def build_vocabulary(self, key: str) -> frozenset[str]:
        """The class's vocabulary, read from its source (`rods.envs.python.vocabulary`); `vocabulary` caches it."""
        from rods.envs.python.vocabulary import class_vocabulary

        return class_vocabulary(python_env.load_class(key), self.tool_docs(key))


class ProtocolDomain(PythonDomain):
    """An environment that only speaks the protocol (an `Environment` subclass), hosted by replay
    (`rods.envs.replayed`): its tools are what `tools()` lists, its state its `snapshot()`."""

    name = "protocol"

    def load_class(self, key: str) -> type:
        from rods.envs.replayed import ReplayedEnvironment

        return ReplayedEnvironment

    def tool_names(self, key: str) -> tuple[str, ...]:
        from rods.envs.replayed import tool_names

        return tool_names(key)

    def tool_docs(self, key: str) -> list[dict[str, Any]]:
        from rods.envs.replayed import tool_specs_of

        return [{"name": s.name, "description": s.description, "parameters": dict(s.parameters), "effect": s.effect}
                for s in tool_specs_of(key)]

    def load(self, key: str, config: dict[str, Any], *, long_context: bool, seed: int | None) -> Any:
        from rods.envs.replayed import ReplayedEnvironment

        return ReplayedEnvironment(key, config, seed)

    def invoke(self, key: str, method: Any, args: tuple, kwargs: dict[str, Any], formatter: Any) -> Any:
        text = method(*args, **kwargs)  # the environment keeps its own time limits (an MCP call's timeout)
        return formatter(text) if formatter is not None else text

    def error_of(self, key: str, result: str) -> str | None:
        return Domain.error_of(self, key, result)


_VOCABULARIES: dict[tuple[int, str], frozenset[str]] = {}


def cached_vocabulary(domain: Domain, key: str, build: Any) -> frozenset[str]:
    """A class's vocabulary, built once per process (it reads source files)."""
    cached = _VOCABULARIES.get((id(domain), key))
    if cached is None:
        cached = _VOCABULARIES[(id(domain), key)] = build()
    return cached


def domain_of_class(key: str) -> Domain:
    """The domain of an import path: the class's own `rods_domain`, the protocol's, or the Python domain."""
    from rods.envs.protocol import Environment

    klass = python_env.load_class(key)
    own = getattr(klass, "rods_domain", None)
    if own is not None:
        if not isinstance(own, Domain):
            raise ValueError(f"{key}: rods_domain must be a rods.envs.domain.Domain, not {type(own).__name__}")
        return own
    return PROTOCOL if issubclass(klass, Environment) else DOMAIN


#: A user's plain Python class.
DOMAIN = PythonDomain()
#: A user's `Environment` subclass.
PROTOCOL = ProtocolDomain()
