"""The one round engine: Kafka's EAGER semantics everywhere, and trust decided by type."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    CooperativeViolationError,
    RebalanceProtocol,
    StickyAssignor,
    Subscription,
    TopicPartition,
    get_assignor,
)
from assignors.rebalance import GroupSimulator, Join, SimulatedRound, is_built_in, rebalance
from assignors.rebalance import Round as EngineRound

TP = TopicPartition
CLUSTER = Cluster({"t": 4})


class Recording:
    """An EAGER assignor that records what the leader sees, and assigns like range."""

    name = "recording"
    version = 0
    supported_protocols = (RebalanceProtocol.EAGER,)

    def __init__(self) -> None:
        self.seen: list[dict[str, Subscription]] = []
        self.assigned: tuple[TopicPartition, ...] = ()

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        self.seen.append(dict(subscriptions))
        members = sorted(subscriptions)
        count = cluster.partitions_per_topic["t"]
        return {
            m: Assignment([TP("t", p) for p in range(count) if p % len(members) == i]) for i, m in enumerate(members)
        }

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:  # noqa: ARG002
        return b"mem:" + ",".join(str(tp) for tp in self.assigned).encode()

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:  # noqa: ARG002
        self.assigned = assignment.partitions


def test_eager_members_report_nothing_owned_and_send_their_memory_as_user_data() -> None:
    """Kafka's EAGER members revoke everything before joining: the assignor sees no owned partitions.

    Before the one engine, `rebalance()` passed each member's owned partitions to an EAGER
    assignor, which a real member never sends.
    """
    assignor = Recording()
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    owned = {"a": (TP("t", 0), TP("t", 1)), "b": (TP("t", 2), TP("t", 3))}
    result = rebalance(assignor, CLUSTER, subs, owned, generation=4)
    (seen,) = assignor.seen
    assert {m: s.owned_partitions for m, s in seen.items()} == {"a": (), "b": ()}
    assert {m: s.user_data for m, s in seen.items()} == {"a": b"mem:t-0,t-1", "b": b"mem:t-2,t-3"}
    assert {m: s.generation_id for m, s in seen.items()} == {"a": 4, "b": 4}
    (only,) = result.rounds
    assert only.revoked == owned  # everything, before joining
    assert only.owned_at_join == {"a": (), "b": ()}


def test_eager_sticky_keeps_its_partitions_through_user_data_alone() -> None:
    """The sticky assignor's memory travels in its user data (Kafka's StickyAssignor UserData V1)."""
    subs = {m: Subscription(["t"]) for m in ("a", "b", "c")}
    owned = {"a": (TP("t", 0), TP("t", 1)), "b": (TP("t", 2), TP("t", 3))}
    result = rebalance(StickyAssignor(), CLUSTER, subs, owned, generation=2)
    kept = {m: set(result.assignment[m].partitions) & set(owned.get(m, ())) for m in subs}
    assert sum(map(len, kept.values())) == 3  # one partition moves to the new member c
    assert len(result.assignment["c"].partitions) == 1


def test_one_round_type_for_the_replay_and_the_simulator() -> None:
    sim = GroupSimulator({"t": 2})
    (round_,) = sim.apply(Join(0, "a", ("t",))).rounds  # type: ignore[union-attr]
    assert type(round_) is EngineRound
    assert SimulatedRound is EngineRound
    assert round_.assignment == {"a": Assignment([TP("t", 0), TP("t", 1)])}


class Impostor(CooperativeStickyAssignor):
    """A user's class that calls itself cooperative-sticky and hands partitions over in one round."""

    def assign(self, cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        members = sorted(subscriptions)
        everything = [TP("t", p) for p in range(cluster.partitions_per_topic["t"])]
        return {m: Assignment(everything if m == members[-1] else []) for m in members}


def test_trust_is_decided_by_type_not_by_name() -> None:
    """A user's class named like a built-in is still validated (it was trusted by name before)."""
    assert Impostor.name == CooperativeStickyAssignor.name
    assert is_built_in(CooperativeStickyAssignor())
    assert not is_built_in(Impostor())
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    owned = {"a": (TP("t", 0), TP("t", 1), TP("t", 2), TP("t", 3))}
    with pytest.raises(CooperativeViolationError, match="still owns it") as caught:
        rebalance(Impostor(), CLUSTER, subs, owned, generation=1)
    assert (caught.value.previous_owner, caught.value.new_owner) == ("a", "b")
    sim = GroupSimulator({"t": 4})
    sim.apply(Join(0, "a", ("t",), (Impostor(),)))
    with pytest.raises(CooperativeViolationError):
        sim.apply(Join(1, "b", ("t",), (Impostor(),)))


@given(st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]), st.integers(1, 6))
def test_rebalance_given_assignments_equals_given_partitions(name: str, joining: int) -> None:
    """Passing the Assignment objects a member received as ``owned`` changes nothing but the checks skipped."""
    cluster = Cluster({"a": 7, "b": 5})
    members = [f"m{i}" for i in range(6)]
    subs = {m: Subscription(["a", "b"] if i % 2 else ["a"]) for i, m in enumerate(members)}
    first = rebalance(get_assignor(name), cluster, {m: subs[m] for m in members[:joining]}, {}, generation=-1)
    as_assignments: dict[str, Assignment] = {m: first.assignment[m] for m in members[:joining]}
    as_partitions = {m: list(a.partitions) for m, a in as_assignments.items()}
    one = rebalance(get_assignor(name), cluster, subs, as_assignments, generation=first.generation)
    other = rebalance(get_assignor(name), cluster, subs, as_partitions, generation=first.generation)
    assert [replace(r, assign_seconds=0.0) for r in one.rounds] == [
        replace(r, assign_seconds=0.0) for r in other.rounds
    ]
