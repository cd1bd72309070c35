"""StickyAssignor and CooperativeStickyAssignor: worked examples and the properties the kit does not run.

Validity, balance, determinism, the fixpoint, needless movement, cooperative safety and
convergence run once, through ``check_assignor`` in tests/kit/test_kit.py.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
)
from assignors._builtin.sticky.core import sticky_assign
from assignors._builtin.sticky.racks import RackInfo
from assignors._builtin.sticky.uniform import assign_single_claims, plain_identical
from assignors._core.base import validate_group
from assignors.consumer_protocol import encode_sticky_user_data
from assignors.testing import (
    Group,
    balance_problems,
    groups,
    owning,
    rack_aware,
    rack_locality_problems,
    settle,
)

TP = TopicPartition
StickyType = type[StickyAssignor] | type[CooperativeStickyAssignor]
STICKY: list[StickyType] = [StickyAssignor, CooperativeStickyAssignor]


def strings(result: Mapping[str, Assignment]) -> dict[str, list[str]]:
    return {member: [str(tp) for tp in a.partitions] for member, a in result.items()}


def test_mixed_subscriptions_fresh() -> None:
    """KIP-54's shape: c1[t1], c2[t1,t2], c3[t1,t2,t3] give c1[t1p0], c2[t2p0,t2p1], c3[t3p0,t3p1]."""
    subs = {"c1": Subscription(["t1"]), "c2": Subscription(["t1", "t2"]), "c3": Subscription(["t1", "t2", "t3"])}
    assert strings(StickyAssignor().assign(Cluster({"t1": 1, "t2": 2, "t3": 2}), subs)) == {
        "c1": ["t1-0"],
        "c2": ["t2-0", "t2-1"],
        "c3": ["t3-0", "t3-1"],
    }


def test_member_leaves_identical() -> None:
    """Kafka's Javadoc example 1 renamed: fresh = round robin's result; c1 leaves, survivors keep theirs."""
    topics = ["t1", "t2", "t3", "t4"]
    cluster = Cluster(dict.fromkeys(topics, 2))
    fresh = StickyAssignor().assign(cluster, {m: Subscription(topics) for m in ("c1", "c2", "c3")})
    assert strings(fresh) == {"c1": ["t1-0", "t2-1", "t4-0"], "c2": ["t1-1", "t3-0", "t4-1"], "c3": ["t2-0", "t3-1"]}
    survivors = {m: Subscription(topics, owned_partitions=fresh[m].partitions, generation_id=1) for m in ("c2", "c3")}
    assert strings(StickyAssignor().assign(cluster, survivors)) == {
        "c2": ["t1-1", "t3-0", "t4-1", "t2-1"],
        "c3": ["t2-0", "t3-1", "t1-0", "t4-0"],
    }


def test_kip54_example_member_leaves_mixed() -> None:
    """KIP-54 example 2: after C0 leaves, C1 keeps t1p0,t1p1 and takes t0p0; C2 keeps t2."""
    cluster = Cluster({"t0": 1, "t1": 2, "t2": 3})
    subs = {
        "C1": Subscription(["t0", "t1"], owned_partitions=[TP("t1", 0), TP("t1", 1)], generation_id=1),
        "C2": Subscription(["t0", "t1", "t2"], owned_partitions=[TP("t2", p) for p in range(3)], generation_id=1),
    }
    assert strings(StickyAssignor().assign(cluster, subs)) == {
        "C1": ["t1-0", "t1-1", "t0-0"],
        "C2": ["t2-0", "t2-1", "t2-2"],
    }


def test_cooperative_two_rounds() -> None:
    """KIP-429: c1[p1,p2], c2[p3]; c3 joins: round 1 c1[p1], c2[p3], p2 unowned; round 2 c3[p2]."""
    cluster = Cluster({"t": 3})
    subs = {
        "c1": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)], generation_id=1),
        "c2": Subscription(["t"], owned_partitions=[TP("t", 2)], generation_id=1),
        "c3": Subscription(["t"]),
    }
    first = CooperativeStickyAssignor().assign(cluster, subs)
    assert strings(first) == {"c1": ["t-0"], "c2": ["t-2"], "c3": []}
    second_subs = {m: owning(s, first[m].partitions, 2) for m, s in subs.items()}
    assert strings(CooperativeStickyAssignor().assign(cluster, second_subs)) == {
        "c1": ["t-0"],
        "c2": ["t-2"],
        "c3": ["t-1"],
    }


@pytest.mark.parametrize("assignor", STICKY)
def test_empty_subscription_never_receives_partitions(assignor: StickyType) -> None:
    """Kafka's accident (a{} iterated first gets partitions) is fixed: a{} gets nothing."""
    subs = {"a": Subscription([]), "b": Subscription(["t"]), "c": Subscription(["t"])}
    assert strings(assignor().assign(Cluster({"t": 4}), subs)) == {"a": [], "b": ["t-0", "t-2"], "c": ["t-1", "t-3"]}


@pytest.mark.parametrize("assignor", STICKY)
def test_higher_generation_wins_and_ties_are_reassigned(assignor: StickyType) -> None:
    """t-0: gen 3 beats gen 2 (member's own generation, Kafka's quirk fixed); t-1: two gen-2 claims, reassigned."""
    subs = {
        "a": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)], generation_id=2),
        "b": Subscription(["t"], owned_partitions=[TP("t", 0)], generation_id=3),
        "c": Subscription(["t"], owned_partitions=[TP("t", 1)], generation_id=2),
    }
    result = strings(assignor().assign(Cluster({"t": 3}), subs))
    assert "t-0" in result["b"]
    if assignor is CooperativeStickyAssignor:
        assert "t-1" not in {p for parts in result.values() for p in parts}  # withheld: both claimers still hold it
    else:
        assert sorted(p for parts in result.values() for p in parts) == ["t-0", "t-1", "t-2"]


def test_sticky_reads_java_and_kafka_python_user_data() -> None:
    """Java V1, V0 and kafka-python's version-prefixed V1 all carry the previous assignment."""
    cluster = Cluster({"t1": 3, "t2": 2})
    prev = [TP("t1", 0), TP("t1", 2), TP("t2", 1)]
    v1 = encode_sticky_user_data(prev, 5)
    assert v1.hex() == "000000020002743100000002000000000000000200027432000000010000000100000005"
    for data in (v1, encode_sticky_user_data(prev, None), b"\x00\x01" + v1):
        subs = {"a": Subscription(["t1", "t2"], user_data=data), "b": Subscription(["t1", "t2"])}
        result = StickyAssignor().assign(cluster, subs)
        assert set(prev) <= set(result["a"].partitions)


def test_sticky_user_data_wins_over_owned_partitions() -> None:
    """Like Kafka, a Sticky member's user data decides what it owned, not the subscription's fields."""
    data = encode_sticky_user_data([TP("t", 1)], 4)
    subs = {
        "a": Subscription(["t"], user_data=data, owned_partitions=[TP("t", 0)], generation_id=9),
        "b": Subscription(["t"]),
    }
    assert strings(StickyAssignor().assign(Cluster({"t": 2}), subs)) == {"a": ["t-1"], "b": ["t-0"]}


@pytest.mark.parametrize("garbage", [b"\x00", b"\xff\xff\xff\xff", b"\x00\x00\x00\x05\x00\x02t", b"junk-junk-junk"])
def test_undecodable_user_data_is_no_history(garbage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    """Bad user data is logged and treated as no history; assign never fails because of it."""
    subs = {"a": Subscription(["t"], user_data=garbage), "b": Subscription(["t"])}
    with caplog.at_level(logging.WARNING, logger="assignors"):
        result = StickyAssignor().assign(Cluster({"t": 2}), subs)
    assert strings(result) == {"a": ["t-0"], "b": ["t-1"]}
    assert "undecodable sticky user data" in caplog.text


def test_state_is_per_instance() -> None:
    """Two consumers in one process keep separate generations and assignments (aiokafka issue 1175)."""
    one, two = CooperativeStickyAssignor(), CooperativeStickyAssignor()
    one.on_assignment(Assignment([TP("t", 0)]), 7)
    assert one.subscription_user_data(["t"]) == b"\x00\x00\x00\x07"
    assert two.subscription_user_data(["t"]) == b"\xff\xff\xff\xff"
    sticky = StickyAssignor()
    assert sticky.subscription_user_data(["t"]) is None
    sticky.on_assignment(Assignment([TP("t", 1)]), 3)
    assert sticky.subscription_user_data(["t"]) == encode_sticky_user_data([TP("t", 1)], 3)


def test_cooperative_reads_generation_from_user_data() -> None:
    """Without a protocol v2 generation, the 4-byte user data gives it (protocol v1 members)."""
    subs = {
        "a": Subscription(["t"], owned_partitions=[TP("t", 0)], user_data=b"\x00\x00\x00\x05"),
        "b": Subscription(["t"], owned_partitions=[TP("t", 0)], generation_id=4),
    }
    result = strings(CooperativeStickyAssignor().assign(Cluster({"t": 2}), subs))
    assert "t-0" in result["a"]


@given(group=groups(identical=True, racks=False, missing_topics=False), data=st.data())
def test_members_leaving_moves_only_what_quotas_require(group: Group, data: st.DataObject) -> None:
    """Identical subscriptions: when members leave, survivors give up exactly the minimum the quotas require."""
    fresh = StickyAssignor().assign(group.cluster, group.subscriptions)
    leaving = data.draw(st.sets(st.sampled_from(sorted(group.subscriptions))))
    survivors = {m: owning(s, fresh[m].partitions, 1) for m, s in group.subscriptions.items() if m not in leaving}
    if not survivors:
        return
    result = StickyAssignor().assign(group.cluster, survivors)
    taken = sum(len(set(s.owned_partitions) - set(result[m].partitions)) for m, s in survivors.items())
    total = sum(group.cluster.partition_count(t) or 0 for t in next(iter(survivors.values())).topics)
    low, extra = divmod(total, len(survivors))
    owned = sorted((len(s.owned_partitions) for s in survivors.values()), reverse=True)
    minimum = sum(max(0, n - (low + 1 if i < extra else low)) for i, n in enumerate(owned))
    assert taken == minimum
    assert balance_problems(survivors, result) == []


@given(group=groups(owned=False), data=st.data())
def test_cooperative_converges_in_two_rounds_after_one_change(group: Group, data: st.DataObject) -> None:
    """From a settled group, one member joining or leaving settles within two rounds.

    With rack-aware assignment a third round may move a rack-mismatched partition to a
    member that the second round left with room, as Kafka's own assignor does.
    """
    settled, _ = settle(CooperativeStickyAssignor, group.cluster, group.subscriptions, 1)
    subs = {m: owning(s, settled[m].partitions, 10) for m, s in group.subscriptions.items()}
    if data.draw(st.booleans()) or len(subs) == 1:
        subs["joiner"] = Subscription(data.draw(st.sampled_from([s.topics for s in subs.values()])))
    else:
        del subs[data.draw(st.sampled_from(sorted(subs)))]
    _, rounds = settle(CooperativeStickyAssignor, group.cluster, subs, 10)
    assert rounds <= (3 if rack_aware(group.cluster, subs) else 2)


RACKED = Cluster(
    {"t": 4},
    partition_racks={TP("t", 0): ["r2"], TP("t", 1): ["r1", "r2"], TP("t", 2): ["r1"], TP("t", 3): ["r1", "r2"]},
)


@pytest.mark.parametrize("assignor", STICKY)
def test_rack_mismatched_owned_partitions_trade_places(assignor: StickyType) -> None:
    """KIP-881: t-0 (only on r2) and t-2 (only on r1) sit on the wrong racks; each goes to its rack-local member."""
    subs = {
        "a": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)], generation_id=1, rack_id="r1"),
        "b": Subscription(["t"], owned_partitions=[TP("t", 2), TP("t", 3)], generation_id=1, rack_id="r2"),
    }
    result, rounds = settle(assignor, RACKED, subs, 1)
    assert strings(result) == {"a": ["t-1", "t-2"], "b": ["t-3", "t-0"]}
    assert rounds == (1 if assignor is StickyAssignor else 2)


def test_rack_mismatched_partition_moves_to_a_lighter_local_member() -> None:
    """Identical subscriptions: t-0 leaves its off-rack owner for a rack-local member holding one fewer."""
    both = ["r1", "r2"]
    cluster = Cluster({"t": 3}, partition_racks={TP("t", 0): ["r2"], TP("t", 1): both, TP("t", 2): both})
    subs = {
        "a": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)], generation_id=1, rack_id="r1"),
        "b": Subscription(["t"], owned_partitions=[TP("t", 2)], generation_id=1, rack_id="r2"),
    }
    assert strings(StickyAssignor().assign(cluster, subs)) == {"a": ["t-1"], "b": ["t-2", "t-0"]}


def test_rack_locality_never_costs_balance() -> None:
    """Every partition is on r1 but members sit on r1 and r2: the r2 member still gets its share."""
    cluster = Cluster({"t": 4, "u": 2}, partition_racks={TP("t", p): ["r1"] for p in range(4)})
    subs = {"a": Subscription(["t", "u"], rack_id="r1"), "b": Subscription(["t", "u"], rack_id="r2")}
    result = strings(StickyAssignor().assign(cluster, subs))
    assert result == {"a": ["t-0", "t-1", "t-2"], "b": ["u-0", "u-1", "t-3"]}


def test_owned_off_rack_partition_stays_when_no_local_member_has_room() -> None:
    """Stickiness first: with every rack-local member full, an off-rack owner keeps its partition."""
    subs = {
        "a": Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 2)], generation_id=1, rack_id="r1"),
        "b": Subscription(["t"], owned_partitions=[TP("t", 1), TP("t", 3)], generation_id=1, rack_id="r2"),
    }
    assert strings(StickyAssignor().assign(RACKED, subs)) == {"a": ["t-0", "t-2"], "b": ["t-1", "t-3"]}


def test_rack_of_a_member_without_topics_turns_rack_awareness_on() -> None:
    """Kafka's ``AbstractStickyAssignor.RackInfo`` decides on every member's rack, also one subscribing to no
    existing topic: here c0's rack a (t1-8's rack) turns rack-aware assignment on, so c3 (rack b, where no
    partition is) takes the smaller share and c4 (no rack: local everywhere) the larger. Found against Kafka's own
    Java (tests/java/test_sticky.py), where ours had left rack awareness off and given c3 five mismatches."""
    cluster = Cluster({"t0": 0, "t1": 9}, partition_racks={TP("t1", 8): ["a"]})
    subs = {
        "c0": Subscription([], rack_id="a"),
        "c3": Subscription(["t0", "t1"], rack_id="b"),
        "c4": Subscription(["t0", "t1"]),
    }
    assert rack_aware(cluster, subs)
    assert strings(StickyAssignor().assign(cluster, subs)) == {
        "c0": [],
        "c3": ["t1-5", "t1-6", "t1-7", "t1-8"],
        "c4": ["t1-0", "t1-1", "t1-2", "t1-3", "t1-4"],
    }


@pytest.mark.parametrize("assignor", STICKY)
@given(group=groups(owned=True, racks=True))
def test_rack_aware_results_admit_no_locality_trade(assignor: StickyType, group: Group) -> None:
    """Settled rack-aware assignments admit no load-keeping trade that would add locality (the kit checks the rest)."""
    result, _ = settle(assignor, group.cluster, group.subscriptions, 4)
    subs = {m: owning(s, (), -1) for m, s in group.subscriptions.items()}
    assert rack_locality_problems(group.cluster, subs, result) == []


@given(group=groups(racks=True, max_topics=5))
def test_off_rack_partitions_are_those_on_none_of_the_member_racks(group: Group) -> None:
    """``RackInfo.off_rack`` finds them by layout numbers in flat arrays; here, by each partition's racks."""
    cluster, subscriptions = group.cluster, group.subscriptions
    counts = {t: c for s in subscriptions.values() for t in s.topics if (c := cluster.partition_count(t))}
    eligible = sorted(m for m, s in subscriptions.items() if set(s.topics) & counts.keys())
    racks = RackInfo.build(cluster, counts, subscriptions, eligible)
    every = [TP(t, p) for t in sorted(counts) for p in range(counts[t])]
    for member in eligible:
        rack = subscriptions[member].rack_id
        expected = [tp for tp in every if rack is not None and rack not in cluster.racks_of(tp)]
        assert racks.off_rack(member, every) == expected, member
        assert racks.off_rack(member, every[::-1]) == expected[::-1], member


def test_off_rack_partitions_with_more_layouts_than_a_byte_numbers() -> None:
    """300 distinct replica-rack layouts: the layout numbers no longer fit a byte array."""
    racks = [f"r{i:03d}" for i in range(300)]
    cluster = Cluster({"t": 300}, partition_racks={TP("t", p): [racks[p]] for p in range(300)})
    subscriptions = {"a": Subscription(["t"], rack_id="r007"), "b": Subscription(["t"])}
    info = RackInfo.build(cluster, {"t": 300}, subscriptions, ["a", "b"])
    every = [TP("t", p) for p in range(300)]
    assert info.enabled
    assert info.off_rack("a", every) == [tp for tp in every if tp.partition != 7]
    assert info.off_rack("b", every) == []


@pytest.mark.parametrize("assignor", STICKY)
def test_heaviest_holder_gives_first(assignor: StickyType) -> None:
    """A new member is fed by the heaviest holder; lighter holders keep everything (found by the simulator).

    Feeding m7 from m5 first (t1-2) and then from m4 left m5 one partition short: a move for nothing.
    """
    cluster = Cluster({"t0": 1, "t1": 4, "t2": 7})
    subs = {
        "m4": Subscription(["t2"], owned_partitions=[TP("t2", p) for p in range(7)], generation_id=8),
        "m5": Subscription(["t1"], owned_partitions=[TP("t1", p) for p in range(3)], generation_id=8),
        "m6": Subscription(["t0", "t1"], owned_partitions=[TP("t0", 0), TP("t1", 3)], generation_id=8),
        "m7": Subscription(["t0", "t1", "t2"]),
    }
    result = strings(assignor().assign(cluster, subs))
    assert result["m5"] == ["t1-0", "t1-1", "t1-2"]
    assert result["m6"] == ["t0-0", "t1-3"]
    assert result["m4"] == ["t2-0", "t2-1", "t2-2", "t2-3"]
    assert result["m7"] == ([] if assignor is CooperativeStickyAssignor else ["t2-6", "t2-5", "t2-4"])


def test_cooperative_never_withholds_a_partition_from_its_own_owner() -> None:
    """A partition balanced away and back to its owner is kept, not withheld as a transfer (found by the simulator)."""
    cluster = Cluster({"t0": 2, "t1": 5})
    subs = {
        "a": Subscription(["t0"], owned_partitions=[TP("t0", 0), TP("t0", 1)], generation_id=15),
        "b": Subscription(["t1"], owned_partitions=[TP("t1", p) for p in range(5)], generation_id=15),
        "c": Subscription(["t0", "t1"]),
    }
    result = strings(CooperativeStickyAssignor().assign(cluster, subs))
    assert result == {"a": ["t0-0", "t0-1"], "b": ["t1-0", "t1-1", "t1-2"], "c": []}  # c gets t1-3, t1-4 next round


@given(group=groups(identical=True), data=st.data())
def test_short_paths_give_what_the_general_path_gives(group: Group, data: st.DataObject) -> None:
    """Identical subscriptions take short paths (a fresh group's round robin; claims all single and valid): same result.

    Half the groups own what a fresh assignment gave them, some members nothing (as if
    they had just joined): every claim is single and valid, and the short path is taken.
    """
    subs = group.subscriptions
    settled = data.draw(st.booleans())
    if settled:
        fresh = StickyAssignor().assign(group.cluster, {m: owning(s, (), -1) for m, s in subs.items()})
        joined = data.draw(st.sets(st.sampled_from(sorted(subs))))
        subs = {m: owning(s, () if m in joined else fresh[m].partitions, 1) for m, s in subs.items()}
    counts = validate_group(group.cluster, subs)
    members = plain_identical(group.cluster, counts, subs)
    for assignor in STICKY:
        instance = assignor()
        claims = instance._claims(subs)
        general = instance._finish(sticky_assign(group.cluster, counts, subs, claims))
        result = instance.assign(group.cluster, subs)
        assert {m: a.partitions for m, a in result.items()} == {m: tuple(p) for m, p in general.items()}
        if settled and claims and members is not None:
            assert assign_single_claims(counts, members, claims) is not None
