"""The test kit for consumer-protocol (KIP-848) groups: timeline invariants and a hypothesis state machine."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from assignors._classic.events import Join, Restart
from assignors._core.model import COOPERATIVE_STICKY_ASSIGNOR_NAME, RANGE_ASSIGNOR_NAME, TopicPartition
from assignors.consumer_group import ConsumerGroupSimulator, ConsumerTimeline, Instant, ServerAssignor
from assignors.testing._base_machine import event_machine, topic_subsets
from assignors.testing._checks import InvariantViolationError
from assignors.testing._types import DataObject, Decorators, StateMachine, testing_extra_module

__all__ = ["consumer_group_problems", "consumer_group_state_machine"]


def consumer_group_problems(timeline: ConsumerTimeline) -> list[str]:
    """KIP-848's invariants at every instant of a :class:`~assignors.consumer_group.ConsumerGroupSimulator` run.

    - No partition is consumed by two members at once.
    - While the group is stable, every partition of a subscribed topic is consumed.
    - A member never revokes a partition and then gets it back while the target assignment
      epoch is still the one it revoked it for (a newer target may give it back, as Kafka's
      ``CurrentAssignmentBuilderTest`` shows).
    - The group epoch never goes down, and the target epoch never passes it.
    """
    return _Checker().feed(timeline.instants)


class _Checker:
    """The invariants of :func:`consumer_group_problems`, fed instant by instant (a state machine checks each once)."""

    def __init__(self) -> None:
        self.revoked_at: dict[tuple[str, TopicPartition], int] = {}  # (member, partition) -> target epoch
        self.last_epoch: int | None = None
        self.seen = 0

    def feed(self, instants: Sequence[Instant]) -> list[str]:
        problems: list[str] = []
        for i in instants[self.seen :]:
            problems.extend(self._check(i))
        self.seen = len(instants)
        return problems

    def _check(self, i: Instant) -> list[str]:
        where = f"t={i.at:g} ({i.member or 'group'}: {i.text})"
        counts = Counter(tp for owned in i.owned.values() for tp in owned)
        problems = [f"{where}: {tp} consumed by {n} members" for tp, n in sorted(counts.items()) if n > 1]
        if i.stable and i.unowned:
            problems.append(f"{where}: stable but {[str(tp) for tp in i.unowned]} consumed by nobody")
        if self.last_epoch is not None and i.protocol == "consumer" and i.group_epoch < self.last_epoch:
            problems.append(f"{where}: group epoch {i.group_epoch} after {self.last_epoch}")
        if i.assignment_epoch > i.group_epoch:
            problems.append(f"{where}: target epoch {i.assignment_epoch} ahead of group epoch {i.group_epoch}")
        self.last_epoch = i.group_epoch if i.protocol == "consumer" else None
        if i.member is None or i.protocol != "consumer" or not i.text.startswith("heartbeat"):
            return problems
        problems.extend(
            f"{where}: {i.member!r} got back {tp}, revoked for the same target"
            for tp in i.added
            if self.revoked_at.get((i.member, tp)) == i.assignment_epoch
        )
        for tp in i.revoked:
            self.revoked_at[i.member, tp] = i.assignment_epoch
        return problems


def consumer_group_state_machine(
    assignor: str | ServerAssignor = "uniform",
    *,
    partitions: Mapping[str, int] | None = None,
    session_timeout_s: float = 45.0,
    classic_assignors: tuple[tuple[str, ...], ...] = (
        (COOPERATIVE_STICKY_ASSIGNOR_NAME,),
        (RANGE_ASSIGNOR_NAME, COOPERATIVE_STICKY_ASSIGNOR_NAME),
    ),
) -> StateMachine:
    """A ``RuleBasedStateMachine`` class driving a consumer-protocol group through random events.

    Members join (consumer protocol with ``assignor``, a server strategy name or a server
    assignor object whose configuration is used, or classic with one of
    ``classic_assignors``, COOPERATIVE and EAGER by default, which exercises the online
    upgrade and downgrade; they should share an assignor), leave, crash, restart
    within or beyond the session timeout (static or not, possibly switching protocol),
    resubscribe; topics grow; time passes. After every step :func:`consumer_group_problems`
    must be empty, and after waiting three session timeouts the group must be stable with
    every subscribed partition consumed, and the timeline's last instant must say so.
    """
    st = testing_extra_module("hypothesis.strategies")
    hypothesis_stateful = testing_extra_module("hypothesis.stateful")
    invariant: Decorators = hypothesis_stateful.invariant
    precondition: Decorators = hypothesis_stateful.precondition
    rule: Decorators = hypothesis_stateful.rule

    counts = dict(partitions) if partitions is not None else {"t0": 4, "t1": 6}
    subsets = topic_subsets(sorted(counts))
    configs: list[tuple[str | ServerAssignor, ...]] = [(assignor,), *classic_assignors]
    base = event_machine(counts, waits=(1.0, 3.0, 5.0, session_timeout_s + 1))

    class ConsumerGroupMachine(base):  # type: ignore[misc,valid-type]
        sim: ConsumerGroupSimulator

        def __init__(self) -> None:
            super().__init__()
            self.sim = ConsumerGroupSimulator(counts, session_timeout_s=session_timeout_s)
            self.checker = _Checker()

        def partition_count(self, topic: str) -> int:
            return self.sim.partitions.get(topic, 0)

        @rule(topics=subsets, static=st.booleans(), config=st.sampled_from(configs))
        def join(self, topics: tuple[str, ...], static: bool, config: tuple[str | ServerAssignor, ...]) -> None:  # noqa: FBT001
            handle = self.new_handle()
            self.sim.apply(Join(self.now, handle, topics, config, instance_id=f"i-{handle}" if static else None))

        @precondition(lambda self: bool(self.up))
        @rule(
            data=st.data(),
            downtime=st.sampled_from((0.0, session_timeout_s / 2, session_timeout_s * 2)),
            config=st.sampled_from(configs),
        )
        def restart(self, data: DataObject, downtime: float, config: tuple[str | ServerAssignor, ...]) -> None:
            handle = data.draw(st.sampled_from(self.up), label="member")
            self.sim.apply(Restart(self.now, handle, downtime, assignors=config))
            self.now += downtime + 1
            self.sim.advance(self.now)

        @rule()
        def settle(self) -> None:
            """Long enough for the absent to time out and the rest to reconcile: the group must be stable."""
            self.now += 3 * session_timeout_s + 10
            self.sim.advance(self.now)
            if not self.sim.stable() or self.sim.unowned():
                unowned = [str(tp) for tp in self.sim.unowned()]
                msg = f"the group did not settle (unowned: {unowned})\ntimeline:\n" + self.sim.timeline.render()
                raise InvariantViolationError(msg)
            instants = self.sim.timeline.instants
            last = instants[-1] if instants else None  # nothing happened yet: nothing to describe
            if last is not None and (not last.stable or last.owned != self.sim.owned()):
                # The timeline records every change of the group: its last instant is the group as it is now.
                msg = f"the group settled, but the timeline ends on {last}\ntimeline:\n" + self.sim.timeline.render()
                raise InvariantViolationError(msg)

        @invariant()
        def group_invariants(self) -> None:
            problems = self.checker.feed(self.sim.timeline.instants)
            if problems:
                msg = "consumer group invariants violated:\n  " + "\n  ".join(problems[:5])
                msg += "\ntimeline:\n" + self.sim.timeline.render()
                raise InvariantViolationError(msg)

    label = assignor if isinstance(assignor, str) else repr(assignor)
    ConsumerGroupMachine.__name__ = ConsumerGroupMachine.__qualname__ = f"ConsumerGroupMachine[{label}]"
    return ConsumerGroupMachine
