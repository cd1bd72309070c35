"""The sticky algorithm shared by StickyAssignor and CooperativeStickyAssignor.

Input: partition counts of the subscribed topics, subscriptions, and each member's
decoded claim (previously owned partitions and the generation they were owned in).
Output: per member the partitions it keeps from its claim and the partitions new to it,
and the set of every partition some member claims (what a cooperative round withholds).

The objective, a lexicographic order (each level only breaks ties of the ones above):

1. Valid: each partition of a subscribed topic goes to exactly one member subscribing
   to its topic; a member with no subscribed topic gets nothing.
2. As balanced as possible: the member loads form the most even vector any valid
   assignment reaches, the one with the smallest sum of squared loads (its multiset is
   unique). With identical subscriptions, loads differ by at most one; members with
   equal subscriptions always differ by at most one; and Kafka's ``isBalanced`` (no
   member holding a partition of topic T holds two or more more than another subscriber
   of T) follows, as a consequence, not the definition.
3. The fewest partitions taken from their current owner. The current owner of a
   partition is its claimer with the strictly highest generation that still subscribes
   to its topic (a tie at the highest generation means no owner). With racks, as in
   Kafka, an owned partition on none of its owner's racks counts as movable.
4. With racks: the fewest partitions placed on none of their member's racks; ties go to
   the fewest partitions taken from an owner that held them off its racks (so a
   cooperative follow-up round does not move them for nothing).
5. The most even per-topic spread: the sum over topics of (max - min) of each
   subscriber's count of that topic.
6. A deterministic tie-break: members by id, partitions by (topic, number); never
   insertion order or string hashing.

The builders (one per shape, chosen here and logged at DEBUG, as Kafka logs its choice):

* ``uniform``: every member subscribes to the same topics. Quotas ``N // M``
  and ``N // M + 1`` (extra slots to the largest owners), each member keeps its owned
  partitions up to its quota, trimming topic by topic so that the kept counts stay
  even; the rest is dealt topic by topic to the members with the fewest of that topic.
* ``general``: mixed subscriptions, Kafka's KIP-54 shape: keep every claim,
  place the rest least-loaded-first, then move partitions from the heaviest holder
  until the sticky condition holds, new ones (or a chain of two new ones) before
  revoking a kept one; then ``balance`` passes partitions along longer chains
  (between classes of members with equal subscriptions and groups of topics) until the
  loads are the most even vector: level 2, exact at every size.
* ``racks``: KIP-881 rack awareness shared by both builders.
* ``exchange`` (its search in ``cycles``): then, in small groups (members x partitions up to 400; 1,000
  with identical subscriptions and no racks), unless a certificate shows the builder's
  result optimal, an exact improvement phase: negative-cycle cancelling on the exchange
  graph for levels 2 to 4 (the squared loads as convex costs through a sink node, so
  which member of a class carries an extra partition is chosen for the fewest moves;
  level 5 through a convex proxy), and without racks swaps that even the spread. On the
  oracle corpus (tests/helpers/sticky_oracle.py) levels 2, 3 and 4 are then exact on every group
  and level 5 on all but 1%.

So cooperative-sticky settles in at most two rounds: the follow-up round's input already
holds a most even assignment that revokes nothing (the first round's target), and an
exact level 2-3 then revokes nothing again.

Kafka's worked examples, pinned. ``StickyAssignor``'s Javadoc, example 1: C0, C1, C2 on
t0..t3 (two partitions each), then C1 leaves; C0 and C2 keep all they had:

>>> from assignors import Cluster, CooperativeStickyAssignor, StickyAssignor, Subscription
>>> def show(result):
...     return {m: " ".join(map(str, a.partitions)) for m, a in result.items()}
>>> topics = ["t0", "t1", "t2", "t3"]
>>> cluster = Cluster(dict.fromkeys(topics, 2))
>>> first = StickyAssignor().assign(cluster, {m: Subscription(topics) for m in ("C0", "C1", "C2")})
>>> show(first)
{'C0': 't0-0 t1-1 t3-0', 'C1': 't0-1 t2-0 t3-1', 'C2': 't1-0 t2-1'}
>>> def owning(result, members, topics_of, generation=1):
...     return {m: Subscription(topics_of(m), owned_partitions=result[m].partitions if m in result else (),
...                             generation_id=generation) for m in members}
>>> show(StickyAssignor().assign(cluster, owning(first, ["C0", "C2"], lambda m: topics)))
{'C0': 't0-0 t1-1 t3-0 t2-0', 'C2': 't1-0 t2-1 t0-1 t3-1'}

Example 2: C0 on t0, C1 on t0 and t1, C2 on t0, t1 and t2 (1, 2 and 3 partitions); then
C0 leaves and C1 takes t0-0 without anything else moving:

>>> cluster = Cluster({"t0": 1, "t1": 2, "t2": 3})
>>> subscribed = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}.get
>>> first = StickyAssignor().assign(cluster, owning({}, ["C0", "C1", "C2"], subscribed, -1))
>>> show(first)
{'C0': 't0-0', 'C1': 't1-0 t1-1', 'C2': 't2-0 t2-1 t2-2'}
>>> show(StickyAssignor().assign(cluster, owning(first, ["C1", "C2"], subscribed)))
{'C1': 't1-0 t1-1 t0-0', 'C2': 't2-0 t2-1 t2-2'}

Kafka's ``AbstractStickyAssignorTest.testTopicBalanceAfterReassignment``: one member owns
both 12-partition topics; a second joins and each ends with 6 of each topic; two more
join (3 of each), then the first two leave (6 of each again):

>>> from collections import Counter
>>> def per_topic(result):
...     return {m: dict(Counter(tp.topic for tp in a.partitions)) for m, a in result.items()}
>>> both = ["t1", "t2"]
>>> cluster = Cluster({"t1": 12, "t2": 12})
>>> one = StickyAssignor().assign(cluster, owning({}, ["c1"], lambda m: both, -1))
>>> two = StickyAssignor().assign(cluster, owning(one, ["c1", "c2"], lambda m: both))
>>> per_topic(two)
{'c1': {'t1': 6, 't2': 6}, 'c2': {'t1': 6, 't2': 6}}
>>> four = StickyAssignor().assign(cluster, owning(two, ["c1", "c2", "c3", "c4"], lambda m: both, 2))
>>> per_topic(four)
{'c1': {'t1': 3, 't2': 3}, 'c2': {'t1': 3, 't2': 3}, 'c3': {'t1': 3, 't2': 3}, 'c4': {'t1': 3, 't2': 3}}
>>> per_topic(StickyAssignor().assign(cluster, owning(four, ["c3", "c4"], lambda m: both, 3)))
{'c3': {'t1': 6, 't2': 6}, 'c4': {'t1': 6, 't2': 6}}

``testAddRemoveTwoConsumersTwoTopics`` (topic1 with 3 partitions, topic2 with 4), with
cooperative-sticky: the two joiners get nothing that is still owned in the first round,
and after the follow-up round the lists are Kafka's. When the first two leave, the
survivors keep theirs and each topic splits 2:1 and 2:2, as in Kafka (which partition
of a tie goes where follows member id order here, not Java's HashMap order):

>>> both = ["topic1", "topic2"]
>>> cluster = Cluster({"topic1": 3, "topic2": 4})
>>> first = CooperativeStickyAssignor().assign(cluster, owning({}, ["c1", "c2"], lambda m: both, -1))
>>> show(first)
{'c1': 'topic1-0 topic1-2 topic2-1 topic2-3', 'c2': 'topic1-1 topic2-0 topic2-2'}
>>> four = ["c1", "c2", "c3", "c4"]
>>> round1 = CooperativeStickyAssignor().assign(cluster, owning(first, four, lambda m: both))
>>> show(round1)
{'c1': 'topic1-0 topic2-1', 'c2': 'topic1-1 topic2-0', 'c3': '', 'c4': ''}
>>> round2 = CooperativeStickyAssignor().assign(cluster, owning(round1, four, lambda m: both, 2))
>>> show(round2)
{'c1': 'topic1-0 topic2-1', 'c2': 'topic1-1 topic2-0', 'c3': 'topic1-2 topic2-3', 'c4': 'topic2-2'}
>>> show(CooperativeStickyAssignor().assign(cluster, owning(round2, ["c3", "c4"], lambda m: both, 3)))
{'c3': 'topic1-2 topic2-3 topic1-1 topic2-1', 'c4': 'topic2-2 topic1-0 topic2-0'}
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assignors._builtin.sticky.claims import Claim, State, StickyResult, resolve_claims
from assignors._builtin.sticky.exchange import improve, snapshot
from assignors._builtin.sticky.general import assign_general
from assignors._builtin.sticky.racks import RackInfo
from assignors._builtin.sticky.uniform import assign_identical

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.model import Cluster, MemberId, Subscription, Topic

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
    owned = snapshot(valid, partitions_per_topic, eligible_count=sum(1 for t in member_topics.values() if t))
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
            assign_general(partitions_per_topic, member_topics, eligible, racks, state)
        improve(partitions_per_topic, member_topics, eligible, owned, racks, state, identical)
        if state.unkept:
            state.settle()
    return StickyResult(state.kept, state.new, claimed)
