"""Sticky and cooperative-sticky against the exact optimum of the sticky objective.

The corpus (tests/helpers/sticky_oracle.py: 2,000 small groups with identical and mixed
subscriptions, stale and double claims, racks, members joining and leaving) is solved
exactly by a MILP (level 2, the fewest squared loads, first); each assignor's settled
result must be valid and reach the optimum at every level, except for the gaps stated in
docs/sticky.md, which the bounds below hold to (a regression fails; an improvement shows
as a smaller count to write down).
"""

from __future__ import annotations

import pytest
from hypothesis import given

from assignors import (
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
)
from assignors.testing import (
    Group,
    groups,
    optimality_problems,
    owning,
    per_topic_balance_problems,
    sticky_score,
    topic_spread_problems,
)
from helpers.sticky_oracle import misses, solve

CORPUS = 2000
CHUNK = 250
STICKY = [StickyAssignor, CooperativeStickyAssignor]
TP = TopicPartition

# Per chunk of the corpus (its first group's number) and assignor: how many groups miss the
# optimum at levels 2, 3, 4 and 5 (docs/sticky.md states the totals).
KNOWN_GAPS: dict[int, dict[str, tuple[int, int, int, int]]] = {
    0: {"sticky": (0, 0, 0, 1), "cooperative-sticky": (0, 0, 0, 1)},
    250: {"sticky": (0, 0, 0, 2), "cooperative-sticky": (0, 0, 0, 2)},
    500: {"sticky": (0, 0, 0, 1), "cooperative-sticky": (0, 0, 0, 1)},
    750: {"sticky": (0, 0, 0, 2), "cooperative-sticky": (0, 0, 0, 2)},
    1000: {"sticky": (0, 0, 0, 1), "cooperative-sticky": (0, 0, 0, 1)},
    1250: {"sticky": (0, 0, 0, 1), "cooperative-sticky": (0, 0, 0, 1)},
    1750: {"sticky": (0, 0, 0, 1), "cooperative-sticky": (0, 0, 0, 1)},
}


@pytest.mark.slow
@pytest.mark.parametrize("start", range(0, CORPUS, CHUNK))
def test_corpus_reaches_the_optimum_within_the_stated_gaps(start: int) -> None:
    """Every group valid; per level (2 to 5), exactly the misses docs/sticky.md states."""
    assert misses(start, CHUNK) == KNOWN_GAPS.get(start, dict.fromkeys((m.name for m in STICKY), (0, 0, 0, 0)))


@pytest.mark.parametrize("make", STICKY, ids=lambda m: m.name)
@given(group=groups(identical=True, racks=False))
def test_fresh_identical_groups_are_even_per_topic(
    make: type[StickyAssignor | CooperativeStickyAssignor], group: Group
) -> None:
    """Nobody owns anything and everyone subscribes to the same topics: per topic, counts differ by at most one."""
    fresh = {m: owning(s, (), -1) for m, s in group.subscriptions.items()}
    assert per_topic_balance_problems(fresh, make().assign(group.cluster, fresh)) == []


ORDERS_PAYMENTS = Cluster({"orders": 12, "payments": 12})
BOTH = ["orders", "payments"]
ALL_24 = [TP(t, p) for t in BOTH for p in range(12)]


def test_topic_spread_problems_reports_the_skew_of_a_whole_topic_each() -> None:
    """One member with all of orders, the other all of payments: a free swap evens both topics."""
    subs = {"a": Subscription(BOTH, owned_partitions=ALL_24, generation_id=1), "b": Subscription(BOTH)}
    skewed = {"a": Assignment(ALL_24[:12]), "b": Assignment(ALL_24[12:])}
    problems = topic_spread_problems(ORDERS_PAYMENTS, subs, skewed)
    assert problems == [], "a owned everything: no swap is free (it would revoke)"
    fresh = {m: Subscription(BOTH) for m in subs}
    problems = topic_spread_problems(ORDERS_PAYMENTS, fresh, skewed)
    assert problems == ["swapping orders-0 of 'a' with payments-0 of 'b' lowers the per-topic spread 24 -> 20"]
    even = StickyAssignor().assign(ORDERS_PAYMENTS, subs)
    assert topic_spread_problems(ORDERS_PAYMENTS, subs, even) == []
    assert sticky_score(ORDERS_PAYMENTS, subs, {m: a.partitions for m, a in even.items()}) == (12, 0, 0)


def test_optimality_problems_names_the_level_a_weaker_assignor_misses() -> None:
    """Round robin ignores ownership: the check reports level 3 against the exact solver; sticky passes."""
    owned = {"a": ALL_24[::2], "b": ALL_24[1::2]}
    subs = {m: Subscription(BOTH, owned_partitions=owned[m], generation_id=3) for m in ("a", "b")}
    subs["c"] = Subscription(BOTH)
    assert optimality_problems(StickyAssignor, ORDERS_PAYMENTS, subs, solve) == []
    problems = optimality_problems(RoundRobinAssignor, ORDERS_PAYMENTS, subs, solve)
    assert len(problems) == 1
    assert problems[0].startswith("level 3 (partitions taken from their current owner): ")
    assert problems[0].endswith("the solver reaches 8")
