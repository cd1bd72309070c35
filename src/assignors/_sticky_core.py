"""The sticky algorithm shared by StickyAssignor and CooperativeStickyAssignor.

Input: partition counts of the subscribed topics, subscriptions, and each member's
decoded claim (previously owned partitions and the generation they were owned in).
Output: per member the partitions it keeps from its claim and the partitions new to it,
and the set of every partition some member claims (what a cooperative round withholds).

The objective, a lexicographic order (each level only breaks ties of the ones above):

1. Valid: each partition of a subscribed topic goes to exactly one member subscribing
   to its topic; a member with no subscribed topic gets nothing.
2. Balanced. Identical subscriptions: member loads differ by at most one. Mixed
   subscriptions: the sticky condition holds (no member holding a partition of topic T
   holds two or more partitions more than another subscriber of T).
3. The fewest partitions taken from their current owner. The current owner of a
   partition is its claimer with the strictly highest generation that still subscribes
   to its topic (a tie at the highest generation means no owner). With racks, as in
   Kafka, an owned partition on none of its owner's racks counts as movable.
4. With racks: the fewest partitions placed on none of their member's racks.
5. The most even per-topic spread: the sum over topics of (max - min) of each
   subscriber's count of that topic.
6. A deterministic tie-break: members by id, partitions by (topic, number); never
   insertion order or a hash seed.

The builders (one per shape, chosen here and logged at DEBUG, as Kafka logs its choice):

* ``_sticky_uniform``: every member subscribes to the same topics. Quotas ``N // M``
  and ``N // M + 1`` (extra slots to the largest owners), each member keeps its owned
  partitions up to its quota, trimming topic by topic so that the kept counts stay
  even; the rest is dealt topic by topic to the members with the fewest of that topic.
* ``_sticky_general``: mixed subscriptions, Kafka's KIP-54 shape: keep every claim,
  place the rest least-loaded-first, then move partitions from the heaviest holder
  until the sticky condition holds.
* ``_sticky_racks``: KIP-881 rack awareness shared by both builders.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assignors._sticky_claims import Claim, State, StickyResult, resolve_claims
from assignors._sticky_general import assign_general
from assignors._sticky_racks import RackInfo
from assignors._sticky_uniform import assign_identical

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._model import Cluster, MemberId, Subscription, Topic

logger = logging.getLogger(__name__)

__all__ = ["Claim", "StickyResult", "sticky_assign"]


def sticky_assign(
    cluster: Cluster,
    partitions_per_topic: Mapping[Topic, int],
    subscriptions: Mapping[MemberId, Subscription],
    claims: Mapping[MemberId, Claim],
) -> StickyResult:
    """Assign stickily: the best assignment in the order of the module docstring."""
    by_topic_list: dict[tuple[Topic, ...], frozenset[Topic]] = {}
    member_topics: dict[MemberId, frozenset[Topic]] = {}
    for member, subscription in subscriptions.items():
        topics = by_topic_list.get(subscription.topics)
        if topics is None:
            topics = frozenset(partitions_per_topic.keys() & subscription.topics)
            by_topic_list[subscription.topics] = topics
        member_topics[member] = topics
    valid, claimed, taken = resolve_claims(partitions_per_topic, member_topics, claims)
    eligible = sorted(m for m, topics in member_topics.items() if topics)
    kept = {m: valid.get(m, []) for m in subscriptions}
    state = State(dict.fromkeys(eligible, 0), kept, {m: [] for m in subscriptions})
    if eligible:
        racks = RackInfo.build(cluster, partitions_per_topic, subscriptions, eligible)
        identical = len({member_topics[m] for m in eligible}) == 1
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "sticky: %d members, %s subscriptions, rack-aware %s",
                len(eligible),
                "identical" if identical else "mixed",
                racks.enabled,
            )
        if identical:
            assign_identical(partitions_per_topic, eligible, taken, racks, state)
        else:
            assign_general(partitions_per_topic, member_topics, eligible, taken, racks, state)
        if state.unkept:
            state.settle()
    return StickyResult(state.kept, state.new, claimed)
