"""assignors.metrics: balance (overall and per topic), movement, validity, weighted load and pause cost."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from random import Random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    AssignorError,
    Cluster,
    RangeAssignor,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    get_assignor,
)
from assignors.metrics import (
    Balance,
    InvalidWeightError,
    PartitionWeights,
    PauseProtocol,
    WeightedLoad,
    balance,
    check_assignment,
    moved_weight,
    movement,
    pause_partition_seconds,
    topic_spreads,
    weighted_load,
)
from assignors.testing import Group, groups

TP = TopicPartition


def test_balance_counts_empty_members() -> None:
    """Empty members count as load 0."""
    b = balance({"a": [TP("t", 0), TP("t", 1), TP("t", 2)], "b": [TP("t", 3)], "c": []})
    assert (b.members, b.partitions, b.min_load, b.max_load, b.spread) == (3, 4, 0, 3, 3)
    assert math.isclose(b.stddev, math.sqrt(((3 - 4 / 3) ** 2 + (1 - 4 / 3) ** 2 + (4 / 3) ** 2) / 3))


def test_balance_of_nothing() -> None:
    """No members: all zeros."""
    assert balance({}).spread == 0


def test_movement_definitions() -> None:
    """moved = survivor's partition now elsewhere; orphaned = owner left; revoked per protocol."""
    before = {"x": [TP("t", 0), TP("t", 1)], "y": [TP("t", 2), TP("u", 0)], "z": [TP("t", 3)]}
    after = {"x": [TP("t", 0), TP("t", 3)], "y": [TP("t", 1), TP("t", 2)], "w": []}
    m = movement(before, after)
    assert (m.moved, m.orphaned, m.retained, m.released) == (1, 1, 2, 1)
    assert m.revoked(RebalanceProtocol.EAGER) == 4
    assert m.revoked(RebalanceProtocol.COOPERATIVE) == 2


def test_movement_with_explicit_members() -> None:
    """members_after decides who survived, even with no partitions in `after`."""
    before = {"x": [TP("t", 0)]}
    assert movement(before, {}, members_after=["x"]).released == 1
    assert movement(before, {}, members_after=[]).orphaned == 1


def test_check_assignment_reports_every_kind() -> None:
    """Each kind of violation is reported with the member and partition in the message."""
    cluster = Cluster({"t": 2, "u": 1})
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"]), "c": Subscription(["u"])}
    bad = {"a": [TP("t", 0), TP("u", 0), TP("t", 9)], "b": [TP("t", 0)], "ghost": []}
    kinds = [(v.kind, str(v)) for v in check_assignment(cluster, subs, bad)]
    assert kinds == [
        ("unknown-member", "member 'ghost' is assigned but did not subscribe"),
        ("missing-member", "member 'c' has no entry in the assignment"),
        ("not-subscribed", "u-0 assigned to 'a', which does not subscribe to 'u'"),
        ("unknown-partition", "t-9 assigned to 'a' does not exist in the cluster"),
        ("duplicate", "t-0 assigned to both 'a' and 'b'"),
        ("unassigned", "t-1 of subscribed topic 't' is not assigned"),
    ]


@given(groups())
def test_movement_of_identity_is_zero(group: Group) -> None:
    """An assignment compared with itself moves nothing and retains everything."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    m = movement(result, result)
    assert (m.moved, m.orphaned, m.released) == (0, 0, 0)
    assert m.retained == balance(result).partitions


def _naively_valid(group: Group, assignment: dict[str, list[TP]]) -> bool:
    """Validity straight from its definition, one partition at a time."""
    if set(assignment) != set(group.subscriptions):
        return False
    counts = group.cluster.partitions_per_topic
    subscribed = {t for s in group.subscriptions.values() for t in s.topics}
    expected = [TP(t, p) for t in sorted(subscribed) for p in range(counts.get(t, 0))]
    given = [tp for partitions in assignment.values() for tp in partitions]
    in_subscription = all(
        tp.topic in group.subscriptions[member].topics for member, partitions in assignment.items() for tp in partitions
    )
    return in_subscription and sorted(given) == expected


_EDITS = st.sampled_from(["none", "drop", "duplicate", "move", "extra", "ghost", "forget-member"])


@given(groups(), _EDITS, st.randoms(use_true_random=False))
def test_check_assignment_agrees_with_the_definition(group: Group, edit: str, rnd: Random) -> None:
    """Valid or not after a random edit, check_assignment says what the definition says."""
    assignment = {m: list(a.partitions) for m, a in RangeAssignor().assign(group.cluster, group.subscriptions).items()}
    members = sorted(assignment)
    held = [(m, tp) for m in members for tp in assignment[m]]
    if edit == "drop" and held:
        member, tp = rnd.choice(held)
        assignment[member].remove(tp)
    elif edit == "duplicate" and held:
        assignment[rnd.choice(members)].append(rnd.choice(held)[1])
    elif edit == "move" and held and members:
        member, tp = rnd.choice(held)
        assignment[member].remove(tp)
        assignment[rnd.choice(members)].append(tp)
    elif edit == "extra" and members:
        assignment[rnd.choice(members)].append(TP(rnd.choice(["t0", "zz"]), rnd.randrange(100)))
    elif edit == "ghost":
        assignment["ghost"] = []
    elif edit == "forget-member" and members:
        del assignment[rnd.choice(members)]
    violations = check_assignment(group.cluster, group.subscriptions, assignment)
    assert (violations == []) == _naively_valid(group, assignment), violations


@given(groups(), groups())
def test_movement_agrees_with_the_definition(first: Group, second: Group) -> None:
    """moved/orphaned/retained/released counted partition by partition, as assignors.metrics.movement documents them."""
    before = RangeAssignor().assign(first.cluster, first.subscriptions)
    after = RangeAssignor().assign(second.cluster, second.subscriptions)
    owner_after = {tp: m for m, a in after.items() for tp in a.partitions}
    expected = {"moved": 0, "orphaned": 0, "retained": 0, "released": 0}
    for member, assigned in before.items():
        for tp in assigned.partitions:
            if member not in after:
                expected["orphaned"] += 1
            elif owner_after.get(tp) == member:
                expected["retained"] += 1
            elif tp not in owner_after:
                expected["released"] += 1
            else:
                expected["moved"] += 1
    m = movement(before, after)
    assert (m.moved, m.orphaned, m.retained, m.released) == tuple(expected.values())
    # retained_revoking: what the survivors that give something up keep, when a survivor gives nothing up
    givers = [member for member in before if member in after and set(before[member].partitions) - owned(after, member)]
    steady = [member for member in before if member in after and member not in givers]
    kept = sum(len(set(before[member].partitions) & owned(after, member)) for member in givers)
    assert m.retained_revoking == (kept if steady else 0)
    assert 0 <= m.retained_revoking <= m.retained


def owned(assignment: Mapping[str, Assignment], member: str) -> set[TP]:
    return set(assignment[member].partitions)


def test_retained_revoking_by_hand() -> None:
    """Under COOPERATIVE the members that give partitions up rejoin the second round at once; the others on their next
    heartbeat. What the givers keep waits for those others, if there are any."""
    a = {"x": [TP("t", 0), TP("t", 1)], "y": [TP("t", 2), TP("t", 3)], "z": [TP("t", 4)]}
    # x gives t-1 to the newcomer w; y and z give nothing up: x's t-0 waits for their heartbeat
    b = {"x": [TP("t", 0)], "y": [TP("t", 2), TP("t", 3)], "z": [TP("t", 4)], "w": [TP("t", 1)]}
    assert movement(a, b).retained_revoking == 1
    # x and y each give one up, z gives none: t-0 and t-2 wait
    c = {"x": [TP("t", 0)], "y": [TP("t", 2)], "z": [TP("t", 4)], "w": [TP("t", 1), TP("t", 3)]}
    assert movement(a, c).retained_revoking == 2
    # z leaves and x, y each give one up: every survivor rejoins at once, nobody waits
    d = {"x": [TP("t", 0)], "y": [TP("t", 2)], "w": [TP("t", 1), TP("t", 3), TP("t", 4)]}
    assert movement(a, d).retained_revoking == 0
    # a survivor that held nothing gives nothing up: the givers wait for its heartbeat; a newcomer joined them
    e = {"x": [TP("t", 0), TP("t", 1)], "y": [TP("t", 2), TP("t", 3)]}
    f = {"x": [TP("t", 0)], "y": [TP("t", 2)], "v": [TP("t", 1), TP("t", 3)]}
    assert movement({**e, "v": []}, f).retained_revoking == 2
    assert movement(e, f).retained_revoking == 0


# --- per-topic spread, weighted load, pause cost ----------------------------------------


def test_topic_spread_shows_the_skew_partition_counts_hide() -> None:
    """Kafka's `AbstractStickyAssignorTest.testTopicBalanceAfterReassignment` shape: 12 + 12 split by topic.

    Each member holds 12 partitions (spread 0), but one holds all of orders and the other all of
    payments: each topic's spread is 12 - 0 = 12, the sum 24.
    """
    a = {"c1": [TP("orders", p) for p in range(12)], "c2": [TP("payments", p) for p in range(12)]}
    b = balance(a)
    assert (b.spread, b.topic_spread, b.topic_spread_sum, b.worst_topic) == (0, 12, 24, "orders")
    even = {"c1": [TP("orders", p) for p in range(6)] + [TP("payments", p) for p in range(6)],
            "c2": [TP("orders", p) for p in range(6, 12)] + [TP("payments", p) for p in range(6, 12)]}  # fmt: skip
    assert (balance(even).topic_spread, balance(even).topic_spread_sum) == (0, 0)


def test_topic_spread_counts_only_subscribers() -> None:
    """With subscriptions, a member that does not subscribe to a topic does not count as holding 0 of it."""
    a = {"x": [TP("o", 0), TP("o", 1), TP("o", 2)], "y": [TP("p", 0)], "z": [TP("o", 3)]}
    subs: dict[str, Subscription | list[str]] = {"x": Subscription(["o"]), "y": Subscription(["p"]), "z": ["o", "p"]}
    assert topic_spreads(a, subs) == {"o": 2, "p": 1}  # o: x 3, z 1; p: y 1, z 0
    assert topic_spreads(a) == {"o": 3, "p": 1}  # everyone subscribes: o: x 3, y 0; p: y 1, x 0
    b = balance(a, subs)
    assert (b.topic_spread, b.topic_spread_sum, b.worst_topic) == (2, 3, "o")
    # A subscribed topic nobody holds has spread 0; an unsubscribed holder still counts.
    assert topic_spreads({"x": [TP("o", 0)]}, {"x": ["q"]}) == {"o": 0, "q": 0}
    assert topic_spreads({"x": [TP("o", 0)], "y": []}, {"y": ["o"]}) == {"o": 1}


def test_balance_worst_topic_tie_is_the_first_by_name() -> None:
    a = {"x": [TP("b", 0), TP("a", 0)], "y": []}
    assert balance(a).worst_topic == "a"
    assert balance({"x": [], "y": []}) == Balance(2, 0, 0, 0, 0, 0.0, 0, 0, None)


def test_weighted_load_by_hand() -> None:
    """hot weighs 10 per partition, cold 1 except cold-2 (3); x: 10 + 1 + 1 = 12, y: 1 + 3 = 4, z: 0."""
    a = {"x": [TP("hot", 0), TP("cold", 0), TP("cold", 3)], "y": [TP("cold", 1), TP("cold", 2)], "z": []}
    w = weighted_load(a, {("hot", None): 10.0, ("cold", None): 1.0, ("cold", 2): 3.0})
    assert w == WeightedLoad(members=3, total=16.0, max_load=12.0, min_load=0.0, spread=12.0, max_mean_ratio=2.25)
    # Partitions without any weight count `default`.
    assert weighted_load({"x": [TP("u", 0)], "y": [TP("hot", 0)]}, {("hot", None): 4.0}, default=2.0).spread == 2.0
    assert weighted_load({}, {}) == WeightedLoad(0, 0.0, 0.0, 0.0, 0.0, 1.0)
    assert weighted_load({"x": [TP("u", 0)]}, {}).max_mean_ratio == 1.0


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_weighted_load_rejects_bad_weights_naming_them(bad: float) -> None:
    with pytest.raises(InvalidWeightError, match=r"weight of topic 'hot' partition 3 is"):
        weighted_load({"x": [TP("hot", 3)]}, {("hot", 3): bad})
    with pytest.raises(InvalidWeightError, match="topic 'cold' is"):
        weighted_load({}, {("cold", None): bad})
    with pytest.raises(AssignorError, match="default"):
        weighted_load({}, {}, default=bad)


def test_pause_cost_by_hand() -> None:
    """12 partitions on survivors, 3 of them move, R = 5 s, H = 3 s."""
    assert pause_partition_seconds("EAGER", moved=3, survivors_owned=12) == 12 * 5.0
    assert pause_partition_seconds(RebalanceProtocol.EAGER, moved=3, survivors_owned=12, rebalance_seconds=2) == 24.0
    assert pause_partition_seconds(RebalanceProtocol.COOPERATIVE, moved=3, survivors_owned=12) == 3 * 2 * 5.0
    assert pause_partition_seconds("consumer", moved=3, survivors_owned=12, heartbeat_seconds=3) == 9.0
    assert pause_partition_seconds(PauseProtocol.CONSUMER, moved=0, survivors_owned=12) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"rebalance_seconds": -1}, "rebalance_seconds is -1"),
        ({"heartbeat_seconds": math.nan}, "heartbeat_seconds is nan"),
        ({"moved": -2}, "moved is -2"),
        ({"protocol": "LAZY"}, "protocol 'LAZY' is not one of EAGER, COOPERATIVE, CONSUMER"),
    ],
)
def test_pause_cost_rejects_bad_input(kwargs: dict[str, Any], needle: str) -> None:
    arguments: dict[str, Any] = {"protocol": "EAGER", "moved": 1, "survivors_owned": 1, **kwargs}
    with pytest.raises(InvalidWeightError, match=re.escape(needle)):
        pause_partition_seconds(**arguments)


@given(groups(), st.data())
def test_topic_spread_properties(group: Group, data: st.DataObject) -> None:
    """Per-topic spreads against their definition; the worst is at most the sum; unsubscribed members don't count."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    spreads = topic_spreads(result, group.subscriptions)
    for topic, spread in spreads.items():
        held = [sum(tp.topic == topic for tp in result[m].partitions)
                for m, s in group.subscriptions.items() if topic in s.topics]  # fmt: skip
        assert spread == (max(held) - min(held) if held else 0)
    b = balance(result, group.subscriptions)
    assert b.topic_spread == max(spreads.values(), default=0) <= b.topic_spread_sum == sum(spreads.values())
    reordered = dict(data.draw(st.permutations(list(result.items()))))
    assert balance(reordered, group.subscriptions) == b  # independent of member order


_WEIGHT_KEYS = st.tuples(st.sampled_from(["t0", "t1", "t2", "t3", "gone"]), st.none() | st.integers(0, 12))


@given(
    groups(),
    st.dictionaries(_WEIGHT_KEYS, st.floats(0, 1e6)),
    st.floats(0, 100),
    st.dictionaries(st.sampled_from(["t0", "t1", "t2"]), st.integers(0, 8), max_size=3),
)
def test_partition_weights_load_is_weighted_load(
    group: Group, weights: dict[tuple[str, int | None], float], default: float, known: dict[str, int]
) -> None:
    """PartitionWeights (the replay's weights, read once per partition) measures exactly as weighted_load does,
    bit for bit, for partitions it resolved and for any other (a topic or partition it was not built with)."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    for counts in (group.cluster.partitions_per_topic, known, {}):
        table = PartitionWeights(weights, counts, default=default)
        assert table.load(result) == weighted_load(result, weights, default=default)
        plain = {member: list(a.partitions) for member, a in result.items()}
        assert table.load(plain) == weighted_load(plain, weights, default=default)


def test_partition_weights_checks_as_weighted_load_does() -> None:
    """Bad weights are refused when the table is built, with weighted_load's message."""
    with pytest.raises(InvalidWeightError, match="topic 'hot' partition 3"):
        PartitionWeights({("hot", 3): -1.0}, {"hot": 4})
    with pytest.raises(InvalidWeightError, match="default"):
        PartitionWeights({}, {"hot": 4}, default=math.nan)


@given(groups(), st.dictionaries(st.sampled_from(["t0", "t1", "t2", "t3"]), st.floats(0, 1e6)))
def test_weighted_load_properties(group: Group, per_topic: dict[str, float]) -> None:
    """Unit weights give the partition counts; loads add up to the total; the ratio is at least 1."""
    result = RangeAssignor().assign(group.cluster, group.subscriptions)
    counts = balance(result)
    topics = {tp.topic for a in result.values() for tp in a.partitions}
    unit = weighted_load(result, {(t, None): 1.0 for t in topics})
    assert (unit.max_load, unit.min_load, unit.total) == (counts.max_load, counts.min_load, counts.partitions)
    w = weighted_load(result, {(t, None): v for t, v in per_topic.items()})
    expected_total = sum(per_topic.get(tp.topic, 0.0) for a in result.values() for tp in a.partitions)
    assert math.isclose(w.total, expected_total, rel_tol=1e-9, abs_tol=1e-9)
    assert 0.0 <= w.min_load <= w.max_load
    assert math.isclose(w.spread, w.max_load - w.min_load)
    assert w.max_mean_ratio >= 1.0 - 1e-9
    assert w.max_mean_ratio <= max(w.members, 1) + 1e-9  # one member carries everything at worst


@given(
    groups(),
    groups(),
    st.dictionaries(st.sampled_from(["t0", "t1", "t2", "t3"]), st.floats(0, 1e6)),
    st.dictionaries(st.tuples(st.sampled_from(["t0", "t1"]), st.integers(0, 5)), st.floats(0, 1e3)),
    st.randoms(use_true_random=False),
)
def test_moved_weight_weighs_what_movement_counts_as_moved(
    first: Group,
    second: Group,
    per_topic: dict[str, float],
    per_partition: dict[tuple[str, int], float],
    rnd: Random,
) -> None:
    """Unit weights give ``movement(...).moved``; any weights give the sum over those same partitions (a partition's
    own weight before its topic's); the order of members and partitions changes nothing."""
    before = RangeAssignor().assign(first.cluster, first.subscriptions)
    after = RangeAssignor().assign(second.cluster, second.subscriptions)
    topics = {tp.topic for a in [*before.values(), *after.values()] for tp in a.partitions}
    assert moved_weight(before, after, {(t, None): 1.0 for t in topics}) == movement(before, after).moved
    weights: dict[tuple[str, int | None], float] = {(t, None): v for t, v in per_topic.items()}
    weights.update({(t, p): v for (t, p), v in per_partition.items()})
    owner_after = {tp: m for m, a in after.items() for tp in a.partitions}
    moved = [
        tp
        for member, assigned in before.items()
        if member in after
        for tp in assigned.partitions
        if owner_after.get(tp) not in {None, member}
    ]
    expected = math.fsum(weights.get((tp.topic, tp.partition), weights.get((tp.topic, None), 0.0)) for tp in moved)
    assert moved_weight(before, after, weights) == expected
    shuffled_before = [(m, list(a.partitions)) for m, a in before.items()]
    rnd.shuffle(shuffled_before)
    for _, partitions in shuffled_before:
        rnd.shuffle(partitions)
    shuffled_after = list(after.items())
    rnd.shuffle(shuffled_after)
    assert moved_weight(dict(shuffled_before), dict(shuffled_after), weights) == expected
    # PartitionWeights.moved (the replay's: weights checked once) weighs the same, whatever topics it was built with
    for counts in (second.cluster.partitions_per_topic, first.cluster.partitions_per_topic, {}):
        table = PartitionWeights(weights, counts)
        assert table.moved(before, after) == expected
        assert table.moved(dict(shuffled_before), dict(shuffled_after)) == expected


def test_moved_weight_by_hand_and_its_bad_weights_named() -> None:
    a = {"x": [TP("hot", 0), TP("cold", 0)], "y": [TP("cold", 1)], "gone": [TP("cold", 2)]}
    b = {"x": [TP("cold", 0), TP("cold", 2)], "y": [TP("hot", 0), TP("cold", 1)]}
    weights: dict[tuple[str, int | None], float] = {("hot", None): 10.0, ("cold", None): 1.0, ("hot", 0): 7.5}
    assert moved_weight(a, b, weights) == 7.5  # hot-0 moved x -> y; cold-2 was orphaned, not moved
    assert moved_weight(a, b, weights, members_after=["y"]) == 0.0  # x counted as gone: orphaned, not moved
    assert moved_weight(a, b, {}, default=2.0) == 2.0
    table = PartitionWeights(weights, {"hot": 1, "cold": 2})  # cold-2 and cold-3 outside it: read as weighted_load
    assert table.moved(a, b) == 7.5
    assert table.moved(a, b, members_after=["y"]) == 0.0
    assert table.moved(a, {"x": [TP("cold", 3)], "y": [TP("cold", 0), TP("hot", 0)]}) == 8.5
    assert PartitionWeights({}, {"cold": 4}, default=2.0).moved(a, b) == 2.0
    with pytest.raises(InvalidWeightError, match="cold"):
        moved_weight(a, b, {("cold", 3): -1.0})


@given(groups(), groups(), st.floats(0, 600), st.floats(0, 60))
def test_pause_cost_properties(first: Group, second: Group, rebalance_s: float, heartbeat_s: float) -> None:
    """Cooperative pauses at most twice what eager does (moved is part of eager's revoked); nothing moved, no pause."""
    before = RangeAssignor().assign(first.cluster, first.subscriptions)
    after = RangeAssignor().assign(second.cluster, second.subscriptions)
    m = movement(before, after)
    eager, cooperative, consumer = (
        pause_partition_seconds(
            protocol,
            moved=m.moved,
            survivors_owned=m.revoked(RebalanceProtocol.EAGER),
            rebalance_seconds=rebalance_s,
            heartbeat_seconds=heartbeat_s,
        )
        for protocol in ("EAGER", "COOPERATIVE", "CONSUMER")
    )
    assert 0.0 <= cooperative <= 2 * eager + 1e-9
    assert consumer == m.moved * heartbeat_s
    if m.moved == 0:
        assert cooperative == consumer == 0.0


_TOPICS = ("a", "b", "c")


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Cluster, dict[str, Subscription], dict[str, list[TopicPartition]]]:
    counts = {t: draw(st.integers(0, 5)) for t in _TOPICS}
    members = draw(st.lists(st.sampled_from("mnopqr"), min_size=1, max_size=5, unique=True))
    subs = {m: Subscription(draw(st.lists(st.sampled_from(_TOPICS), max_size=3))) for m in members}
    every = [TP(t, p) for t in _TOPICS for p in range(counts[t] + 1)]  # one partition beyond each topic
    assignment = {m: draw(st.lists(st.sampled_from(every), max_size=6)) for m in members}
    return Cluster(counts), subs, assignment


def _valid(cluster: Cluster, subs: dict[str, Subscription], assignment: dict[str, list[TopicPartition]]) -> bool:
    """Validity spelled out partition by partition."""
    owners: dict[TopicPartition, str] = {}
    for member, partitions in assignment.items():
        for tp in partitions:
            if tp in owners or tp.topic not in subs[member].topics:
                return False
            if tp.partition >= (cluster.partition_count(tp.topic) or 0):
                return False
            owners[tp] = member
    expected = {TP(t, p) for s in subs.values() for t in s.topics for p in range(cluster.partition_count(t) or 0)}
    return set(owners) == expected


@given(_cases())
def test_check_assignment_finds_a_violation_exactly_when_one_exists(
    case: tuple[Cluster, dict[str, Subscription], dict[str, list[TopicPartition]]],
) -> None:
    cluster, subs, assignment = case
    assert (not check_assignment(cluster, subs, assignment)) == _valid(cluster, subs, assignment)


@given(_cases())
def test_balance_topic_spread_is_topic_spreads(
    case: tuple[Cluster, dict[str, Subscription], dict[str, list[TopicPartition]]],
) -> None:
    """balance() counts spreads one topic list at a time when every member has a subscription."""
    _, subs, assignment = case
    spreads = topic_spreads(assignment, subs)
    measured = balance(assignment, subs)
    assert measured.topic_spread_sum == sum(spreads.values())
    assert measured.topic_spread == max(spreads.values(), default=0)
    assert measured.worst_topic == max(spreads, key=spreads.__getitem__, default=None)


@given(groups(), st.data())
def test_check_assignment_reads_a_one_shot_iterable_once(group: Group, data: st.DataObject) -> None:
    """Generators give the same violations as tuples (the fast path used to consume them)."""
    result = get_assignor("range").assign(group.cluster, group.subscriptions)
    assignment = {m: a.partitions for m, a in result.items()}
    broken: bool = data.draw(st.booleans(), label="break it")
    if assignment and broken:
        member = data.draw(st.sampled_from(sorted(assignment)), label="member")
        assignment[member] = (*assignment[member], TopicPartition("not-subscribed", 0))
    expected = check_assignment(group.cluster, group.subscriptions, assignment)
    one_shot = {m: (tp for tp in partitions) for m, partitions in assignment.items()}
    assert check_assignment(group.cluster, group.subscriptions, one_shot) == expected


def test_check_assignment_of_generators_pinned() -> None:
    cluster = Cluster({"t": 2})
    subscriptions = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    valid = {"a": iter([TopicPartition("t", 0)]), "b": iter([TopicPartition("t", 1)])}
    assert check_assignment(cluster, subscriptions, valid) == []
    twice = {"a": iter([TopicPartition("t", 0)]), "b": iter([TopicPartition("t", 0)])}
    assert [v.kind for v in check_assignment(cluster, subscriptions, twice)] == ["duplicate", "unassigned"]


@pytest.mark.parametrize("count", [0, 1, 7, 1024, 1025, 3000])
def test_check_assignment_reads_the_cached_partition_sets_as_built_ones(count: int) -> None:
    """Topics up to _SET_CACHED partitions are checked against a set built once: the same partitions as a set
    built each time; above it, against a fresh one. Either way a missing or extra partition is found."""
    from assignors._core import metrics as core
    from assignors._core.model import topic_partitions

    assert core._partition_set("t", count) == set(topic_partitions("t", count))
    cluster = Cluster({"t": count})
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    every = topic_partitions("t", count)
    whole = {"a": every[::2], "b": every[1::2]}
    assert check_assignment(cluster, subs, whole) == []
    if count:
        short = {"a": every[:-1], "b": []}
        assert [v.kind for v in check_assignment(cluster, subs, short)] == ["unassigned"]
    extra = {"a": [*every[::2], TP("t", count)], "b": every[1::2]}
    assert [v.kind for v in check_assignment(cluster, subs, extra)] == ["unknown-partition"]
