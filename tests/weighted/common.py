"""What the weighted-sticky tests share: weighted groups, condition C, and rounds with each member's own instance."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from assignors import Assignment, Cluster, RebalanceProtocol, Subscription, TopicPartition, WeightedStickyAssignor
from assignors._classic.rounds import Round, RoundMember, run_rounds
from assignors._wire.weighted import encode_weighted_user_data
from assignors.testing import groups

TP = TopicPartition
WEIGHTS = (0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 40.0, 0.5, 2.25)


@dataclass(frozen=True)
class WeightedGroup:
    cluster: Cluster
    subscriptions: dict[str, Subscription]
    weights: dict[TP, float]
    tolerance: float


@st.composite
def weighted_groups(
    draw: st.DrawFn,
    *,
    identical: bool | None = None,
    owned: bool = False,
    racks: bool | None = False,
    max_members: int = 6,
    max_partitions: int = 10,
) -> WeightedGroup:
    """A kit group (members ``c0..``, topics ``t0..``) with a weight per partition and a tolerance."""
    group = draw(
        groups(
            identical=identical,
            owned=owned,
            racks=racks,
            max_members=max_members,
            max_partitions=max_partitions,
            missing_topics=False,
        )
    )
    weights = {
        tp: draw(st.sampled_from(WEIGHTS))
        for topic in sorted(group.cluster.topics)
        for tp in group.cluster.partitions(topic)
    }
    tolerance = draw(st.sampled_from((0.0, 0.0, 0.1, 0.25, 1.0)))
    return WeightedGroup(group.cluster, dict(group.subscriptions), weights, tolerance)


def eager(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    """The subscriptions as EAGER members send them: nothing owned, what they owned in weighted user data."""
    return {
        m: Subscription(
            s.topics,
            user_data=encode_weighted_user_data([(tp, None) for tp in s.owned_partitions], generation=s.generation_id),
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
        )
        for m, s in subscriptions.items()
    }


def loads(result: Mapping[str, Sequence[TP] | Assignment], weights: Mapping[TP, float]) -> dict[str, float]:
    return {
        m: math.fsum(weights[tp] for tp in (a.partitions if isinstance(a, Assignment) else a))
        for m, a in result.items()
    }


def absolute_tolerance(group: WeightedGroup) -> float:
    """``tol`` of condition C: the tolerance times the mean load of the members that subscribe to something."""
    counts = group.cluster.partitions_per_topic
    eligible = [m for m, s in group.subscriptions.items() if any(counts.get(t, 0) for t in s.topics)]
    subscribed = {t for s in group.subscriptions.values() for t in s.topics}
    total = math.fsum(w for tp, w in group.weights.items() if tp.topic in subscribed)
    return group.tolerance * total / len(eligible) if eligible else 0.0


def condition_c_problems(
    group: WeightedGroup, result: Mapping[str, Sequence[TP] | Assignment], slack: float = 1e-9
) -> list[str]:
    """Every (u, p, v) with ``load(u) > load(v) + w(p) + tol``: u holds p (w(p) > 0), v subscribes to p's topic."""
    tol = absolute_tolerance(group)
    load = loads(result, group.weights)
    problems = []
    for u, assignment in sorted(result.items()):
        held = assignment.partitions if isinstance(assignment, Assignment) else assignment
        for tp in held:
            w = group.weights[tp]
            if w <= 0:
                continue
            for v, subscription in sorted(group.subscriptions.items()):
                if v != u and tp.topic in subscription.topics and load[u] > load[v] + w + tol + slack:
                    problems.append(f"{u} ({load[u]}) holds {tp} ({w}); {v} has {load[v]}, tol {tol}")
    return problems


def member_rounds(
    group: WeightedGroup,
    owned: Mapping[str, Sequence[TP]],
    *,
    protocol: RebalanceProtocol,
    generation: int = 1,
) -> tuple[Round, ...]:
    """One rebalance in which every member runs its own instance (as in a real group), on the wire."""
    members = []
    for member in sorted(group.subscriptions):
        s = group.subscriptions[member]
        instance = WeightedStickyAssignor(group.weights, tolerance=group.tolerance)
        mine = tuple(owned.get(member, ()))
        if member in owned:
            instance.on_assignment(Assignment(mine), generation)
        members.append(
            RoundMember(
                member_id=member,
                topics=s.topics,
                assignors={instance.name: instance},
                protocol=protocol,
                owned=mine,
                generation=generation if member in owned else -1,
                rack=s.rack_id,
            )
        )
    return run_rounds(members, group.cluster, generation)
