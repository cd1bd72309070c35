"""weighted-sticky's invariants, one property each: valid, condition C and its bound, no move within the tolerance,
equal weights give exactly sticky's result, cooperative safety and two rounds, determinism."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from assignors import (
    Cluster,
    CooperativeStickyAssignor,
    RebalanceProtocol,
    StickyAssignor,
    Subscription,
    TopicPartition,
    WeightedStickyAssignor,
    get_assignor,
)
from assignors._wire.weighted import encode_weighted_user_data
from assignors.metrics import InvalidWeightError, check_assignment
from assignors.rebalance import rebalance, validate_cooperative_assignment
from weighted.common import (
    WeightedGroup,
    absolute_tolerance,
    condition_c_problems,
    eager,
    loads,
    member_rounds,
    weighted_groups,
)

TP = TopicPartition


def _assign(group: WeightedGroup, subscriptions: dict[str, Subscription] | None = None) -> dict[str, tuple[TP, ...]]:
    result = WeightedStickyAssignor(group.weights, tolerance=group.tolerance).assign(
        group.cluster, subscriptions if subscriptions is not None else group.subscriptions
    )
    return {m: a.partitions for m, a in result.items()}


@given(group=weighted_groups(racks=None))
def test_a_fresh_assignment_is_valid_and_satisfies_condition_c(group: WeightedGroup) -> None:
    """Every partition to exactly one subscriber, and no partition could move to another subscriber to make the
    heavier side of the pair lighter by more than the tolerance."""
    result = _assign(group)
    assert check_assignment(group.cluster, group.subscriptions, result) == []
    assert condition_c_problems(group, result) == []


@given(group=weighted_groups(owned=True, racks=None))
def test_with_arbitrary_claims_the_result_is_valid_and_satisfies_condition_c(group: WeightedGroup) -> None:
    """Stale, double and foreign claims (EAGER: nothing is withheld) still end valid and within condition C."""
    plain = eager(group.subscriptions)
    result = _assign(group, plain)
    assert check_assignment(group.cluster, plain, result) == []
    assert condition_c_problems(group, result) == []


@given(group=weighted_groups(identical=True, owned=True))
def test_identical_subscriptions_heaviest_is_within_one_partition_and_the_tolerance_of_the_lightest(
    group: WeightedGroup,
) -> None:
    """The stated bound: max load <= min load + the lightest positive partition the heaviest holds + tol
    (so <= mean + heaviest partition + tol)."""
    result = _assign(group, eager(group.subscriptions))
    load = loads(result, group.weights)
    eligible = {m: v for m, v in load.items() if group.subscriptions[m].topics}
    assume(eligible)
    heaviest = max(eligible, key=lambda m: (eligible[m], m))
    positive = [group.weights[tp] for tp in result[heaviest] if group.weights[tp] > 0]
    tol = absolute_tolerance(group)
    bound = min(eligible.values()) + (min(positive) if positive else 0.0) + tol
    assert eligible[heaviest] <= bound + 1e-9
    mean = math.fsum(eligible.values()) / len(eligible)
    assert eligible[heaviest] <= mean + max(group.weights.values(), default=0.0) + tol + 1e-9


@given(group=weighted_groups(racks=None, max_members=4), tolerance=st.sampled_from((0.5, 1.0, 2.0)), data=st.data())
def test_nothing_moves_when_the_owners_already_satisfy_condition_c(
    group: WeightedGroup, tolerance: float, data: st.DataObject
) -> None:
    """A complete, valid ownership within the tolerance comes back unchanged (EAGER and COOPERATIVE alike), unless
    every weight is equal (then the result is sticky's, which evens the counts)."""
    group = WeightedGroup(group.cluster, group.subscriptions, group.weights, tolerance)
    counts = group.cluster.partitions_per_topic
    owners: dict[str, list[TP]] = {m: [] for m in group.subscriptions}
    for topic in sorted(counts):
        subscribers = sorted(m for m, s in group.subscriptions.items() if topic in s.topics)
        for tp in group.cluster.partitions(topic):
            if subscribers:
                owners[data.draw(st.sampled_from(subscribers))].append(tp)
    subscribed = {t for s in group.subscriptions.values() for t in s.topics}
    if condition_c_problems(group, owners) or len({w for tp, w in group.weights.items() if tp.topic in subscribed}) < 2:
        return  # not within the tolerance, or every weight equal (sticky's result, which evens the counts)
    cooperative = {
        m: Subscription(s.topics, owned_partitions=owners[m], generation_id=2, rack_id=s.rack_id)
        for m, s in group.subscriptions.items()
    }
    assert {m: set(p) for m, p in _assign(group, cooperative).items()} == {m: set(p) for m, p in owners.items()}
    eager = {
        m: Subscription(s.topics, user_data=encode_weighted_user_data([(tp, None) for tp in owners[m]], generation=2))
        for m, s in group.subscriptions.items()
    }
    assert {m: set(p) for m, p in _assign(group, eager).items()} == {m: set(p) for m, p in owners.items()}


@given(group=weighted_groups(racks=None))
def test_the_result_fed_back_as_ownership_comes_back_unchanged(group: WeightedGroup) -> None:
    """A fixpoint: a second round in which everyone keeps what the first gave moves nothing."""
    first = _assign(group)
    again = {
        m: Subscription(s.topics, owned_partitions=first[m], generation_id=1, rack_id=s.rack_id)
        for m, s in group.subscriptions.items()
    }
    assert {m: set(p) for m, p in _assign(group, again).items()} == {m: set(p) for m, p in first.items()}


@given(group=weighted_groups(owned=True, racks=None), weight=st.sampled_from((0.0, 1.0, 7.5)))
def test_equal_weights_give_exactly_stickys_result(group: WeightedGroup, weight: float) -> None:
    """All weights equal: cooperative-sticky's result with owned partitions, sticky's with ownership in user data,
    and the same with no weights and no reports at all."""
    equal = dict.fromkeys(group.weights, weight)
    cooperative = WeightedStickyAssignor(equal).assign(group.cluster, group.subscriptions)
    assert cooperative == CooperativeStickyAssignor().assign(group.cluster, group.subscriptions)
    assert get_assignor("weighted-sticky").assign(group.cluster, group.subscriptions) == cooperative
    expected = StickyAssignor().assign(group.cluster, group.subscriptions)
    assert WeightedStickyAssignor(equal).assign(group.cluster, eager(group.subscriptions)) == expected
    assert get_assignor("weighted-sticky").assign(group.cluster, eager(group.subscriptions)) == expected


@st.composite
def _histories(draw: st.DrawFn) -> tuple[WeightedGroup, dict[str, tuple[TP, ...]]]:
    group = draw(weighted_groups(racks=None))
    members = sorted(group.subscriptions)
    owned: dict[str, list[TP]] = {m: [] for m in members}
    for topic in sorted(group.cluster.topics):
        for tp in group.cluster.partitions(topic):
            owner = draw(st.sampled_from([None, *members]))
            if owner is not None and topic in group.subscriptions[owner].topics:
                owned[owner].append(tp)
    return group, {m: tuple(p) for m, p in owned.items()}


@given(history=_histories())
def test_cooperative_hands_nothing_over_while_its_owner_still_holds_it(
    history: tuple[WeightedGroup, dict[str, tuple[TP, ...]]],
) -> None:
    """A partition goes to a member other than its owner only when no member still owns it."""
    group, owned = history
    subscriptions = {
        m: Subscription(s.topics, owned_partitions=owned[m], generation_id=1, rack_id=s.rack_id)
        for m, s in group.subscriptions.items()
    }
    result = WeightedStickyAssignor(group.weights, tolerance=group.tolerance).assign(group.cluster, subscriptions)
    validate_cooperative_assignment(owned, result)


@given(history=_histories())
def test_cooperative_settles_in_two_rounds_and_the_second_revokes_nothing(
    history: tuple[WeightedGroup, dict[str, tuple[TP, ...]]],
) -> None:
    """Every member runs its own instance, as in a real group: the first round withholds and promises, the owners
    revoke, the second round hands the promised partitions over and moves nothing else; the end is valid and
    satisfies condition C."""
    group, owned = history
    rounds = member_rounds(group, owned, protocol=RebalanceProtocol.COOPERATIVE)
    assert len(rounds) <= 2, [r.revoked_count for r in rounds]
    assert sum(r.revoked_count for r in rounds[1:]) == 0
    settled = {m: a.partitions for m, a in rounds[-1].assignment.items()}
    assert check_assignment(group.cluster, group.subscriptions, settled) == []
    assert condition_c_problems(group, settled) == []


@given(history=_histories())
def test_one_shared_instance_settles_in_two_rounds_too(
    history: tuple[WeightedGroup, dict[str, tuple[TP, ...]]],
) -> None:
    """``assignors.rebalance.rebalance`` with one instance standing for every member (as the evaluation replays a
    group): the leader's own word on what it promised finishes the hand-over in the second round."""
    group, owned = history
    assignor = WeightedStickyAssignor(group.weights, tolerance=group.tolerance)
    result = rebalance(
        assignor, group.cluster, group.subscriptions, owned, generation=1, protocol=RebalanceProtocol.COOPERATIVE
    )
    assert len(result.rounds) <= 2, [r.revoked_count for r in result.rounds]
    assert sum(r.revoked_count for r in result.rounds[1:]) == 0
    settled = {m: a.partitions for m, a in result.assignment.items()}
    assert condition_c_problems(group, settled) == []


@given(history=_histories())
def test_eager_rounds_end_valid_and_within_condition_c_in_one_round(
    history: tuple[WeightedGroup, dict[str, tuple[TP, ...]]],
) -> None:
    """EAGER: members revoke everything, their user data carries what they owned; one round."""
    group, owned = history
    rounds = member_rounds(group, owned, protocol=RebalanceProtocol.EAGER)
    assert len(rounds) == 1
    settled = {m: a.partitions for m, a in rounds[0].assignment.items()}
    assert check_assignment(group.cluster, group.subscriptions, settled) == []
    assert condition_c_problems(group, settled) == []


@given(group=weighted_groups(owned=True), data=st.data())
def test_input_order_changes_nothing(group: WeightedGroup, data: st.DataObject) -> None:
    """The same group with members, claims and weights in another order gives the same assignment."""
    members = data.draw(st.permutations(sorted(group.subscriptions)))
    shuffled = {
        m: Subscription(
            group.subscriptions[m].topics,
            owned_partitions=data.draw(st.permutations(group.subscriptions[m].owned_partitions)),
            generation_id=group.subscriptions[m].generation_id,
            rack_id=group.subscriptions[m].rack_id,
        )
        for m in members
    }
    keys = data.draw(st.permutations(sorted(group.weights)))
    reordered = WeightedGroup(group.cluster, shuffled, {tp: group.weights[tp] for tp in keys}, group.tolerance)
    first = {m: set(p) for m, p in _assign(group).items()}
    assert {m: set(p) for m, p in _assign(reordered).items()} == first


@given(group=weighted_groups(racks=True, identical=True))
def test_with_racks_partitions_go_rack_local_when_a_local_member_is_within_the_tolerance(group: WeightedGroup) -> None:
    """Racks never cost the guarantee: the result is valid and satisfies condition C."""
    result = _assign(group)
    assert check_assignment(group.cluster, group.subscriptions, result) == []
    assert condition_c_problems(group, result) == []


def test_worked_example_one_hot_partition_gets_a_member_of_its_own() -> None:
    """One partition carries half the load: its member gets nothing else; a new member then takes load from the
    others only, and the hot partition stays put."""
    cluster = Cluster({"t": 6})
    weights = {TP("t", 0): 30.0, **{TP("t", p): 6.0 for p in range(1, 6)}}
    subs = {m: Subscription(["t"]) for m in ("a", "b")}
    first = WeightedStickyAssignor(weights).assign(cluster, subs)
    assert {m: [str(tp) for tp in a.partitions] for m, a in first.items()} == {
        "a": ["t-0"],
        "b": ["t-1", "t-2", "t-3", "t-4", "t-5"],
    }
    subs = {m: Subscription(["t"], owned_partitions=first[m].partitions, generation_id=1) for m in ("a", "b")}
    subs["c"] = Subscription(["t"])
    second = WeightedStickyAssignor(weights).assign(cluster, subs)
    assert {m: [str(tp) for tp in a.partitions] for m, a in second.items()} == {
        "a": ["t-0"],
        "b": ["t-3", "t-4", "t-5"],
        "c": [],
    }
    assert second["c"].user_data is not None  # t-1 and t-2 are promised to c, once b has revoked them


@pytest.mark.parametrize("bad", [math.nan, -1.0, math.inf, "x", True, None])
def test_a_bad_weight_is_refused_naming_its_partition(bad: object) -> None:
    """A mapping's bad weight is refused when the assignor is built; a callable's when it answers."""
    with pytest.raises(InvalidWeightError, match=r"partition t-3"):
        WeightedStickyAssignor({TP("t", 3): bad})  # type: ignore[arg-type]
    if bad is None:
        return  # a callable may answer None: no weight, the reports and the default decide
    assignor = WeightedStickyAssignor(lambda tp: bad if tp.partition == 3 else 1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidWeightError, match=r"partition t-3"):
        assignor.assign(Cluster({"t": 4}), {"a": Subscription(["t"])})


def test_a_bad_tolerance_or_unit_is_refused() -> None:
    """The tolerance is a finite number >= 0; the unit records or bytes."""
    with pytest.raises(InvalidWeightError, match="tolerance"):
        WeightedStickyAssignor(tolerance=-0.5)
    with pytest.raises(InvalidWeightError, match="unit"):
        WeightedStickyAssignor(unit="lines")


def test_a_topic_weight_covers_its_partitions_and_unknown_partitions_get_their_topics_mean() -> None:
    """``(topic, None)`` weighs each partition of the topic; a partition with no weight weighs its topic's mean."""
    cluster = Cluster({"hot": 2, "cold": 4})
    assignor = WeightedStickyAssignor({("hot", None): 9.0, TP("cold", 0): 1.0, TP("cold", 1): 3.0})
    result = assignor.assign(cluster, {m: Subscription(["hot", "cold"]) for m in ("a", "b")})
    weights = {TP("hot", 0): 9.0, TP("hot", 1): 9.0, TP("cold", 0): 1.0, TP("cold", 1): 3.0}
    weights |= {TP("cold", 2): 2.0, TP("cold", 3): 2.0}
    assert sorted(loads(result, weights).values()) == [13.0, 13.0]
