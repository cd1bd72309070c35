"""The consumer-protocol group model: pinned timelines, the online upgrade, and invariants on random events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import settings

from assignors import Cluster, SimulationError, TopicPartition, UnknownAssignorError
from assignors.consumer_group import (
    ConsumerGroupSimulator,
    RangeAssignor,
    UniformAssignor,
    remote_assignor,
)
from assignors.rebalance import AddPartitions, Crash, Event, Join, Leave, Restart, Subscribe, parse_scenario
from assignors.testing import consumer_group_problems, group_state_machine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
U = ("uniform",)
ORDERS = ("orders",)
COOP = ("cooperative-sticky",)


def run(events: list[Event], partitions: dict[str, int] | None = None, **options: float) -> ConsumerGroupSimulator:
    sim = ConsumerGroupSimulator(partitions or {"orders": 6}, **options)
    sim.run(events)
    assert consumer_group_problems(sim.timeline) == []
    return sim


def lines(sim: ConsumerGroupSimulator) -> list[str]:
    return sim.timeline.render().splitlines()


TestUniformGroup = group_state_machine("uniform").TestCase
TestConsumerRangeGroup = group_state_machine(RangeAssignor).TestCase


# Two static members a and b joining at t=0: b waits for a to revoke, then takes its half.
STATIC_PAIR = """\
t=0 a: joined (consumer, uniform); group epoch 1
t=0 target at epoch 1 (uniform)
t=0 a: heartbeat: epoch 1 STABLE +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=0 b: joined (consumer, uniform); group epoch 2
t=0 target at epoch 2 (uniform)
t=0 b: heartbeat: epoch 2 UNRELEASED_PARTITIONS
t=5 a: heartbeat: epoch 1 UNREVOKED_PARTITIONS -[orders-3, orders-4, orders-5]
t=5 a: heartbeat: epoch 2 STABLE
t=5 b: heartbeat: epoch 2 STABLE +[orders-3, orders-4, orders-5]
"""

TIMELINES: dict[str, tuple[list[Event], dict[str, int] | None, str]] = {
    "join_leave_crash": (
        [Join(0, "a", ORDERS, U), Join(1, "b", ORDERS, U), Join(20, "c", ORDERS, U), Leave(40, "b"), Crash(60, "c")],
        None,
        """\
t=0 a: joined (consumer, uniform); group epoch 1
t=0 target at epoch 1 (uniform)
t=0 a: heartbeat: epoch 1 STABLE +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=1 b: joined (consumer, uniform); group epoch 2
t=1 target at epoch 2 (uniform)
t=1 b: heartbeat: epoch 2 UNRELEASED_PARTITIONS
t=5 a: heartbeat: epoch 1 UNREVOKED_PARTITIONS -[orders-3, orders-4, orders-5]
t=5 a: heartbeat: epoch 2 STABLE
t=6 b: heartbeat: epoch 2 STABLE +[orders-3, orders-4, orders-5]
t=20 c: joined (consumer, uniform); group epoch 3
t=20 target at epoch 3 (uniform)
t=20 c: heartbeat: epoch 3 UNRELEASED_PARTITIONS
t=21 b: heartbeat: epoch 2 UNREVOKED_PARTITIONS -[orders-5]
t=21 b: heartbeat: epoch 3 STABLE
t=25 a: heartbeat: epoch 2 UNREVOKED_PARTITIONS -[orders-2]
t=25 a: heartbeat: epoch 3 STABLE
t=25 c: heartbeat: epoch 3 STABLE +[orders-2, orders-5]
t=40 b: leave -[orders-3, orders-4]
t=45 target at epoch 4 (uniform)
t=45 a: heartbeat: epoch 4 STABLE +[orders-3]
t=45 c: heartbeat: epoch 4 STABLE +[orders-4]
t=60 c: crashed -[orders-2, orders-4, orders-5]
t=105 c: fenced: session timeout; group epoch 5
t=105 target at epoch 5 (uniform)
t=105 a: heartbeat: epoch 5 STABLE +[orders-2, orders-4, orders-5]
""",
    ),
    "static_restart_within_session_timeout": (
        [Join(0, "a", ORDERS, U, instance_id="ia"), Join(0, "b", ORDERS, U, instance_id="ib"), Restart(12, "b", 10)],
        None,
        STATIC_PAIR
        + """\
t=12 b: restart, back in 10s -[orders-3, orders-4, orders-5]
t=22 b: replaced b (consumer, uniform); group epoch 2
t=22 b: heartbeat: epoch 2 STABLE +[orders-3, orders-4, orders-5]
""",
    ),
    "static_restart_after_session_timeout": (
        [Join(0, "a", ORDERS, U, instance_id="ia"), Join(0, "b", ORDERS, U, instance_id="ib"), Restart(12, "b", 60)],
        None,
        STATIC_PAIR
        + """\
t=12 b: restart, back in 60s -[orders-3, orders-4, orders-5]
t=57 b: fenced: session timeout; group epoch 3
t=60 target at epoch 3 (uniform)
t=60 a: heartbeat: epoch 3 STABLE +[orders-3, orders-4, orders-5]
t=72 b: joined (consumer, uniform); group epoch 4
t=72 target at epoch 4 (uniform)
t=72 b: heartbeat: epoch 4 UNRELEASED_PARTITIONS
t=75 a: heartbeat: epoch 3 UNREVOKED_PARTITIONS -[orders-3, orders-4, orders-5]
t=75 a: heartbeat: epoch 4 STABLE
t=77 b: heartbeat: epoch 4 STABLE +[orders-3, orders-4, orders-5]
""",
    ),
    "downgrade_when_the_last_consumer_member_leaves": (
        [Join(0, "a", ORDERS, COOP), Join(0, "b", ORDERS, COOP), Join(10, "c", ORDERS, ("consumer",)), Leave(30, "c")],
        None,
        """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=0 a: classic generation 2 (b joined) -[orders-3, orders-4, orders-5]
t=0 b: classic generation 3 (b joined) +[orders-3, orders-4, orders-5]
t=10 converted to a consumer group at epoch 3
t=10 c: joined (consumer, server default); group epoch 4
t=10 target at epoch 4 (uniform)
t=10 c: heartbeat: epoch 4 UNRELEASED_PARTITIONS
t=13 a: heartbeat: epoch 3 UNREVOKED_PARTITIONS -[orders-2]
t=13 b: heartbeat: epoch 3 UNREVOKED_PARTITIONS -[orders-5]
t=13 a: heartbeat: epoch 4 STABLE
t=13 b: heartbeat: epoch 4 STABLE
t=15 c: heartbeat: epoch 4 STABLE +[orders-2, orders-5]
t=30 c: leave -[orders-2, orders-5]
t=30 converted back to a classic group at generation 5
t=30 a: classic generation 6 (the last consumer-protocol member left) +[orders-2]
t=30 b: classic generation 6 (the last consumer-protocol member left) +[orders-5]
""",
    ),
    "subscription_change_and_new_partitions": (
        [
            Join(0, "a", ("orders", "pay"), U),
            Join(0, "b", ORDERS, U),
            Subscribe(10, "b", ("orders", "pay")),
            AddPartitions(20, "pay", 4),
        ],
        {"orders": 2, "pay": 2},
        """\
t=0 a: joined (consumer, uniform); group epoch 1
t=0 target at epoch 1 (uniform)
t=0 a: heartbeat: epoch 1 STABLE +[orders-0, orders-1, pay-0, pay-1]
t=0 b: joined (consumer, uniform); group epoch 2
t=0 target at epoch 2 (uniform)
t=0 b: heartbeat: epoch 2 UNRELEASED_PARTITIONS
t=5 a: heartbeat: epoch 1 UNREVOKED_PARTITIONS -[orders-0, orders-1]
t=5 a: heartbeat: epoch 2 STABLE
t=5 b: heartbeat: epoch 2 STABLE +[orders-0, orders-1]
t=10 b: subscribed to ['orders', 'pay']; group epoch 3
t=15 target at epoch 3 (uniform)
t=15 a: heartbeat: epoch 3 STABLE
t=15 b: heartbeat: epoch 3 STABLE
t=20 pay has 4 partitions; group epoch 4
t=25 target at epoch 4 (uniform)
t=25 a: heartbeat: epoch 4 STABLE +[pay-2]
t=25 b: heartbeat: epoch 4 STABLE +[pay-3]
""",
    ),
    "consumer_range_static_members_first": (
        [
            Join(0, "a", ORDERS, ("consumer-range",), instance_id="z"),
            Join(0, "b", ORDERS, ("consumer-range",), instance_id="y"),
        ],
        None,
        """\
t=0 a: joined (consumer, consumer-range); group epoch 1
t=0 target at epoch 1 (consumer-range)
t=0 a: heartbeat: epoch 1 STABLE +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=0 b: joined (consumer, consumer-range); group epoch 2
t=0 target at epoch 2 (consumer-range)
t=0 b: heartbeat: epoch 2 UNRELEASED_PARTITIONS
t=5 a: heartbeat: epoch 1 UNREVOKED_PARTITIONS -[orders-0, orders-1, orders-2]
t=5 a: heartbeat: epoch 2 STABLE
t=5 b: heartbeat: epoch 2 STABLE +[orders-0, orders-1, orders-2]
""",
    ),
    # Downgraded (uniform, then back as cooperative-sticky), four members on two partitions: the leave of d, which
    # owns nothing, is still a classic generation (GroupMetadataManager.prepareRebalance on a LeaveGroup); the
    # timeline used to end on "d: leave", with d still counted in the group, so not stable.
    "a_leave_that_moves_nothing_is_a_generation": (
        [
            Join(0, "a", ORDERS, U),
            Restart(10, "a", 5, assignors=COOP),
            Join(30, "b", ORDERS, COOP),
            Join(31, "c", ORDERS, COOP),
            Join(32, "d", ORDERS, COOP),
            Leave(135, "d"),
        ],
        {"orders": 2},
        """\
t=0 a: joined (consumer, uniform); group epoch 1
t=0 target at epoch 1 (uniform)
t=0 a: heartbeat: epoch 1 STABLE +[orders-0, orders-1]
t=10 a: restart, back in 5s -[orders-0, orders-1]
t=10 empty
t=15 a: classic generation 3 (a joined) +[orders-0, orders-1]
t=30 a: classic generation 4 (b joined) -[orders-1]
t=30 b: classic generation 5 (b joined) +[orders-1]
t=31 classic generation 6 (c joined)
t=32 classic generation 7 (d joined)
t=135 d: leave
t=135 classic generation 8 (d left)
""",
    ),
    # The last consumer-protocol member, which owns nothing, leaves: GroupMetadataManager.convertToClassicGroup
    # prepares a rebalance ("Downgrade group ... from consumer to classic"), a generation even though nothing moves;
    # the timeline used to end on "converted back", an instant of the conversion, so not stable.
    "a_downgrade_that_moves_nothing_is_a_generation": (
        [Join(0, "a", ORDERS, COOP), Join(20, "b", ORDERS, U), Leave(60, "b")],
        {"orders": 1},
        """\
t=0 a: classic generation 1 (a joined) +[orders-0]
t=20 converted to a consumer group at epoch 1
t=20 b: joined (consumer, uniform); group epoch 2
t=20 target at epoch 2 (uniform)
t=20 b: heartbeat: epoch 2 STABLE
t=23 a: heartbeat: epoch 2 STABLE
t=60 b: leave
t=60 converted back to a classic group at generation 3
t=60 classic generation 4 (the last consumer-protocol member left)
""",
    ),
    # Kafka's group coordinator removes a member that has not rejoined when the join phase ends: a crashed member
    # is dropped by the next rebalance (c's join), its partitions go to the others, and its session timeout (t=55)
    # finds nothing to do (GroupSimulator's rule; the model used to keep a with its partitions until t=55).
    "a_member_down_during_a_rebalance_is_dropped": (
        [
            Join(0, "a", ORDERS, COOP, instance_id="a-1"),
            Join(0, "b", ORDERS, COOP),
            Crash(10, "a"),
            Join(20, "c", ORDERS, COOP),
        ],
        None,
        """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=0 a: classic generation 2 (b joined) -[orders-3, orders-4, orders-5]
t=0 b: classic generation 3 (b joined) +[orders-3, orders-4, orders-5]
t=10 a: crashed -[orders-0, orders-1, orders-2]
t=20 c: classic generation 4 (c joined; a down, dropped from the group) +[orders-0, orders-1, orders-2]
""",
    ),
    # Each classic member runs its own protocol (ConsumerCoordinator: the highest all its assignors support): b,
    # with range beside cooperative-sticky, is EAGER and revokes everything at each rebalance, while a and c,
    # COOPERATIVE, keep theirs (the model used to run the whole group EAGER, as its lowest member).
    "each_classic_member_runs_its_own_protocol": (
        [Join(0, "a", ORDERS, COOP), Join(10, "b", ORDERS, (*COOP, "range")), Join(20, "c", ORDERS, COOP)],
        None,
        """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=10 a: classic generation 2 (b joined) -[orders-3, orders-4, orders-5]
t=10 b: classic generation 3 (b joined) +[orders-3, orders-4, orders-5]
t=20 a: classic generation 4 (c joined) -[orders-2]
t=20 b: classic generation 4 (c joined) -[orders-3, orders-4, orders-5]
t=20 b: classic generation 4 (c joined) +[orders-4]
t=20 c: classic generation 4 (c joined) +[orders-3, orders-5]
t=20 b: classic generation 5 (c joined) -[orders-4]
t=20 b: classic generation 5 (c joined) +[orders-2, orders-4]
""",
    ),
    # The leader's ConsumerCoordinator rejoins when the metadata of the group's subscribed topics changes: payments,
    # which no member subscribes to, grows without a rebalance (the model used to rebalance: generation 2).
    "a_topic_nobody_subscribes_to_grows_without_a_rebalance": (
        [Join(0, "a", ORDERS, COOP), AddPartitions(10, "payments", 4), AddPartitions(20, "orders", 3)],
        {"orders": 2, "payments": 2},
        """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1]
t=10 payments has 4 partitions
t=20 a: classic generation 2 (orders has 3 partitions) +[orders-2]
""",
    ),
    # A static member back within its session timeout with the same topics, listed in another order, is the same
    # configuration: no rebalance (the model compared the lists as given and rebalanced: generation 2).
    "a_static_member_back_with_its_topics_in_another_order": (
        [Join(0, "a", ("payments", "orders"), COOP, instance_id="a-1"), Restart(10, "a", 5)],
        {"orders": 2, "payments": 2},
        """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1, payments-0, payments-1]
t=10 a: restart, back in 5s -[orders-0, orders-1, payments-0, payments-1]
t=15 a: static member back, no rebalance +[orders-0, orders-1, payments-0, payments-1]
""",
    ),
    # Each classic member has its own assignor instances, kept across rebalances, as each Kafka consumer does: d's
    # fresh StickyAssignor sends no user data before its first assignment (the model used to share one instance per
    # rebalance, which sent d's empty assignment at generation -1; then c kept t0-0 and t0-1, d took t0-2).
    "each_classic_member_has_its_own_assignor_instances": (
        [
            Join(0, "b", ("t0", "t2"), ("sticky",)),
            Join(30, "c", ("t0",), ("sticky",)),
            Join(30, "d", ("t0",), ("sticky",)),
        ],
        {"t0": 3, "t2": 4},
        """\
t=0 b: classic generation 1 (b joined) +[t0-0, t0-1, t0-2, t2-0, t2-1, t2-2, t2-3]
t=30 b: classic generation 2 (c joined) -[t0-0, t0-1, t0-2, t2-0, t2-1, t2-2, t2-3]
t=30 b: classic generation 2 (c joined) +[t2-0, t2-1, t2-2, t2-3]
t=30 c: classic generation 2 (c joined) +[t0-0, t0-1, t0-2]
t=30 b: classic generation 3 (d joined) -[t2-0, t2-1, t2-2, t2-3]
t=30 c: classic generation 3 (d joined) -[t0-0, t0-1, t0-2]
t=30 b: classic generation 3 (d joined) +[t2-0, t2-1, t2-2, t2-3]
t=30 c: classic generation 3 (d joined) +[t0-1, t0-2]
t=30 d: classic generation 3 (d joined) +[t0-0]
""",
    ),
}


UPGRADE = """\
t=0 a: classic generation 1 (a joined) +[orders-0, orders-1, orders-2, orders-3, orders-4, orders-5]
t=1 a: classic generation 2 (b joined) -[orders-3, orders-4, orders-5]
t=1 b: classic generation 3 (b joined) +[orders-3, orders-4, orders-5]
t=2 a: classic generation 4 (c joined) -[orders-2]
t=2 b: classic generation 4 (c joined) -[orders-5]
t=2 c: classic generation 5 (c joined) +[orders-2, orders-5]
t=60 a: restart, back in 5s -[orders-0, orders-1]
t=60 b: classic generation 6 (a left) +[orders-0]
t=60 c: classic generation 6 (a left) +[orders-1]
t=65 converted to a consumer group at epoch 6
t=65 a: joined (consumer, server default); group epoch 7
t=65 target at epoch 7 (uniform)
t=65 a: heartbeat: epoch 7 UNRELEASED_PARTITIONS
t=68 b: heartbeat: epoch 6 UNREVOKED_PARTITIONS -[orders-4]
t=68 c: heartbeat: epoch 6 UNREVOKED_PARTITIONS -[orders-5]
t=68 b: heartbeat: epoch 7 STABLE
t=68 c: heartbeat: epoch 7 STABLE
t=70 a: heartbeat: epoch 7 STABLE +[orders-4, orders-5]
t=120 b: restart, back in 5s -[orders-0, orders-3]
t=122 target at epoch 8 (uniform)
t=122 c: heartbeat: epoch 8 STABLE +[orders-0]
t=125 a: heartbeat: epoch 8 STABLE +[orders-3]
t=125 b: joined (consumer, server default); group epoch 9
t=125 target at epoch 9 (uniform)
t=125 c: heartbeat: epoch 8 UNREVOKED_PARTITIONS -[orders-2]
t=125 c: heartbeat: epoch 9 STABLE
t=125 a: heartbeat: epoch 8 UNREVOKED_PARTITIONS -[orders-5]
t=125 b: heartbeat: epoch 9 UNRELEASED_PARTITIONS +[orders-2]
t=125 a: heartbeat: epoch 9 STABLE
t=125 b: heartbeat: epoch 9 STABLE +[orders-5]
t=180 c: restart, back in 5s -[orders-0, orders-1]
t=185 target at epoch 10 (uniform)
t=185 a: heartbeat: epoch 10 STABLE +[orders-0]
t=185 b: heartbeat: epoch 10 STABLE +[orders-1]
t=185 c: joined (consumer, server default); group epoch 11
t=185 target at epoch 11 (uniform)
t=185 a: heartbeat: epoch 10 UNREVOKED_PARTITIONS -[orders-4]
t=185 b: heartbeat: epoch 10 UNREVOKED_PARTITIONS -[orders-5]
t=185 c: heartbeat: epoch 11 UNRELEASED_PARTITIONS
t=185 a: heartbeat: epoch 11 STABLE
t=185 b: heartbeat: epoch 11 STABLE
t=190 c: heartbeat: epoch 11 STABLE +[orders-4, orders-5]
t=240 d: joined (consumer, server default); group epoch 12
t=240 target at epoch 12 (uniform)
t=240 d: heartbeat: epoch 12 UNRELEASED_PARTITIONS
t=245 a: heartbeat: epoch 12 STABLE
t=245 b: heartbeat: epoch 11 UNREVOKED_PARTITIONS -[orders-2]
t=245 b: heartbeat: epoch 12 STABLE
t=245 c: heartbeat: epoch 12 STABLE
t=245 d: heartbeat: epoch 12 STABLE +[orders-2]
"""


@pytest.mark.parametrize("name", sorted(TIMELINES))
def test_pinned_timelines(name: str) -> None:
    """Hand-checked against KIP-848's rules: a new owner takes a partition only after the old owner's ack."""
    events, partitions, expected = TIMELINES[name]
    sim = run(events, partitions)
    assert sim.timeline.render() + "\n" == expected
    assert sim.timeline.instants[-1].stable


def test_upgrade_scenario() -> None:
    """Three cooperative-sticky consumers bounced one by one to group.protocol=consumer, then a fourth joins."""
    scenario = parse_scenario(json.loads((EXAMPLES / "upgrade-to-consumer-protocol.json").read_text()))
    sim = ConsumerGroupSimulator.from_scenario(scenario)
    sim.run(scenario.events)
    assert consumer_group_problems(sim.timeline) == []
    assert sim.timeline.render() + "\n" == UPGRADE
    protocols = [i.protocol for i in sim.timeline.instants]
    assert protocols[0] == "classic"
    assert protocols[-1] == "consumer"
    # The last classic assignment is the first target: nothing moves at the conversion itself.
    converted = next(i for i in sim.timeline.instants if i.text.startswith("converted"))
    assert converted.group_epoch == converted.assignment_epoch == 6
    final = sim.timeline.instants[-1]
    assert final.stable
    steps = json.loads(json.dumps(sim.timeline.to_json()))
    assert len(steps) == len(sim.timeline.instants)
    assert steps[-1]["owns"]["d"] == ["orders-2"]
    assert steps[-1]["protocol"] == "consumer"
    assert sorted(len(p) for p in final.owned.values()) == [1, 1, 2, 2]


def test_classic_rebalances_are_rack_aware() -> None:
    """KIP-881: a classic member sends its client.rack, and the leader's assignor matches it with the partitions'."""
    racks = {TopicPartition("orders", p): ["r1" if p < 3 else "r2"] for p in range(6)}
    sim = ConsumerGroupSimulator(Cluster({"orders": 6}, partition_racks=racks))
    sim.run([Join(0, "a", ORDERS, ("range",), rack="r2"), Join(0, "b", ORDERS, ("range",), rack="r1")])
    assert consumer_group_problems(sim.timeline) == []
    assert {m: sorted(p.partition for p in tps) for m, tps in sim.owned().items()} == {"a": [3, 4, 5], "b": [0, 1, 2]}


def test_remote_assignor_specs() -> None:
    assert remote_assignor(["consumer"]) == (True, None)
    assert remote_assignor(["uniform"]) == (True, "uniform")
    assert remote_assignor([RangeAssignor()]) == (True, "consumer-range")
    assert remote_assignor([UniformAssignor()]) == (True, "uniform")
    assert remote_assignor(["range"]) == (False, None)
    assert remote_assignor(["uniform", "range"]) == (False, None)


def test_refusals() -> None:
    sim = ConsumerGroupSimulator({"orders": 2})
    sim.apply(Join(0, "a", ("orders",), U, instance_id="i"))
    with pytest.raises(SimulationError, match="member='a' is already running"):
        sim.apply(Join(1, "a", ("orders",), U))
    with pytest.raises(SimulationError, match="instance id 'i' is still used by member 'a'"):
        sim.apply(Join(1, "b", ("orders",), U, instance_id="i"))
    with pytest.raises(SimulationError, match="member='x' is not running"):
        sim.apply(Leave(2, "x"))
    with pytest.raises(UnknownAssignorError, match="server strategy name"):
        group_state_machine("range")


EAGER_UPGRADE = """\
t=60 c: restart, back in 5s -[orders-4, orders-5]
t=60 a: classic generation 4 (c left) -[orders-0, orders-1]
t=60 b: classic generation 4 (c left) -[orders-2, orders-3]
t=60 a: classic generation 4 (c left) +[orders-0, orders-1, orders-2]
t=60 b: classic generation 4 (c left) +[orders-3, orders-4, orders-5]
t=65 converted to a consumer group at epoch 4
t=65 c: joined (consumer, server default); group epoch 5
t=65 target at epoch 5 (uniform)
t=65 c: heartbeat: epoch 5 UNRELEASED_PARTITIONS
t=68 a: rejoins (classic EAGER): revokes everything -[orders-0, orders-1, orders-2]
t=68 a: heartbeat: epoch 5 STABLE +[orders-0, orders-1]
t=68 b: rejoins (classic EAGER): revokes everything -[orders-3, orders-4, orders-5]
t=68 b: heartbeat: epoch 5 STABLE +[orders-3, orders-4]
t=70 c: heartbeat: epoch 5 STABLE +[orders-2, orders-5]"""


def test_upgrade_of_an_eager_group() -> None:
    """Classic range members are EAGER: in the converted group each rebalance still revokes all they hold."""
    r = ("range",)
    sim = run(
        [Join(0, "a", ORDERS, r), Join(0, "b", ORDERS, r), Join(0, "c", ORDERS, r), Restart(60, "c", 5, ("consumer",))]
    )
    assert "\n".join(lines(sim)[9:]) == EAGER_UPGRADE
    assert sim.timeline.instants[-1].stable


def test_the_most_common_remote_assignor_wins() -> None:
    """Kafka's computePreferredServerAssignor: the most named group.remote.assignor; no name means uniform."""
    r = ("consumer-range",)
    sim = run([Join(0, "a", ORDERS, r), Join(0, "b", ORDERS, r), Join(0, "c", ORDERS, U)])
    targets = [i.text for i in sim.timeline.instants if i.text.startswith("target")]
    assert targets == [
        "target at epoch 1 (consumer-range)",
        "target at epoch 2 (consumer-range)",
        "target at epoch 3 (consumer-range)",
    ]
    sim = run([Join(0, "a", ORDERS, ("consumer",)), Join(0, "b", ORDERS, ("consumer",))])
    assert [i.text for i in sim.timeline.instants if i.text.startswith("target")][-1] == "target at epoch 2 (uniform)"


@pytest.mark.parametrize(
    ("assignor", "expected"),
    [
        (UniformAssignor(), {"a": ["orders-2"], "b": ["orders-0", "orders-1"]}),
        (UniformAssignor(stable_extras=False), {"a": ["orders-1", "orders-2"], "b": ["orders-0"]}),
    ],
    ids=["after-KAFKA-18688", "kafka-3.8-4.0"],
)
def test_a_members_own_server_assignor_object_is_used(
    assignor: UniformAssignor, expected: dict[str, list[str]]
) -> None:
    """b holds all 3; a joins: after KAFKA-18688 b keeps its extra, before it the first member (a) takes it."""
    sim = run([Join(0, "b", ORDERS, (assignor,)), Join(1, "a", ORDERS, (assignor,))], {"orders": 3})
    assert {m: sorted(map(str, p)) for m, p in sim.owned().items()} == expected


TestUniformBeforeTheFixGroup = group_state_machine(UniformAssignor(stable_extras=False)).TestCase

# Each run is up to 50 events on a whole group: 150 runs cover the rules' combinations (the ci profile's 500 took
# 75 s of `make test` for these three).
for _machine in (TestUniformGroup, TestConsumerRangeGroup, TestUniformBeforeTheFixGroup):
    _machine.settings = settings(max_examples=min(settings().max_examples, 150))  # the profile's, at most 150
del _machine
