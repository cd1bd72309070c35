"""One rebalance of a group with one assignor, round by round: what the Spark replay and ``assignors assign`` run.

Every member shares the one assignor instance, which is told each member's last assignment before it writes that
member's user data, as the member's own instance would have been (:func:`~assignors.rebalance.run_rounds` with
``shared_instance``).

>>> from assignors import Cluster, CooperativeStickyAssignor, Subscription, TopicPartition as TP
>>> subs = {m: Subscription(["t"]) for m in ("a", "b")}
>>> owned = {"a": [TP("t", 0), TP("t", 1), TP("t", 2), TP("t", 3)]}
>>> result = rebalance(CooperativeStickyAssignor(), Cluster({"t": 4}), subs, owned, generation=1)
>>> len(result.rounds), result.generation
(2, 3)
>>> [(r.revoked["a"], r.added["b"]) for r in result.rounds]  # doctest: +NORMALIZE_WHITESPACE
[((TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3)), ()),
 ((), (TopicPartition(topic='t', partition=2), TopicPartition(topic='t', partition=3)))]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors._classic.rounds import ReusingMember, Round, RoundMember, run_rounds
from assignors._classic.rules import preferred_protocol
from assignors._core.errors import ConfigurationError, InvalidSubscriptionError
from assignors._core.model import DEFAULT_GENERATION, Assignment, RebalanceProtocol, unchecked_assignment

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assignors._core.interface import ConsumerPartitionAssignor
    from assignors._core.model import Cluster, MemberId, Subscription, TopicPartition

__all__ = ["RebalanceResult", "rebalance"]


@dataclass(frozen=True, slots=True)
class RebalanceResult:
    """The rounds of one rebalance and where it ended."""

    protocol: RebalanceProtocol
    rounds: tuple[Round, ...]

    @property
    def generation(self) -> int:
        return self.rounds[-1].generation

    @property
    def assignment(self) -> dict[MemberId, Assignment]:
        return self.rounds[-1].assignment

    @property
    def assign_seconds(self) -> float:
        return sum(r.assign_seconds for r in self.rounds)


def rebalance(  # noqa: PLR0913 - keyword-only knobs
    assignor: ConsumerPartitionAssignor,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    owned: Mapping[MemberId, Sequence[TopicPartition] | Assignment],
    *,
    generation: int,
    protocol: RebalanceProtocol | None = None,
    max_rounds: int = 10,
) -> RebalanceResult:
    """Run one rebalance of a group with ``assignor`` until it settles (:func:`run_round`).

    Args:
        assignor: the group's selected assignor. It stands for every member's own instance:
            before it writes a member's user data it is told that member's last assignment
            (``owned``) and generation, as the member's instance would have been.
        cluster: topic metadata.
        subscriptions: each member's subscription (topics, rack, instance id); given user data
            is sent in the first round instead of the assignor's. Its ``owned_partitions`` and
            ``generation_id`` are replaced by what the member reports: under EAGER it owns
            nothing when it joins (it revoked everything), under COOPERATIVE what ``owned`` says.
        owned: what each member owned before the rebalance, at ``generation`` (absent: a new
            member, generation -1): its partitions, or the :class:`~assignors.Assignment` it
            received (the replay passes the last round's, which need no second check).
        generation: the group's current generation (-1 for a new group); every round creates
            the next one.
        protocol: EAGER or COOPERATIVE; by default the assignor's preferred one.
        max_rounds: a rebalance still rejoining after this many rounds raises.

    Raises:
        ConfigurationError: the assignor does not support ``protocol``.
        InvalidSubscriptionError: no member.
        AssignorError: from the assignor; ``CooperativeViolationError`` when an assignor that is
            not built in hands over a partition another member still owns.
    """
    chosen = protocol if protocol is not None else preferred_protocol(assignor)
    if chosen not in assignor.supported_protocols:
        msg = f"assignor {assignor.name!r} does not support the {chosen.name} protocol"
        raise ConfigurationError(msg)
    assignors = {assignor.name: assignor}  # one dict for all: the vote is unanimous at a glance
    members: list[RoundMember] = []
    for member, subscription in subscriptions.items():
        had = owned.get(member, ())
        received = None
        if isinstance(had, Assignment):
            received = had if had.user_data is None else unchecked_assignment(had.partitions)
            had = had.partitions
        members.append(
            ReusingMember(
                member_id=member,
                topics=subscription.topics,
                assignors=assignors,
                protocol=chosen,
                owned=tuple(had),
                generation=generation if member in owned and generation >= 0 else DEFAULT_GENERATION,
                rack=subscription.rack_id,
                instance_id=subscription.group_instance_id,
                user_data=subscription.user_data,
                subscription=subscription,
                received=received,
            )
        )
    if not members:
        msg = "a rebalance needs at least one member"
        raise InvalidSubscriptionError(msg)
    rounds = run_rounds(members, cluster, generation, wire=False, shared_instance=True, max_rounds=max_rounds)
    return RebalanceResult(chosen, rounds)
