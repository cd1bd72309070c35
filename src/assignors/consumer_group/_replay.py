"""One snapshot change of a consumer-protocol group, for the evaluation: a pure function."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from assignors._core.errors import UnknownAssignorError
from assignors._core.model import Assignment, Subscription
from assignors.consumer_group._common import ServerAssignor
from assignors.consumer_group._range import RangeAssignor
from assignors.consumer_group._reconcile import MemberAssignmentState, MemberState, next_member_state
from assignors.consumer_group._uniform import UniformAssignor

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from assignors._core.model import Cluster, MemberId, TopicPartition
    from assignors.consumer_group._java_order import CoordinatorTable

__all__ = [
    "STRATEGIES",
    "ReplayStep",
    "TargetRebalance",
    "rebalance_target",
    "replay_step",
    "server_assignor",
    "server_strategy",
]

STRATEGIES: Final[dict[str, Callable[[], ServerAssignor]]] = {
    "uniform": UniformAssignor,
    "consumer-range": RangeAssignor,
}
"""The evaluation's names of the server assignors (``consumer-range`` tells the server range from the classic one)."""


_VERSIONED: Final[dict[str, type[UniformAssignor | RangeAssignor]]] = {
    "uniform": UniformAssignor,
    "consumer-range": RangeAssignor,
}


def server_assignor(name: str | ServerAssignor, *, kafka_version: str | None = None) -> ServerAssignor:
    """A fresh server assignor for a strategy name (``"uniform"``, ``"consumer-range"``), or ``name`` itself.

    ``kafka_version`` is the broker's (default :data:`~assignors.consumer_group.KAFKA_VERSION`): the assignor as
    that broker runs it (an assignor object given as ``name`` keeps its own).

    Raises:
        UnknownAssignorError: not a server strategy; the message lists them.
        ConfigurationError: ``kafka_version`` is not a version number, or one the strategy is not modelled for.
    """
    if isinstance(name, ServerAssignor):
        return name
    factory = STRATEGIES.get(name) if isinstance(name, str) else None
    if factory is None:
        msg = f"unknown server assignor strategy={name!r}; the server strategies are {', '.join(map(repr, STRATEGIES))}"
        raise UnknownAssignorError(msg)
    if kafka_version is not None and name in _VERSIONED:
        return _VERSIONED[name](kafka_version=kafka_version)
    return factory()


def server_strategy(assignor: ServerAssignor | type[ServerAssignor]) -> str:
    """The strategy name of a server assignor object or class (``"uniform"`` or ``"consumer-range"``)."""
    return "consumer-range" if assignor.name == RangeAssignor.name else assignor.name


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """What one target computation does to a consumer-protocol group.

    Attributes:
        target: the new target assignment, one entry per member.
        revoked: partitions that members present before and after must give up (their
            previous target minus their new one, unsubscribed topics included).
        moved: partitions whose previous owner is still present and that another member
            gets (the classic strategies' ``moved``).
        heartbeats: heartbeat rounds until every member is STABLE at the new target epoch:
            1 when nobody revokes anything; revokers acknowledge at once, and the members
            waiting for their partitions take them at their next heartbeat.
        assign_seconds: how long the assignor took (wall clock; the reconciliation not included).
    """

    target: dict[MemberId, Assignment]
    revoked: int
    moved: int
    heartbeats: int
    assign_seconds: float = 0.0


def replay_step(
    previous_target: Mapping[MemberId, Assignment] | None,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    *,
    assignor: str | ServerAssignor = "uniform",
    coordinator: CoordinatorTable | None = None,
) -> ReplayStep:
    """One snapshot change: the new target from the previous one, and what converging to it costs.

    Args:
        previous_target: each member's target before the change (None: a new group). Members
            absent from ``subscriptions`` have left: their partitions are free.
        cluster: topic metadata after the change.
        subscriptions: the members after the change; their ``owned_partitions`` are ignored
            and replaced by their previous target.
        assignor: a server strategy name or a server assignor.
        coordinator: the group's members as the coordinator holds them before the change, in the order they
            came: the order in which the coordinator hands the members to the assignor
            (:meth:`ServerAssignor.assign`); updated to the members after the change. None: a table holding
            exactly these members, added in Java's string order, the result a function of this step's arguments.

    Example: two members split ``t`` (4 partitions); a third joins and takes one from each.

    >>> from assignors import Cluster, Subscription
    >>> first = replay_step(None, Cluster({"t": 4}), {"a": Subscription(["t"]), "b": Subscription(["t"])})
    >>> first.revoked, first.moved, first.heartbeats
    (0, 0, 1)
    >>> subs = {m: Subscription(["t"]) for m in "abc"}
    >>> step = replay_step(first.target, Cluster({"t": 4}), subs)
    >>> {m: [str(tp) for tp in a.partitions] for m, a in step.target.items()}
    {'a': ['t-0', 't-1'], 'b': ['t-2'], 'c': ['t-3']}
    >>> step.revoked, step.moved, step.heartbeats
    (1, 1, 2)
    """
    previous = dict(previous_target or {})
    empty = Assignment(())
    with_targets = {
        member: Subscription(
            s.topics,
            owned_partitions=previous.get(member, empty).partitions,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
        for member, s in subscriptions.items()
    }
    chosen = server_assignor(assignor)
    started = time.perf_counter()
    target = chosen.assign(cluster, with_targets, coordinator=coordinator)
    seconds = time.perf_counter() - started
    if coordinator is not None:
        coordinator.update(subscriptions)
    # Members whose target is their previous one stay as they are; only the others reconcile.
    changed = [m for m, a in target.items() if not _same(previous.get(m, empty).partitions, a.partitions)]
    gained: set[TopicPartition] = set()
    gone: list[TopicPartition] = []
    for member in changed:
        before, after = set(previous.get(member, empty).partitions), set(target[member].partitions)
        gained |= after - before
        gone.extend(before - after)
    moved = sum(1 for tp in gone if tp in gained)
    # Nobody revokes: every partition a member wants is its own or free, so one heartbeat each settles the group.
    heartbeats = _heartbeats(previous, target, changed) if gone else 1
    return ReplayStep(target, len(gone), moved, heartbeats, seconds)


@dataclass(frozen=True, slots=True)
class TargetRebalance:
    """One snapshot change of a consumer-protocol group as the evaluation records it.

    The counterpart of :class:`assignors.rebalance.RebalanceResult` for the protocol
    ``CONSUMER``: no JoinGroup/SyncGroup rounds, one target computation, then heartbeats.

    Attributes:
        step: the new target and what converging to it costs.
        generation: the group epoch after the change (1 for a new group).
    """

    step: ReplayStep
    generation: int

    @property
    def assignment(self) -> dict[MemberId, Assignment]:
        """The new target, one entry per member."""
        return self.step.target

    @property
    def heartbeats(self) -> int:
        """Heartbeat rounds until every member is stable (the evaluation's ``rounds``)."""
        return self.step.heartbeats

    @property
    def assign_seconds(self) -> float:
        return self.step.assign_seconds


def rebalance_target(  # noqa: PLR0913 - rebalance()'s arguments, and the coordinator's table
    assignor: str | ServerAssignor,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    previous_target: Mapping[MemberId, Sequence[TopicPartition]],
    *,
    generation: int,
    coordinator: CoordinatorTable | None = None,
) -> TargetRebalance:
    """:func:`replay_step` with :func:`assignors.rebalance.rebalance`'s arguments, for the evaluation's replay.

    Args:
        assignor: a server strategy name (``"uniform"``, ``"consumer-range"``) or a server assignor.
        cluster: topic metadata after the change.
        subscriptions: the members after the change.
        previous_target: each member's target before the change, by its member id now (a
            static member back under a new member id inherits its target); absent: none.
        generation: the group epoch before the change (-1 or 0 for a new group).
        coordinator: the group's members as the coordinator holds them (:func:`replay_step`); updated.

    >>> from assignors import Cluster, Subscription, TopicPartition
    >>> subs = {m: Subscription(["t"]) for m in "ab"}
    >>> first = rebalance_target("uniform", Cluster({"t": 2}), subs, {}, generation=-1)
    >>> first.generation, first.heartbeats, [str(tp) for tp in first.assignment["b"].partitions]
    (1, 1, ['t-1'])
    """
    previous = {member: Assignment(partitions) for member, partitions in previous_target.items()}
    step = replay_step(previous, cluster, subscriptions, assignor=assignor, coordinator=coordinator)
    return TargetRebalance(step, max(generation, 0) + 1)


def _same(before: tuple[TopicPartition, ...], after: tuple[TopicPartition, ...]) -> bool:
    return before == after or (len(before) == len(after) and set(before) == set(after))


def _heartbeats(
    previous: Mapping[MemberId, Assignment], target: Mapping[MemberId, Assignment], changed: list[MemberId]
) -> int:
    """Rounds of heartbeats until every member is STABLE, with Kafka's reconciliation steps.

    In a round every member heartbeats once; a member told to revoke acknowledges at once
    (the Java client's heartbeat right after its callbacks), after the round's other
    heartbeats, so what it frees goes to the waiting members in the next round. Members
    whose target did not change are stable after their first heartbeat and hold nothing
    another member wants, so only ``changed`` members are followed.
    """
    if not changed:
        return 1
    group = _Group(previous, target, changed)
    for rounds in range(1, len(changed) + 3):
        acks = [m for m in sorted(changed) if group.heartbeat(m) is MemberState.UNREVOKED_PARTITIONS]
        for member in acks:
            group.heartbeat(member)
        if group.stable():
            return rounds
    msg = "reconciliation did not converge"  # pragma: no cover - each round frees what the last one revoked
    raise RuntimeError(msg)


class _Group:
    """The coordinator's records during one convergence, with who holds each partition."""

    EPOCH = 1

    def __init__(
        self, previous: Mapping[MemberId, Assignment], target: Mapping[MemberId, Assignment], members: list[MemberId]
    ) -> None:
        self.target = {m: frozenset(target[m].partitions) for m in members}
        self.states: dict[MemberId, MemberAssignmentState] = {}
        self.holder: dict[TopicPartition, MemberId] = {}
        for member in members:
            held = frozenset(previous[member].partitions) if member in previous else frozenset()
            self.states[member] = MemberAssignmentState(MemberState.STABLE, 0, 0, held)
            self.holder.update(dict.fromkeys(held, member))

    def heartbeat(self, member: MemberId) -> MemberState:
        """The member heartbeats listing what it may own; returns its new state."""
        before = self.states[member]
        holder = self.holder
        after = next_member_state(
            before,
            target_epoch=self.EPOCH,
            target=self.target[member],
            partition_epoch=lambda tp: 0 if holder.get(tp, member) != member else -1,
            owned=before.assigned,
        )
        if after is not before:
            was, now = before.assigned | before.pending_revocation, after.assigned | after.pending_revocation
            for tp in was - now:
                del holder[tp]
            holder.update(dict.fromkeys(now - was, member))
            self.states[member] = after
        return after.state

    def stable(self) -> bool:
        return all(s.state is MemberState.STABLE and s.member_epoch == self.EPOCH for s in self.states.values())
