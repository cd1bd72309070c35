"""Cooperative-sticky settles in two rounds, and settles where sticky does.

The first round computes the most balanced assignment that takes the fewest partitions
from their owners, hands out what changes no owner and withholds the rest; their owners
revoke them and rejoin. The follow-up round's input then already contains a most
balanced assignment that revokes nothing (the first round's target), so an exact level 2
and 3 revokes nothing again: the group settles in at most two rounds, moves no more than
the first round revoked, and ends as good as ``sticky`` on the same input at levels 1-4
(valid; squared loads; partitions taken from their owners; rack mismatches). Groups here
are up to 8 members and 48 partitions, where the exact phase of the sticky core runs.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Cluster,
    CooperativeStickyAssignor,
    RebalanceProtocol,
    StickyAssignor,
    Subscription,
    TopicPartition,
)
from assignors.metrics import check_assignment
from assignors.rebalance import rebalance
from assignors.testing import Group, groups, load_squares, owning, sticky_score

TP = TopicPartition


@st.composite
def histories(draw: st.DrawFn, *, identical: bool | None = None) -> tuple[Group, dict[str, tuple[TP, ...]]]:
    """A group and what each member owned before (any member may own any partition, or none)."""
    group = draw(groups(identical=identical, missing_topics=False))
    members = sorted(group.subscriptions)
    owned: dict[str, list[TP]] = {m: [] for m in members}
    for topic in sorted(group.cluster.topics):
        for tp in group.cluster.partitions(topic):
            owner = draw(st.sampled_from([None, *members]))
            if owner is not None:
                owned[owner].append(tp)
    return group, {m: tuple(p) for m, p in owned.items()}


def _cooperative(group: Group, owned: dict[str, tuple[TP, ...]]) -> tuple[int, list[int], dict[str, tuple[TP, ...]]]:
    """Rounds, revocations per round, and the settled assignment of one cooperative rebalance."""
    result = rebalance(
        CooperativeStickyAssignor(),
        group.cluster,
        group.subscriptions,
        owned,
        generation=1,
        protocol=RebalanceProtocol.COOPERATIVE,
    )
    settled = {m: a.partitions for m, a in result.assignment.items()}
    return len(result.rounds), [r.revoked_count for r in result.rounds], settled


def _levels(cluster: Cluster, subs: dict[str, Subscription], held: dict[str, tuple[TP, ...]]) -> tuple[int, int, int]:
    """Levels 2, 3 and 4: squared loads, partitions taken from their owners, rack mismatches."""
    score = sticky_score(cluster, subs, held)
    return load_squares(held), score.moved, score.mismatched


@given(history=histories())
def test_cooperative_sticky_settles_in_two_rounds_and_revokes_only_in_the_first(
    history: tuple[Group, dict[str, tuple[TP, ...]]],
) -> None:
    """At most two rounds; the second revokes nothing, so all the movement is the first round's."""
    group, owned = history
    rounds, revoked, _ = _cooperative(group, owned)
    assert rounds <= 2, f"{rounds} rounds, revoking {revoked}"
    assert sum(revoked) == revoked[0]


@given(history=histories())
def test_cooperative_sticky_settles_as_well_as_sticky_at_levels_one_to_four(
    history: tuple[Group, dict[str, tuple[TP, ...]]],
) -> None:
    """The settled assignment is valid and, against the owners before, scores like sticky's at levels 2-4."""
    group, owned = history
    _, _, settled = _cooperative(group, owned)
    subs = {m: owning(s, owned[m], 1) for m, s in group.subscriptions.items()}
    assert check_assignment(group.cluster, subs, settled) == []
    eager = {m: a.partitions for m, a in StickyAssignor().assign(group.cluster, subs).items()}
    assert _levels(group.cluster, subs, settled) == _levels(group.cluster, subs, eager)


def test_unequal_subscriptions_settle_in_two_rounds_at_four_each() -> None:
    """Kafka's testAssignmentWithMultipleGenerations2 shape, cooperative: 5/4/3 owned, 4/4/4 after two rounds.

    ``consumer2`` owns ``topic2-0`` and all of ``topic3``, ``consumer3`` ``topic-0`` and the
    rest of ``topic2``: the chain ``consumer2 -> consumer3 -> consumer1`` moves one
    partition each, both revoked in the first round and assigned in the second.
    """
    cluster = Cluster({"topic": 4, "topic2": 4, "topic3": 4})
    group = Group(
        cluster,
        {
            "consumer1": Subscription(["topic"]),
            "consumer2": Subscription(["topic", "topic2", "topic3"]),
            "consumer3": Subscription(["topic", "topic2"]),
        },
    )
    owned = {
        "consumer1": (TP("topic", 1), TP("topic", 2), TP("topic", 3)),
        "consumer2": (TP("topic2", 0), *(TP("topic3", p) for p in range(4))),
        "consumer3": (TP("topic", 0), TP("topic2", 1), TP("topic2", 2), TP("topic2", 3)),
    }
    rounds, revoked, settled = _cooperative(group, owned)
    assert (rounds, revoked) == (2, [2, 0])
    assert {m: sorted(map(str, p)) for m, p in settled.items()} == {
        "consumer1": ["topic-0", "topic-1", "topic-2", "topic-3"],
        "consumer2": ["topic3-0", "topic3-1", "topic3-2", "topic3-3"],
        "consumer3": ["topic2-0", "topic2-1", "topic2-2", "topic2-3"],
    }
