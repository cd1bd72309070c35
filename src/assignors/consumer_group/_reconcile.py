"""KIP-848's reconciliation as pure functions: epochs, member states, fencing.

The coordinator keeps a *target* assignment per member (what the assignor computed at
the target assignment epoch) and a *current* one (what the member was told it may own,
at its member epoch). Each heartbeat moves a member one step towards its target with
Kafka's ``CurrentAssignmentBuilder`` rules: a member first gives up what it must revoke
(and gets nothing new meanwhile), then takes the partitions that are free; a partition
goes to its new owner only once the old owner's heartbeat no longer lists it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Final

from assignors._core.errors import AssignorError
from assignors._core.model import TopicPartition

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "FencedMemberEpochError",
    "MemberAssignmentState",
    "MemberState",
    "check_member_epoch",
    "next_member_state",
    "static_leave",
    "static_rejoin",
]

LEAVE_GROUP_MEMBER_EPOCH: Final = -1
"""The member epoch a member sends to leave the group for good."""

LEAVE_GROUP_STATIC_MEMBER_EPOCH: Final = -2
"""The member epoch a static member sends to leave temporarily: it keeps its target until it returns or times out."""

NO_EPOCH: Final = -1
"""A partition's epoch when no member holds it (neither assigned nor pending revocation)."""


class MemberState(enum.Enum):
    """Kafka's ``MemberState`` of a consumer-protocol member."""

    STABLE = "stable"
    """At the target assignment epoch with everything of its target it can have."""
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    """Must revoke partitions first; keeps its old epoch and gets nothing new until its heartbeat shows them gone."""
    UNRELEASED_PARTITIONS = "unreleased_partitions"
    """At the target epoch, waiting for partitions of its target that other members still hold."""


class FencedMemberEpochError(AssignorError):
    """A heartbeat carries a member epoch the coordinator does not accept (Kafka's FENCED_MEMBER_EPOCH).

    Attributes:
        member: the member id.
        epoch: the epoch the member sent.
        expected: the member epoch the coordinator holds.
    """

    def __init__(self, message: str, *, member: str, epoch: int, expected: int) -> None:
        super().__init__(message)
        self.member = member
        self.epoch = epoch
        self.expected = expected


@dataclass(frozen=True, slots=True)
class MemberAssignmentState:
    """The coordinator's reconciliation record of one member (part of Kafka's ``ConsumerGroupMember``).

    Attributes:
        state: where the member is in reconciliation.
        member_epoch: the epoch of the assignment the member has converged to.
        previous_member_epoch: the member epoch before the last change (a lost response is retried with it).
        assigned: the partitions the member may own now.
        pending_revocation: partitions it was told to give up and has not confirmed yet.
    """

    state: MemberState = MemberState.STABLE
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: frozenset[TopicPartition] = field(default_factory=frozenset)
    pending_revocation: frozenset[TopicPartition] = field(default_factory=frozenset)

    def moved_to(
        self,
        state: MemberState,
        epoch: int,
        assigned: frozenset[TopicPartition],
        pending: frozenset[TopicPartition] = frozenset(),
    ) -> MemberAssignmentState:
        """Kafka's ``updateMemberEpoch``: the previous epoch becomes the current one's old value."""
        return MemberAssignmentState(state, epoch, self.member_epoch, assigned, pending)


def _owns_any(owned: Collection[TopicPartition] | None, partitions: Collection[TopicPartition]) -> bool:
    """Whether the heartbeat still lists one of ``partitions`` (a heartbeat without the list counts as yes)."""
    if owned is None:
        return True
    return not set(partitions).isdisjoint(owned)


def next_member_state(  # noqa: PLR0913 - Kafka's CurrentAssignmentBuilder inputs, keyword-only
    member: MemberAssignmentState,
    *,
    target_epoch: int,
    target: Iterable[TopicPartition],
    partition_epoch: Callable[[TopicPartition], int],
    owned: Collection[TopicPartition] | None = None,
    subscribed_topics: Collection[str] | None = None,
    subscription_changed: bool = False,
) -> MemberAssignmentState:
    """One step of Kafka's ``CurrentAssignmentBuilder``: the member's state after this heartbeat.

    Args:
        member: the member's record before the heartbeat.
        target_epoch: the group's target assignment epoch.
        target: the member's target assignment at that epoch.
        partition_epoch: the member epoch of whoever holds a partition (assigned or pending
            revocation), or -1 when nobody does.
        owned: the partitions the heartbeat lists as owned; None when it does not list them.
        subscribed_topics: when given, target partitions of other topics are ignored.
        subscription_changed: the member's subscription changed with this heartbeat: a member
            with nothing else to do (waiting for a revocation, or stable at the target epoch)
            still gives up the partitions of topics it left (KAFKA-19431, PR #20055, merged in
            June 2025, so Kafka 4.1 or 4.2; before it, such partitions waited for the next target).

    Returns:
        ``member`` itself when nothing can change, else the new record.
    """
    waiting = member.state is MemberState.UNREVOKED_PARTITIONS and _owns_any(owned, member.pending_revocation)
    settled = member.state is MemberState.STABLE and member.member_epoch == target_epoch
    if (waiting or settled) and subscription_changed and subscribed_topics is not None:
        return _drop_unsubscribed(member, set(subscribed_topics), owned)
    if waiting:
        return member  # still waiting for the revocation
    if settled:
        return member
    wanted = frozenset(target)
    if subscribed_topics is not None:
        topics = set(subscribed_topics)
        wanted = frozenset(tp for tp in wanted if tp.topic in topics)
    keep = member.assigned & wanted
    revoke = member.assigned - keep
    missing = wanted - keep
    # Held by someone else; a partition this member itself is still revoking does not count (Kafka 3.9+).
    unreleased = {tp for tp in missing if partition_epoch(tp) != NO_EPOCH and tp not in member.pending_revocation}
    new = missing - unreleased
    if revoke and _owns_any(owned, revoke):
        return member.moved_to(MemberState.UNREVOKED_PARTITIONS, member.member_epoch, keep, revoke)
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.moved_to(state, target_epoch, keep | new)


def _drop_unsubscribed(
    member: MemberAssignmentState, topics: set[str], owned: Collection[TopicPartition] | None
) -> MemberAssignmentState:
    """Kafka's ``updateCurrentAssignment``: partitions of topics the member left go pending revocation.

    The member epoch stays; the previous epoch is updated, as in every transition.
    """
    stale = frozenset(tp for tp in member.assigned if tp.topic not in topics)
    if not stale:
        return member
    pending = member.pending_revocation | stale
    if _owns_any(owned, pending):
        return member.moved_to(MemberState.UNREVOKED_PARTITIONS, member.member_epoch, member.assigned - stale, pending)
    return member.moved_to(member.state, member.member_epoch, member.assigned - stale)


def check_member_epoch(
    member_id: str,
    member: MemberAssignmentState,
    received_epoch: int,
    owned: Collection[TopicPartition] | None,
) -> None:
    """Kafka's heartbeat fencing (``throwIfMemberEpochIsInvalid``).

    A heartbeat ahead of the member epoch is fenced. One behind is accepted only when it
    carries the previous epoch (the member missed the last response) and lists nothing
    outside its current assignment; otherwise it is fenced too.

    Raises:
        FencedMemberEpochError: the member must drop its partitions and rejoin with epoch 0.
    """
    expected = member.member_epoch
    if received_epoch == expected:
        return
    if (
        received_epoch < expected
        and received_epoch == member.previous_member_epoch
        and owned is not None
        and set(owned) <= member.assigned
    ):
        return
    msg = f"member {member_id!r} sent epoch {received_epoch} but its member epoch is {expected}"
    raise FencedMemberEpochError(msg, member=member_id, epoch=received_epoch, expected=expected)


def joined(epoch: int = 0) -> MemberAssignmentState:
    """A new member's record: nothing assigned, epoch 0, STABLE (reconciled on its first heartbeat)."""
    return MemberAssignmentState(MemberState.STABLE, epoch, epoch)


def static_leave(member: MemberAssignmentState) -> MemberAssignmentState:
    """A static member's record after it leaves with epoch -2 (``LEAVE_GROUP_STATIC_MEMBER_EPOCH``).

    Kafka writes member epoch -2 and clears the pending revocation; the member stays in the
    group with its assignment and its target, and the group epoch does not move: nothing is
    reassigned until it comes back or its session times out (then it is fenced: removed, and
    the group epoch bumped).

    >>> from assignors import TopicPartition
    >>> left = static_leave(MemberAssignmentState(MemberState.STABLE, 7, 6, frozenset({TopicPartition("t", 0)})))
    >>> left.member_epoch, sorted(left.assigned)
    (-2, [TopicPartition(topic='t', partition=0)])
    """
    return replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation=frozenset())


def static_rejoin(member: MemberAssignmentState) -> MemberAssignmentState:
    """The record of a static member back with a new member id and epoch 0 (Kafka's ``replaceMember``).

    The new member inherits the old one's assignment (and, on the coordinator, its target and
    subscription) at epoch 0; its first heartbeat reconciles it to the target epoch without
    moving anything, since the subscription, hence the group epoch, did not change.
    """
    return replace(member, member_epoch=0, previous_member_epoch=0, pending_revocation=frozenset())
