"""assignors.testing: the battery passes for all four assignors and catches a broken assignor per invariant."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from itertools import pairwise

import pytest
from hypothesis import settings

from assignors import (
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
)
from assignors.testing import InvariantViolationError, check_assignor, group_state_machine, groups


class _Plain:
    """A minimal user assignor: round robin over members sorted by id (the base of the broken ones)."""

    name = "plain"
    version = 0
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def members(self, subscriptions: Mapping[str, Subscription]) -> list[str]:
        return sorted(subscriptions)

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        out: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        order = self.members(subscriptions)
        turn = 0
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            for tp in cluster.partitions(topic):
                takers = [m for m in order[turn:] + order[:turn] if topic in subscriptions[m].topics]
                out[takers[0]].append(tp)
                turn = (order.index(takers[0]) + 1) % len(order)
        return {m: Assignment(p) for m, p in out.items()}

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002 - interface
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        pass


class DoubleBooker(_Plain):
    """Validity: also gives every member's first partition to the next member."""

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        result = super().assign(cluster, subscriptions)
        order = sorted(result)
        for member, following in pairwise(order):
            if result[member].partitions:
                result[following] = Assignment([*result[following].partitions, result[member].partitions[0]])
        return result


class Hoarder(_Plain):
    """Balance: the first member subscribed to a topic takes all of it."""

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        out: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            first = min(m for m, s in subscriptions.items() if topic in s.topics)
            out[first].extend(cluster.partitions(topic))
        return {m: Assignment(p) for m, p in out.items()}


class Amnesiac(_Plain):
    """Stickiness: balanced and deterministic, but deals in reverse order whenever anyone owns something."""

    def members(self, subscriptions: Mapping[str, Subscription]) -> list[str]:
        owned = any(s.owned_partitions for s in subscriptions.values())
        return sorted(subscriptions, reverse=owned)


class Hasty(_Plain):
    """Cooperative safety: claims COOPERATIVE but hands owned partitions straight to their new owners."""

    name = "hasty"
    supported_protocols = (RebalanceProtocol.COOPERATIVE,)

    def members(self, subscriptions: Mapping[str, Subscription]) -> list[str]:
        return sorted(subscriptions, reverse=any(s.owned_partitions for s in subscriptions.values()))


class Reshuffler(_Plain):
    """Stickiness (movement): keeps a complete, valid ownership as it is, else deals afresh in reverse order."""

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        topics = {t for s in subscriptions.values() for t in s.topics}
        owned = [tp for m, s in sorted(subscriptions.items()) for tp in s.owned_partitions if tp.topic in s.topics]
        every = sorted(tp for t in topics for tp in cluster.partitions(t))
        if sorted(owned) == every:
            return {m: Assignment([tp for tp in s.owned_partitions if tp.topic in s.topics])
                    for m, s in subscriptions.items()}  # fmt: skip
        return super().assign(cluster, subscriptions)

    def members(self, subscriptions: Mapping[str, Subscription]) -> list[str]:
        return sorted(subscriptions, reverse=len(subscriptions) % 2 == 1)  # the order flips as members leave


class Stubborn(_Plain):
    """Cooperative convergence: safe (it hands nothing over) but never assigns anything, so rounds never end."""

    name = "stubborn"
    supported_protocols = (RebalanceProtocol.COOPERATIVE,)

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:  # noqa: ARG002
        return {m: Assignment([]) for m in subscriptions}


class Moody(_Plain):
    """Determinism: deals in the members' insertion order."""

    def members(self, subscriptions: Mapping[str, Subscription]) -> list[str]:
        return list(subscriptions)


REPRODUCIBLE = settings(derandomize=True, max_examples=200)  # the same counterexample on every run

ALL_FOUR = [
    (RangeAssignor, {"balance": "per-topic"}),
    (RoundRobinAssignor, {"balance": None}),
    (StickyAssignor, {"sticky": True}),
    (CooperativeStickyAssignor, {"sticky": True}),
]


@pytest.mark.parametrize(("assignor", "options"), ALL_FOUR, ids=lambda v: getattr(v, "name", ""))
def test_the_battery_passes_for_every_built_in_assignor(assignor: type, options: dict[str, object]) -> None:
    """The whole battery, as a user would run it against their own assignor."""
    check_assignor(assignor, **options)  # type: ignore[arg-type]


def test_roundrobin_is_globally_balanced_with_identical_subscriptions() -> None:
    """RoundRobin's guarantee, through the kit's group strategy bounds."""
    check_assignor(RoundRobinAssignor, balance="sticky", group_strategy=groups(identical=True, owned=True))


def test_a_plain_user_assignor_passes() -> None:
    """A correct user assignor (not sticky) passes without subclassing anything."""
    check_assignor(_Plain(), balance=None)


@pytest.mark.parametrize(
    ("broken", "options", "invariant", "shown"),
    [
        (DoubleBooker, {"balance": None}, "validity violated", "assigned to both"),
        (Hoarder, {}, "balance violated", r"could move from|holds \d+ partitions and .* only"),
        (Hoarder, {"balance": "per-topic"}, "per-topic balance violated", "subscribers hold between"),
        (
            Reshuffler,
            {"balance": None, "sticky": True},
            "stickiness (needless movement) violated",
            "moved both ways|lighter",
        ),
        (Stubborn, {"balance": None}, "cooperative convergence violated", "still withheld after 4 rounds"),
        (Amnesiac, {"balance": None, "sticky": True}, "stickiness (fixpoint) violated", "when nothing changed"),
        (Hasty, {"balance": None}, "cooperative safety violated", "still own it"),
        (Moody, {"balance": None}, "determinism violated", "reordering the members"),
    ],
)
def test_the_battery_rejects_each_broken_assignor_with_a_shrunk_counterexample(
    broken: type[_Plain], options: dict[str, object], invariant: str, shown: str
) -> None:
    """Each invariant has a broken assignor it must catch; the report names it and shows a small group."""
    with pytest.raises(InvariantViolationError) as caught:
        check_assignor(broken, hypothesis_settings=REPRODUCIBLE, **options)  # type: ignore[arg-type]
    report = str(caught.value)
    assert report.startswith(invariant), report
    assert re.search(shown, report), report
    counterexample = report.split("shrunk counterexample:\n", 1)[1]
    assert counterexample.startswith("  cluster: t0=")
    cluster_line = counterexample.splitlines()[0]
    counts = [int(part.split("=")[1]) for part in cluster_line.removeprefix("  cluster: ").split(", ")]
    assert sum(counts) <= 6, report  # shrunk: a reader sees the point at once


TestCooperativeGroup = group_state_machine(CooperativeStickyAssignor).TestCase
TestRangeGroup = group_state_machine(RangeAssignor).TestCase
TestCooperativeGroup.settings = settings(max_examples=40, stateful_step_count=12, deadline=None)
TestRangeGroup.settings = settings(max_examples=20, stateful_step_count=12, deadline=None)


def test_the_state_machine_catches_a_hasty_cooperative_assignor() -> None:
    """Driven through events, a cooperative assignor that hands over owned partitions breaks the group rules."""
    machine = group_state_machine(Hasty)
    machine.TestCase.settings = settings(max_examples=200, stateful_step_count=10, deadline=None, database=None)
    with pytest.raises(Exception, match=r"still owns it|added to"):
        machine.TestCase().runTest()
