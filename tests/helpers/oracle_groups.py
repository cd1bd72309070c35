"""Hypothesis strategies for the differential tests against Kafka's Java: groups of every shape we claim.

On top of :func:`assignors.testing.groups` (mixed or identical subscriptions, racks on members and replicas, static
members, owned partitions with generations including stale and double claims, topics without metadata, more
members than partitions): topics that shrink or vanish after the members claimed their partitions, sticky user
data V0 and V1, cooperative user data.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from assignors import Cluster, Subscription, TopicPartition
from assignors.consumer_protocol import decode_sticky_user_data, encode_cooperative_user_data, encode_sticky_user_data
from assignors.testing import Group, groups

if TYPE_CHECKING:
    from collections.abc import Mapping

EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES", "300"))
"""Examples per differential property: a few hundred in `make test`; ORACLE_EXAMPLES=5000 for a deep run."""

__all__ = [
    "EXAMPLES",
    "as_cooperative",
    "changed_topics",
    "classic_groups",
    "cooperative_groups",
    "server_groups",
    "sticky_groups",
]


@st.composite
def changed_topics(draw: st.DrawFn, group: Group) -> Group:
    """``group`` after some topics shrank or vanished (the members' claims stay as they were)."""
    counts: dict[str, int] = {}
    for topic, count in group.cluster.partitions_per_topic.items():
        fate = draw(st.sampled_from(("keep", "keep", "shrink", "vanish")))
        if fate == "vanish":
            continue
        counts[topic] = draw(st.integers(0, count)) if fate == "shrink" else count
    racks = {tp: racks for tp, racks in group.cluster.partition_racks.items() if tp.partition < counts.get(tp.topic, 0)}
    return replace(group, cluster=Cluster(counts, partition_racks=racks))


@st.composite
def classic_groups(
    draw: st.DrawFn,
    *,
    max_members: int = 8,
    owned: bool | None = None,
    identical: bool | None = None,
    racks: bool | None = None,
) -> Group:
    """Any group: claims drawn or not, topics changed or not; ``identical`` as :func:`assignors.testing.groups`."""
    with_owned = draw(st.booleans()) if owned is None else owned
    group = draw(
        groups(
            max_members=max_members, max_topics=4, max_partitions=10, owned=with_owned, identical=identical, racks=racks
        )
    )
    return draw(changed_topics(group)) if draw(st.booleans()) else group


@st.composite
def sticky_groups(
    draw: st.DrawFn, *, max_members: int = 8, identical: bool | None = None, racks: bool | None = None
) -> Group:
    """What a ``StickyAssignor`` (EAGER) leader receives: each claim in the member's user data, V1 or V0.

    An EAGER member revoked everything before it rejoined, so its ``owned_partitions`` are empty; its
    subscription still carries the generation.
    """
    group = draw(classic_groups(max_members=max_members, identical=identical, racks=racks))
    subscriptions: dict[str, Subscription] = {}
    for member, s in group.subscriptions.items():
        data = None
        if bool(s.owned_partitions) or draw(st.booleans()):
            version = draw(st.sampled_from((0, 1)))
            data = encode_sticky_user_data(s.owned_partitions, s.generation_id if version == 1 else None)
        subscriptions[member] = Subscription(
            s.topics,
            user_data=data,
            generation_id=s.generation_id,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
    return replace(group, subscriptions=subscriptions)


@st.composite
def cooperative_groups(draw: st.DrawFn, *, max_members: int = 8, identical: bool | None = None) -> Group:
    """What a ``CooperativeStickyAssignor`` leader receives: owned partitions and generations (some in user data)."""
    group = draw(classic_groups(max_members=max_members, identical=identical))
    subscriptions = {
        member: Subscription(
            s.topics,
            user_data=encode_cooperative_user_data(s.generation_id) if draw(st.booleans()) else None,
            owned_partitions=s.owned_partitions,
            generation_id=s.generation_id,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
        for member, s in group.subscriptions.items()
    }
    return replace(group, subscriptions=subscriptions)


def without_double_claims(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    """Each partition claimed by its first claimer in member order only: a coordinator's targets never overlap."""
    taken: set[TopicPartition] = set()
    result: dict[str, Subscription] = {}
    for member in sorted(subscriptions):
        s = subscriptions[member]
        mine = [tp for tp in s.owned_partitions if tp not in taken]
        taken.update(mine)
        result[member] = Subscription(
            s.topics,
            owned_partitions=mine,
            generation_id=s.generation_id,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
    return {member: result[member] for member in subscriptions}


@st.composite
def server_groups(draw: st.DrawFn, *, max_members: int = 8, identical: bool | None = None) -> Group:
    """A KIP-848 group: ``owned_partitions`` is each member's previous target (disjoint, possibly stale)."""
    with_owned = draw(st.booleans())
    group: Group = draw(
        groups(max_members=max_members, max_topics=4, max_partitions=10, owned=with_owned, identical=identical)
    )
    if draw(st.booleans()):
        group = draw(changed_topics(group))
    subscriptions = without_double_claims(group.subscriptions)
    # A KRaft topic never loses partitions: one that "shrank" was deleted and created again under a new topic id,
    # which a previous target cannot name. A target can name a topic that vanished (its id is simply unknown).
    counts = group.cluster.partitions_per_topic
    for member, s in subscriptions.items():
        kept = [tp for tp in s.owned_partitions if tp.topic not in counts or tp.partition < counts[tp.topic]]
        if len(kept) != len(s.owned_partitions):
            subscriptions[member] = Subscription(
                s.topics,
                owned_partitions=kept,
                generation_id=s.generation_id,
                rack_id=s.rack_id,
                group_instance_id=s.group_instance_id,
            )
    return replace(group, subscriptions=subscriptions)


def as_cooperative(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    """Sticky (EAGER) members' claims moved from their user data to their owned partitions, as a cooperative
    member sends them."""
    result = {}
    for member, s in subscriptions.items():
        owned: tuple[TopicPartition, ...] = ()
        if s.user_data:
            owned = decode_sticky_user_data(s.user_data).partitions
        result[member] = Subscription(
            s.topics,
            owned_partitions=owned,
            generation_id=s.generation_id,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
    return result
