"""StickyAssignor (EAGER) and CooperativeStickyAssignor (COOPERATIVE, EAGER) over one sticky core."""

from __future__ import annotations

import abc
import logging
from typing import TYPE_CHECKING

from assignors._builtin.sticky.core import Claim, StickyResult, sticky_assign
from assignors._builtin.sticky.uniform import assign_single_claims, plain_identical, round_robin
from assignors._core.base import AbstractPartitionAssignor
from assignors._core.errors import ProtocolError
from assignors._core.model import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    DEFAULT_GENERATION,
    STICKY_ASSIGNOR_NAME,
    Assignment,
    RebalanceProtocol,
)
from assignors._wire.consumer_protocol import (
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_sticky_user_data,
)

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from assignors._core.model import Cluster, MemberId, Subscription, Topic, TopicPartition

__all__ = ["CooperativeStickyAssignor", "StickyAssignor"]

logger = logging.getLogger(__name__)


class _StickyBase(AbstractPartitionAssignor):
    """Per-instance state (the last assignment and its generation) and the shared core."""

    def __init__(self) -> None:
        self._partitions: tuple[TopicPartition, ...] = ()
        self._generation = DEFAULT_GENERATION
        self._assigned_once = False

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        """Remember this member's assignment and generation for its next subscription."""
        self._partitions = assignment.partitions
        self._generation = generation_id
        self._assigned_once = True

    @abc.abstractmethod
    def _claims(self, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Claim]:
        """What each member owned, and in which generation, as this assignor reads it (absent: owned nothing)."""

    def _finish(self, result: StickyResult) -> dict[MemberId, list[TopicPartition]]:
        """The protocol's last step on the sticky result (EAGER: none)."""
        return result.assignment()

    def _assign_partitions(
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
    ) -> Mapping[MemberId, Sequence[TopicPartition]]:
        claims = self._claims(subscriptions)
        members = plain_identical(cluster, partitions_per_topic, subscriptions)
        if members is not None:  # the common shapes, on short paths that give what sticky_assign gives
            if not claims:  # a fresh group: nothing to keep, nothing to withhold
                return round_robin(cluster, partitions_per_topic, members)
            result = assign_single_claims(partitions_per_topic, members, claims)
            if result is not None:
                return self._finish(result)
        return self._finish(sticky_assign(cluster, partitions_per_topic, subscriptions, claims))


class StickyAssignor(_StickyBase):
    """Balanced like round robin, but keeps partitions with their owners across rebalances (EAGER).

    Ownership comes from each member's user data, as a Java ``StickyAssignor`` member
    sends it (V1: previous assignment and generation; V0: no generation; kafka-python's
    version-prefixed form too); a member without user data is read from its
    ``owned_partitions`` and ``generation_id``. Undecodable user data means no history.
    The member totals are as balanced as any valid assignment can be (the smallest sum
    of squared loads: with identical subscriptions they differ by at most one), and among
    those the fewest partitions leave their owners (exact with identical subscriptions and
    no racks at any size, and in small groups).

    Runtime complexity: ``O(P + M log M)`` with identical subscriptions and no racks.

    >>> from assignors import Cluster, Subscription, TopicPartition as TP
    >>> topics = ["t1", "t2", "t3", "t4"]
    >>> owned = {"c2": [TP("t1", 1), TP("t3", 0), TP("t4", 1)], "c3": [TP("t2", 0), TP("t3", 1)]}
    >>> subs = {m: Subscription(topics, owned_partitions=p, generation_id=1) for m, p in owned.items()}
    >>> result = StickyAssignor().assign(Cluster(dict.fromkeys(topics, 2)), subs)
    >>> {m: [str(tp) for tp in a.partitions] for m, a in result.items()}
    {'c2': ['t1-1', 't3-0', 't4-1', 't2-1'], 'c3': ['t2-0', 't3-1', 't1-0', 't4-0']}
    """

    name = STICKY_ASSIGNOR_NAME

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        """V1 user data with the last assignment and generation (None before the first assignment)."""
        if not self._assigned_once:
            return None
        return encode_sticky_user_data(self._partitions, self._generation)

    def _claims(self, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Claim]:
        claims: dict[MemberId, Claim] = {}
        for member, subscription in subscriptions.items():
            data = subscription.user_data
            if not data:
                if subscription.owned_partitions:
                    claims[member] = Claim(subscription.owned_partitions, subscription.generation_id)
                continue
            try:
                decoded = decode_sticky_user_data(data)
            except ProtocolError as error:
                logger.warning("member %r: undecodable sticky user data, treated as no history: %s", member, error)
                continue
            generation = decoded.generation
            if generation is None:  # V0 carries no generation; use the subscription's own, if any
                generation = subscription.generation_id
            if decoded.partitions:
                claims[member] = Claim(decoded.partitions, generation)
        return claims


class CooperativeStickyAssignor(_StickyBase):
    """The sticky assignment, made safe for the COOPERATIVE protocol (KIP-429).

    Ownership is each member's ``owned_partitions``, in the generation of its
    ``generation_id`` (else of its 4-byte user data). A partition that would move from
    one live member to another is left out of this round: its owner revokes it, rejoins,
    and the follow-up rebalance assigns it. Partitions two members claimed in one
    generation are left out too. No partition is ever owned by two members at once.

    >>> from assignors import Cluster, Subscription, TopicPartition as TP
    >>> subs = {
    ...     "c1": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)], generation_id=1),
    ...     "c2": Subscription(["t"], owned_partitions=[TP("t", 2)], generation_id=1),
    ...     "c3": Subscription(["t"]),
    ... }
    >>> first = CooperativeStickyAssignor().assign(Cluster({"t": 3}), subs)
    >>> {m: [str(tp) for tp in a.partitions] for m, a in first.items()}
    {'c1': ['t-0'], 'c2': ['t-2'], 'c3': []}
    >>> subs["c1"] = Subscription(["t"], owned_partitions=[TP("t", 0)], generation_id=2)
    >>> subs["c2"] = Subscription(["t"], owned_partitions=[TP("t", 2)], generation_id=2)
    >>> second = CooperativeStickyAssignor().assign(Cluster({"t": 3}), subs)
    >>> {m: [str(tp) for tp in a.partitions] for m, a in second.items()}
    {'c1': ['t-0'], 'c2': ['t-2'], 'c3': ['t-1']}
    """

    name = COOPERATIVE_STICKY_ASSIGNOR_NAME
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        """The generation of the last assignment, 4 bytes (-1 before the first)."""
        return encode_cooperative_user_data(self._generation)

    def _claims(self, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Claim]:
        claims: dict[MemberId, Claim] = {}
        for member, subscription in subscriptions.items():
            generation = subscription.generation_id
            if generation == DEFAULT_GENERATION and subscription.user_data:
                try:
                    generation = decode_cooperative_user_data(subscription.user_data)
                except ProtocolError as error:
                    logger.warning("member %r: undecodable cooperative user data: %s", member, error)
            if subscription.owned_partitions:
                claims[member] = Claim(subscription.owned_partitions, generation)
        return claims

    def _finish(self, result: StickyResult) -> dict[MemberId, list[TopicPartition]]:
        # A partition may go to a member that does not own it yet only when no other live
        # member still owns it (this includes partitions claimed twice in one generation).
        claimed = result.claimed
        if not claimed:
            return result.assignment()
        new = result.new
        return {member: kept + [tp for tp in new[member] if tp not in claimed] for member, kept in result.kept.items()}
