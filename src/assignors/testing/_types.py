"""The names this kit's signatures give Hypothesis's types.

Aliases of ``Any``, because no module of ``assignors`` imports Hypothesis outside a function, not even for type
checking: ``import assignors`` stays free of it, and the ``testing`` extra is needed only when a strategy, a state
machine or the battery is built. The values behind them are Hypothesis's own.

Importing this module (every module of the kit that builds with Hypothesis does, ``assignors.testing`` first of
all through ``_battery``) checks that Hypothesis is installed, without importing it.
"""

import importlib.util
from typing import Any, TypeAlias

__all__ = ["DataObject", "DrawFn", "SearchStrategy", "Settings", "StateMachine"]

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


def _has_hypothesis() -> bool:
    """Whether Hypothesis can be imported, found without importing it."""
    try:
        return importlib.util.find_spec("hypothesis") is not None
    except (ImportError, ValueError):  # a finder refused it, or a broken installation
        return False


if not _has_hypothesis():  # pragma: no cover - exercised only without the extra
    msg = "assignors.testing needs Hypothesis: pip install 'assignors[testing]'"
    raise ImportError(msg)
