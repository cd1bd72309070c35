"""The group coordinator of a consumer-protocol group: epochs, targets, heartbeats (KIP-848)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from assignors._core.errors import SimulationError
from assignors._core.model import Cluster, Subscription, TopicPartition
from assignors.consumer_group._java_order import CoordinatorTable
from assignors.consumer_group._reconcile import (
    NO_EPOCH,
    MemberAssignmentState,
    MemberState,
    joined,
    next_member_state,
    static_leave,
    static_rejoin,
)
from assignors.consumer_group._replay import server_assignor

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from assignors._core.model import MemberId
    from assignors.consumer_group._common import ServerAssignor

__all__ = ["Coordinator", "MemberRecord"]

DEFAULT_ASSIGNOR = "uniform"
"""The first of Kafka's ``group.consumer.assignors``: the group's assignor when no member names one."""


@dataclass(frozen=True, slots=True)
class MemberRecord:
    """What the coordinator keeps about one member.

    Attributes:
        member_id: the member id (a static member gets a new one when it restarts).
        topics: the subscribed topics.
        instance_id: ``group.instance.id`` of a static member.
        assignor: the member's ``group.remote.assignor`` (None: the group's default).
        classic: a classic-protocol member of a converted group (it joins and syncs instead of heartbeating).
        reconciliation: its state, member epoch and current assignment.
        left: a static member that left with epoch -2 and may come back.
    """

    member_id: MemberId
    topics: tuple[str, ...]
    instance_id: str | None
    assignor: str | None
    classic: bool
    reconciliation: MemberAssignmentState
    left: bool = False


class Coordinator:
    """A consumer group on the coordinator: the group epoch, the target and every member's reconciliation.

    Membership changes (a new member, a subscription change, a member leaving or fenced,
    a topic's partition count) bump the group epoch; the next heartbeat of any member
    runs the assignor (its input is each member's previous target) and sets the target
    assignment epoch; each heartbeat then moves its member one reconciliation step.
    """

    def __init__(self, partitions: Mapping[str, int], *, group_epoch: int = 0) -> None:
        self.partitions = dict(partitions)
        self.group_epoch = group_epoch
        self.assignment_epoch = group_epoch
        self.members: dict[MemberId, MemberRecord] = {}
        self.target: dict[MemberId, frozenset[TopicPartition]] = {}
        self.holder: dict[TopicPartition, MemberId] = {}
        self.assignor_name = DEFAULT_ASSIGNOR
        self.configured: dict[str, ServerAssignor] = {}  # strategy name -> a member's own assignor object
        self.table = CoordinatorTable()  # the members as the coordinator's table held them at the last target

    # --- membership -------------------------------------------------------------------

    def adopt(self, record: MemberRecord) -> None:
        """Add a member as it is (the conversion of a classic group): its assignment is also its target."""
        self.members[record.member_id] = record
        self.target[record.member_id] = record.reconciliation.assigned
        self._hold(record.member_id, frozenset(), _held(record.reconciliation))

    def join(
        self,
        member_id: MemberId,
        topics: Iterable[str],
        *,
        instance_id: str | None = None,
        assignor: str | None = None,
        classic: bool = False,
    ) -> str:
        """A heartbeat with epoch 0: a new member, or a static member back with a new member id.

        Returns what happened: ``"joined"`` or ``"replaced <old member id>"``.

        Raises:
            SimulationError: the instance id belongs to a member that has not left.
        """
        topics = tuple(sorted(set(topics)))
        previous = self._static(instance_id)
        if previous is not None:
            if not previous.left:
                msg = f"instance id {instance_id!r} is still used by member {previous.member_id!r}"
                raise SimulationError(msg)
            del self.members[previous.member_id]
            target = self.target.pop(previous.member_id, frozenset())
            for tp in previous.reconciliation.assigned:
                self.holder[tp] = member_id
            inherited = static_rejoin(previous.reconciliation)
            self.members[member_id] = MemberRecord(member_id, topics, instance_id, assignor, classic, inherited)
            self.target[member_id] = target
            if topics != previous.topics:
                self.group_epoch += 1
            return f"replaced {previous.member_id}"
        self.members[member_id] = MemberRecord(member_id, topics, instance_id, assignor, classic, joined())
        self.target[member_id] = frozenset()
        self.group_epoch += 1
        return "joined"

    def _static(self, instance_id: str | None) -> MemberRecord | None:
        if instance_id is None:
            return None
        return next((r for r in self.members.values() if r.instance_id == instance_id), None)

    def leave(self, member_id: MemberId, *, static: bool) -> None:
        """A heartbeat with epoch -1 (gone for good) or, for a static member, -2 (back soon, target kept)."""
        record = self.members[member_id]
        if static and record.instance_id is not None:
            kept = static_leave(record.reconciliation)
            self._hold(member_id, _held(record.reconciliation), _held(kept))
            self.members[member_id] = replace(record, reconciliation=kept, left=True)
            return
        self.remove(member_id)

    def remove(self, member_id: MemberId) -> None:
        """Remove a member (a leave, or fenced after its session or rebalance timeout): bumps the group epoch."""
        record = self.members.pop(member_id)
        self.target.pop(member_id, None)
        self._hold(member_id, _held(record.reconciliation), frozenset())
        self.group_epoch += 1

    def subscribe(self, member_id: MemberId, topics: Iterable[str]) -> None:
        record = self.members[member_id]
        topics = tuple(sorted(set(topics)))
        if topics != record.topics:
            self.members[member_id] = replace(record, topics=topics)
            self.group_epoch += 1

    def set_partitions(self, topic: str, count: int) -> None:
        if self.partitions.get(topic) != count:
            self.partitions[topic] = count
            self.group_epoch += 1

    # --- heartbeats -------------------------------------------------------------------

    def heartbeat(self, member_id: MemberId, owned: Collection[TopicPartition] | None) -> MemberAssignmentState:
        """A heartbeat at the member's epoch listing ``owned``: computes the target if needed, reconciles."""
        if self.group_epoch > self.assignment_epoch:
            self.compute_target()
        record = self.members[member_id]
        before = record.reconciliation
        holder = self.holder
        after = next_member_state(
            before,
            target_epoch=self.assignment_epoch,
            target=self.target.get(member_id, frozenset()),
            partition_epoch=lambda tp: NO_EPOCH if holder.get(tp, member_id) == member_id else 0,
            owned=owned,
            subscribed_topics=record.topics,
        )
        if after is not before:
            self._hold(member_id, _held(before), _held(after))
            self.members[member_id] = replace(record, reconciliation=after)
        return after

    def compute_target(self) -> None:
        """Run the group's assignor on every member, from each member's previous target."""
        self.assignor_name = self._preferred_assignor()
        assignor = self.configured.get(self.assignor_name) or server_assignor(self.assignor_name)
        subscriptions = {
            m: Subscription(r.topics, owned_partitions=sorted(self.target.get(m, ())), group_instance_id=r.instance_id)
            for m, r in self.members.items()
        }
        result = assignor.assign(Cluster(self.partitions), subscriptions, coordinator=self.table)
        self.table.update(subscriptions)
        self.target = {m: frozenset(a.partitions) for m, a in result.items()}
        self.assignment_epoch = self.group_epoch

    def _preferred_assignor(self) -> str:
        """The most common ``group.remote.assignor`` among the members (ties by name), else the default."""
        votes = Counter(r.assignor for r in self.members.values() if r.assignor is not None)
        if not votes:
            return DEFAULT_ASSIGNOR
        return min(votes, key=lambda name: (-votes[name], name))

    def _hold(self, member_id: MemberId, was: frozenset[TopicPartition], now: frozenset[TopicPartition]) -> None:
        """Keep ``holder`` (the partitions' epochs) in step with a member's assigned and pending partitions."""
        for tp in was - now:
            if self.holder.get(tp) == member_id:
                del self.holder[tp]
        for tp in now:
            self.holder[tp] = member_id

    # --- views ------------------------------------------------------------------------

    def stable(self) -> bool:
        """No pending target computation and every member STABLE at the target epoch."""
        return self.group_epoch == self.assignment_epoch and all(
            r.reconciliation.state is MemberState.STABLE and r.reconciliation.member_epoch == self.assignment_epoch
            for r in self.members.values()
            if not r.left
        )


def _held(state: MemberAssignmentState) -> frozenset[TopicPartition]:
    return state.assigned | state.pending_revocation
