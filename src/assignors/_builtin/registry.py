"""Look up the built-in assignors by their Kafka names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assignors._builtin.range import RangeAssignor
from assignors._builtin.round_robin import RoundRobinAssignor
from assignors._builtin.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors._builtin.weighted.assignor import WeightedStickyAssignor
from assignors._core.errors import UnknownAssignorError

if TYPE_CHECKING:
    from collections.abc import Callable

    from assignors._core.interface import ConsumerPartitionAssignor

__all__ = ["assignor_names", "get_assignor", "is_built_in"]

_FACTORIES: dict[str, Callable[[], ConsumerPartitionAssignor]] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
    StickyAssignor.name: StickyAssignor,
    CooperativeStickyAssignor.name: CooperativeStickyAssignor,
}
# This library's own assignors, which no other client has: get_assignor knows them, assignor_names() (Kafka's
# assignors, the ones every strategy list and comparison runs) does not list them.
_OWN_FACTORIES: dict[str, Callable[[], ConsumerPartitionAssignor]] = {
    WeightedStickyAssignor.name: WeightedStickyAssignor,
}


_BUILT_IN_TYPES = frozenset(_FACTORIES.values()) | frozenset(_OWN_FACTORIES.values())


def is_built_in(assignor: object) -> bool:
    """Whether ``assignor`` is an instance of one of this library's own assignor classes.

    Decided by type, never by name: a user's class called ``"sticky"`` is not built in (nor is a
    subclass of a built-in, which may override ``assign``), so its cooperative assignments are
    validated.

    >>> from assignors import CooperativeStickyAssignor
    >>> class Mine(CooperativeStickyAssignor): ...
    >>> is_built_in(CooperativeStickyAssignor()), is_built_in(Mine())
    (True, False)
    """
    return type(assignor) in _BUILT_IN_TYPES


def get_assignor(name: str) -> ConsumerPartitionAssignor:
    """A fresh instance of the built-in assignor called ``name`` (Kafka's names, and ``"weighted-sticky"``).

    >>> get_assignor("range")
    RangeAssignor()

    Raises:
        UnknownAssignorError: no built-in assignor has that name; the message lists the names.
    """
    factory = (_FACTORIES.get(name) or _OWN_FACTORIES.get(name)) if isinstance(name, str) else None
    if factory is None:
        names = ", ".join(map(repr, (*assignor_names(), *_OWN_FACTORIES)))
        msg = f"unknown assignor name={name!r}; the built-in assignors are {names}"
        raise UnknownAssignorError(msg)
    return factory()


def assignor_names() -> tuple[str, ...]:
    """The names of Kafka's built-in assignors, in Kafka's order (``get_assignor`` also knows ``weighted-sticky``)."""
    return tuple(_FACTORIES)
