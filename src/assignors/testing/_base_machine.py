"""The events both hypothesis state machines draw (:func:`~assignors.testing.group_state_machine` and
:func:`~assignors.testing.consumer_group_state_machine`): members leave or crash, resubscribe, topics grow, time
passes. Each machine adds how a member joins and restarts, and what must hold after every step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from assignors._classic.events import AddPartitions, Crash, Event, Leave, Subscribe
from assignors.testing._types import (
    DataObject,
    Decorators,
    SearchStrategy,
    StateMachine,
    testing_extra_module,
)

__all__ = ["Driven", "event_machine", "topic_subsets"]


class Driven(Protocol):
    """A simulator a machine drives: both group simulators are."""

    def apply(self, event: Event) -> None: ...

    def advance(self, to: float) -> None: ...


def topic_subsets(names: list[str]) -> SearchStrategy:
    """Non-empty subscriptions to some of ``names``, in drawing order."""
    st = testing_extra_module("hypothesis.strategies")

    return st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True).map(tuple)


def event_machine(counts: Mapping[str, int], waits: tuple[float, ...]) -> StateMachine:
    """A base ``RuleBasedStateMachine``: ``sim``, the clock ``now``, the ``up`` members and the shared rules.

    Args:
        counts: the topics and their initial partition counts.
        waits: the steps of time the ``wait`` rule draws.
    """
    st = testing_extra_module("hypothesis.strategies")
    hypothesis_stateful = testing_extra_module("hypothesis.stateful")
    base: StateMachine = hypothesis_stateful.RuleBasedStateMachine
    precondition: Decorators = hypothesis_stateful.precondition
    rule: Decorators = hypothesis_stateful.rule

    names = sorted(counts)
    subsets = topic_subsets(names)

    class EventMachine(base):  # type: ignore[misc] # Hypothesis's class, loaded by name
        sim: Driven

        def __init__(self) -> None:
            super().__init__()
            self.now = 0.0
            self.serial = 0
            self.up: list[str] = []  # members that can be named (not down)

        def partition_count(self, topic: str) -> int:
            raise NotImplementedError

        def new_handle(self) -> str:
            handle = f"m{self.serial}"
            self.serial += 1
            self.up.append(handle)
            return handle

        @precondition(lambda self: bool(self.up))
        @rule(data=st.data(), crash=st.booleans())
        def leave_or_crash(self, data: DataObject, crash: bool) -> None:  # noqa: FBT001 - hypothesis passes it
            handle = data.draw(st.sampled_from(self.up), label="member")
            self.up.remove(handle)
            self.sim.apply(Crash(self.now, handle) if crash else Leave(self.now, handle))

        @precondition(lambda self: bool(self.up))
        @rule(data=st.data(), topics=subsets)
        def subscribe(self, data: DataObject, topics: tuple[str, ...]) -> None:
            self.sim.apply(Subscribe(self.now, data.draw(st.sampled_from(self.up), label="member"), topics))

        @rule(topic=st.sampled_from(names), more=st.integers(1, 4))
        def grow(self, topic: str, more: int) -> None:
            self.sim.apply(AddPartitions(self.now, topic, self.partition_count(topic) + more))

        @rule(seconds=st.sampled_from(waits))
        def wait(self, seconds: float) -> None:
            self.now += seconds
            self.sim.advance(self.now)

    return EventMachine
