"""A hypothesis state machine that drives a consumer group through random events with any assignor."""

from __future__ import annotations

from collections.abc import Mapping

from assignors._classic.events import Join, Restart
from assignors._core.errors import UnknownAssignorError
from assignors._core.interface import ConsumerPartitionAssignor
from assignors._groups.simulator import GroupSimulator
from assignors.consumer_group import STRATEGIES, ServerAssignor
from assignors.testing._base_machine import event_machine, topic_subsets
from assignors.testing._battery import AssignorFactory, as_factory
from assignors.testing._checks import InvariantViolationError, simulation_problems
from assignors.testing._consumer import consumer_group_state_machine
from assignors.testing._types import DataObject, Decorators, StateMachine, testing_extra_module

__all__ = ["group_state_machine"]


def _is_server_assignor(assignor: object) -> bool:
    return isinstance(assignor, ServerAssignor) or (isinstance(assignor, type) and issubclass(assignor, ServerAssignor))


def _server_machine(assignor: object, partitions: Mapping[str, int] | None, session_timeout_s: float) -> StateMachine:
    """The consumer-protocol machine for a KIP-848 server assignor (a strategy name, object or class)."""
    if isinstance(assignor, str):
        if assignor not in STRATEGIES:
            msg = f"assignor={assignor!r}: give a client assignor object or factory, or a server strategy name"
            raise UnknownAssignorError(msg)
        server: str | ServerAssignor = assignor
    elif isinstance(assignor, ServerAssignor):
        server = assignor  # its configuration counts, e.g. UniformAssignor(stable_extras=False)
    else:
        server = assignor()  # type: ignore[operator] # a ServerAssignor class
    return consumer_group_state_machine(server, partitions=partitions, session_timeout_s=session_timeout_s)


def group_state_machine(
    assignor: ConsumerPartitionAssignor | AssignorFactory | str,
    *,
    partitions: Mapping[str, int] | None = None,
    session_timeout_s: float = 10.0,
) -> StateMachine:
    """A ``RuleBasedStateMachine`` class: members join, leave, crash, restart (static or not,
    within or beyond the session timeout), resubscribe, topics grow and time passes, in a
    :class:`~assignors.rebalance.GroupSimulator` whose members all use ``assignor``. A KIP-848
    server assignor (``"uniform"``, ``"consumer-range"``, or such an object or class) runs a
    consumer-protocol group instead (:func:`consumer_group_state_machine`). After every
    step the group invariants hold (:func:`~assignors.testing.simulation_problems`: no
    partition owned twice, all owned once settled, no cooperative give-back, generations
    one apart).

    >>> from assignors import CooperativeStickyAssignor
    >>> TestGroup = group_state_machine(CooperativeStickyAssignor).TestCase  # collected by pytest/unittest

    Args:
        assignor: an assignor object (each member gets a deep copy) or a factory such as the class.
        partitions: the topics and their initial partition counts (default ``t0``: 4, ``t1``: 6).
        session_timeout_s: the coordinator's session timeout.
    """
    st = testing_extra_module("hypothesis.strategies")
    hypothesis_stateful = testing_extra_module("hypothesis.stateful")
    invariant: Decorators = hypothesis_stateful.invariant
    precondition: Decorators = hypothesis_stateful.precondition
    rule: Decorators = hypothesis_stateful.rule

    if isinstance(assignor, str) or _is_server_assignor(assignor):
        return _server_machine(assignor, partitions, session_timeout_s)
    make = as_factory(assignor)
    counts = dict(partitions) if partitions is not None else {"t0": 4, "t1": 6}
    subsets = topic_subsets(sorted(counts))

    class GroupMachine(event_machine(counts, waits=(1.0, session_timeout_s + 1))):  # type: ignore[misc]
        sim: GroupSimulator

        def __init__(self) -> None:
            super().__init__()
            self.sim = GroupSimulator(counts, session_timeout_s=session_timeout_s)

        def partition_count(self, topic: str) -> int:
            return self.sim.cluster.partitions_per_topic.get(topic, 0)

        @rule(topics=subsets, static=st.booleans())
        def join(self, topics: tuple[str, ...], static: bool) -> None:  # noqa: FBT001 - hypothesis passes it
            handle = self.new_handle()
            self.sim.apply(Join(self.now, handle, topics, (make(),), instance_id=f"i-{handle}" if static else None))

        @precondition(lambda self: bool(self.up))
        @rule(data=st.data(), downtime=st.sampled_from((0.0, session_timeout_s / 2, session_timeout_s * 2)))
        def restart(self, data: DataObject, downtime: float) -> None:
            handle = data.draw(st.sampled_from(self.up), label="member")
            self.sim.apply(Restart(self.now, handle, downtime))
            self.now += max(downtime, session_timeout_s) + 1
            self.sim.advance(self.now)

        @invariant()
        def group_invariants(self) -> None:
            problems = simulation_problems(self.sim.timeline)
            if problems:
                msg = (
                    "group invariants violated:\n  "
                    + "\n  ".join(problems)
                    + "\ntimeline:\n"
                    + self.sim.timeline.render()
                )
                raise InvariantViolationError(msg)

    GroupMachine.__name__ = GroupMachine.__qualname__ = f"GroupMachine[{make().name}]"
    return GroupMachine
