"""The names this kit's signatures give Hypothesis's types.

Aliases of ``Any``, because no module of ``assignors`` holds an import statement of Hypothesis, not even for type
checking: ``import assignors`` stays free of it, and the ``testing`` extra is needed only when a strategy, a state
machine or the battery is built. The values behind them are Hypothesis's own.

Every function of the kit that builds with Hypothesis loads its modules by name (:func:`testing_extra_module`, which
calls :func:`require_testing_extra` first), so the kit imports without the extra (its checks, ``KafkaBroker`` and the
group runners need none) and a strategy, a state machine or the battery says what is missing when it is built.
"""

import importlib
import importlib.util
import sys
from collections.abc import Callable
from typing import Any, TypeAlias

__all__ = [
    "DataObject",
    "Decorators",
    "DrawFn",
    "SearchStrategy",
    "Settings",
    "StateMachine",
    "require_testing_extra",
    "testing_extra_module",
]

SearchStrategy: TypeAlias = Any
"""A ``hypothesis.strategies.SearchStrategy``."""
DrawFn: TypeAlias = Any
"""The ``draw`` of a ``hypothesis.strategies.composite`` function (``hypothesis.strategies.DrawFn``)."""
DataObject: TypeAlias = Any
"""``hypothesis.strategies.data()``'s value (``hypothesis.strategies.DataObject``)."""
StateMachine: TypeAlias = Any
"""A ``hypothesis.stateful.RuleBasedStateMachine`` subclass."""
Settings: TypeAlias = Any
"""A ``hypothesis.settings``."""
Decorators: TypeAlias = Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]]
"""What Hypothesis's decorator factories (``given``, ``settings``, ``rule``, ``precondition``, ``invariant``) are to
the kit's type checks, loaded by name (:func:`testing_extra_module`)."""


MISSING = "assignors.testing needs Hypothesis: pip install 'assignors[testing]'"
"""What building a strategy, a state machine or the battery raises without the ``testing`` extra."""


def require_testing_extra() -> None:
    """Raise ``ImportError`` (:data:`MISSING`) unless Hypothesis can be imported, found without importing it.

    Raises:
        ImportError: the ``testing`` extra is not installed.
    """
    if "hypothesis" in sys.modules:
        return
    try:
        found = importlib.util.find_spec("hypothesis") is not None
    except (ImportError, ValueError):  # a finder refused it, or a broken installation
        found = False
    if not found:
        raise ImportError(MISSING)


def testing_extra_module(name: str) -> Any:
    """Hypothesis's module ``name`` (``"hypothesis.strategies"``, ...), imported by name: for code that runs when a
    module of the kit is imported (a decorator) and must not hold an import statement of Hypothesis, even one that
    only a later call reaches.

    Raises:
        ImportError: the ``testing`` extra is not installed (:data:`MISSING`).
    """
    require_testing_extra()
    return importlib.import_module(name)
