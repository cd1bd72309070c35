"""weighted-sticky in the pure replay: a worked example pinned, the weights as the weighted columns read them, the
strategy refused without weights, and a bad group's rows carrying its error. The example's history is
``helpers.weighted_history`` (the Spark test replays it too)."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Cluster, ConfigurationError, Subscription, WeightedStickyAssignor
from assignors.metrics import weighted_load
from helpers.weighted_history import MEMBERSHIP, STEP, T0, TOPIC_ROWS, WEIGHT_ROWS
from spark_udfs import MemberRow, TopicHistory, replay_group
from spark_udfs.replay import WEIGHTED_STRATEGIES, WeightHistory, default_strategies

STRATEGIES = ("sticky", "cooperative-sticky", "weighted-sticky")
ROWS = [MemberRow(ts, member, tuple(topics)) for _, ts, member, topics, _, _ in MEMBERSHIP]
TOPICS = TopicHistory(TOPIC_ROWS)
WEIGHTS = WeightHistory(WEIGHT_ROWS)
FIGURES = ("protocol", "rebalanced", "weighted_max_load", "weighted_max_mean_ratio", "moved", "revoked", "rounds")


def _by_strategy(rows: list[dict[str, Any]]) -> dict[str, list[tuple[Any, ...]]]:
    got: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        got.setdefault(row["strategy"], []).append(
            tuple(round(row[f], 3) if f.startswith("w") else row[f] for f in FIGURES)
        )
    return got


def test_weighted_sticky_unstacks_the_hot_partitions_that_sticky_keeps_together() -> None:
    """sticky and cooperative-sticky give a both hot partitions (21 of 24, 1.75x the mean) and keep them there;
    weighted-sticky splits them (12 and 12, 1.0x), re-evens after each change, and pays for it in moves: when b
    leaves it moves 2 partitions where the count-based ones move none (the cooperative pause of 2 moves more).
    Loads that drift while the group stays put move nothing: when t-0 cools down, weighted-sticky's split (18
    against 4) is worse than sticky's (12 against 10) until the group next rebalances."""
    rows, detail = replay_group("g", ROWS, TOPICS, STRATEGIES, weights=WEIGHTS, detail=True)
    assert all(r["error"] is None and r["valid"] for r in rows)
    count_based = [
        ("EAGER", True, 21.0, 1.75, 0, 0, 1),
        ("EAGER", True, 20.0, 1.935, 2, 6, 1),
        ("EAGER", True, 21.0, 1.355, 0, 4, 1),
        ("EAGER", False, 12.0, 1.091, 0, 0, 0),  # weights changed, the group did not: no rebalance
    ]
    assert _by_strategy(rows) == {
        "sticky": count_based,
        "cooperative-sticky": [
            ("COOPERATIVE", *row[1:5], 2 if row[4] else 0, 2 if row[4] else row[6]) for row in count_based
        ],
        "weighted-sticky": [
            ("COOPERATIVE", True, 12.0, 1.0, 0, 0, 1),
            ("COOPERATIVE", True, 11.0, 1.065, 2, 2, 2),
            ("COOPERATIVE", True, 18.0, 1.161, 2, 2, 2),  # 10 + 8 against 13: the best two members can do
            ("COOPERATIVE", False, 18.0, 1.636, 0, 0, 0),  # t-0 cooled down: nothing rebalances on a drift
        ],
    }
    held = {(d["snapshot_ts"], d["member"]): d["partitions"] for d in detail if d["strategy"] == "weighted-sticky"}
    assert held == {
        (T0, "a"): ["t-0", "t-1", "t-4"],
        (T0, "b"): ["t-2", "t-3", "t-5"],
        (T0 + STEP, "a"): ["t-1", "t-4", "t-3"],
        (T0 + STEP, "b"): ["t-2", "t-5"],
        (T0 + STEP, "c"): ["t-0"],
        (T0 + 2 * STEP, "a"): ["t-2", "t-4"],
        (T0 + 2 * STEP, "c"): ["t-0", "t-5", "t-1", "t-3"],
        (T0 + 3 * STEP, "a"): ["t-2", "t-4"],
        (T0 + 3 * STEP, "c"): ["t-0", "t-5", "t-1", "t-3"],
    }
    pause = {(r["strategy"], r["snapshot_ts"]): r["pause_partition_seconds"] for r in rows}
    assert pause["weighted-sticky", T0 + STEP] == pause["cooperative-sticky", T0 + STEP] > 0  # 2 moved each
    assert pause["weighted-sticky", T0 + 2 * STEP] > pause["cooperative-sticky", T0 + 2 * STEP]  # b's 2 orphaned each


def test_a_partition_the_table_does_not_weigh_weighs_zero_for_the_assignor_as_for_the_columns() -> None:
    """u has no row: the weighted columns count it as 0, and so does weighted-sticky (its own default, the mean known
    weight, would put t-0 and t-1 together: 10 of 10)."""
    weights = WeightHistory([("t", 0, 9.0, None), ("t", 1, 1.0, None)])
    counts = {"t": 2, "u": 2}
    members = {"a": Subscription(["t", "u"]), "b": Subscription(["t", "u"])}
    table = weights.at(T0, counts)
    got = weights.assignor_at(T0, counts).assign(Cluster(counts), members)
    assert {m: [str(tp) for tp in a.partitions] for m, a in got.items()} == {"a": ["t-0"], "b": ["t-1", "u-0", "u-1"]}
    assert weighted_load(got, table).max_load == 9.0
    own_default = WeightedStickyAssignor(table).assign(Cluster(counts), members)
    assert weighted_load(own_default, table).max_load == 10.0


def test_weighted_sticky_needs_weights_and_is_offered_only_with_them() -> None:
    assert WEIGHTED_STRATEGIES == ("weighted-sticky",)
    assert "weighted-sticky" not in default_strategies(weighted=False)
    assert default_strategies(weighted=True)[-1] == "weighted-sticky"
    with pytest.raises(ConfigurationError, match=r"strategy 'weighted-sticky' needs a weights table \(--weights\)"):
        replay_group("g", ROWS, TOPICS, STRATEGIES)


def test_a_bad_group_carries_its_error_under_weighted_sticky_too() -> None:
    """A topic missing from the topics table: every snapshot and strategy is an error row; nothing raises."""
    rows = [MemberRow(T0, "a", ("t",)), MemberRow(T0, "b", ("missing",)), MemberRow(T0 + STEP, "a", ("t",))]
    out, detail = replay_group("bad", rows, TOPICS, STRATEGIES, weights=WEIGHTS, detail=True)
    assert [(r["strategy"], r["snapshot_ts"]) for r in out] == [(s, T0 + i * STEP) for s in STRATEGIES for i in (0, 1)]
    assert all("missing" in r["error"] and r["weighted_max_load"] is None for r in out)
    assert detail == []


# --- properties: the replay feeds weighted-sticky the weights of each snapshot ---------------------------------------

COUNTS = {"t0": 5, "t1": 3}
IDENTITIES = ("m0", "m1", "m2", "m3")
TOPIC_SETS = (("t0",), ("t1",), ("t0", "t1"))
WeightRow = tuple[str, int | None, float, dt.datetime | None]


@st.composite
def weighted_histories(draw: st.DrawFn, *, identical: bool) -> tuple[list[MemberRow], list[WeightRow]]:
    """Up to five snapshots of up to four members (with ``identical``, all on one topic list a snapshot), and
    weights per partition from 0 to 50 whose rows start at any snapshot (so they change while the group stays)."""
    rows: list[MemberRow] = []
    steps = draw(st.integers(1, 5))
    for step in range(steps):
        shared = draw(st.sampled_from(TOPIC_SETS))
        for identity in sorted(draw(st.sets(st.sampled_from(IDENTITIES), min_size=1))):
            topics = shared if identical else draw(st.sampled_from(TOPIC_SETS))
            rows.append(MemberRow(T0 + step * STEP, identity, topics))
    weights: list[WeightRow] = [(t, p, draw(st.floats(0, 50)), None) for t, c in COUNTS.items() for p in range(c)]
    for _ in range(draw(st.integers(0, 6))):
        topic = draw(st.sampled_from(sorted(COUNTS)))
        partition = draw(st.integers(0, COUNTS[topic] - 1))
        weights.append((topic, partition, draw(st.floats(0, 50)), T0 + draw(st.integers(0, steps - 1)) * STEP))
    return rows, weights


HISTORY = TopicHistory([(t, c, None) for t, c in COUNTS.items()])


@given(drawn=weighted_histories(identical=False), weight=st.sampled_from([0.0, 1.0, 2.5]))
def test_with_equal_weights_weighted_sticky_replays_as_cooperative_sticky(
    drawn: tuple[list[MemberRow], list[WeightRow]], weight: float
) -> None:
    """Every column (the strategy's name and the time in the assignor aside) and every member's partitions."""
    rows, _ = drawn
    table = WeightHistory([("t0", None, weight, None), ("t1", None, weight, None)])
    names = ["cooperative-sticky", "weighted-sticky"]
    out, detail = replay_group("g", rows, HISTORY, names, weights=table, detail=True)
    plain = [{k: v for k, v in r.items() if k not in {"strategy", "assign_ms"}} for r in out]
    half = len(plain) // 2
    assert plain[:half] == plain[half:]
    members = [{k: v for k, v in d.items() if k != "strategy"} for d in detail]
    assert members[: len(members) // 2] == members[len(members) // 2 :]


@given(drawn=weighted_histories(identical=True))
def test_every_rebalance_meets_the_guarantee_for_that_snapshots_weights(
    drawn: tuple[list[MemberRow], list[WeightRow]],
) -> None:
    """With identical subscriptions weighted-sticky's heaviest member carries at most the lightest's load plus the
    heaviest partition plus the tolerance (10% of the mean), in the weights in force at that very snapshot."""
    rows, weights = drawn
    table = WeightHistory(weights)
    out, _ = replay_group("g", rows, HISTORY, ["weighted-sticky"], weights=table)
    for row in out:
        assert row["error"] is None
        assert row["valid"]
        if not row["rebalanced"]:
            continue
        topics = next(r.topics or () for r in rows if r.snapshot_ts == row["snapshot_ts"])
        at = table.at(row["snapshot_ts"], topics)
        heaviest = max(at[t, p] for t in topics for p in range(COUNTS[t]))
        total = sum(at[t, p] for t in topics for p in range(COUNTS[t]))
        tolerance = 0.1 * total / row["members"]
        assert row["weighted_max_load"] <= row["weighted_min_load"] + heaviest + tolerance + 1e-9


def test_the_weight_moved_is_the_weight_of_the_partitions_moved() -> None:
    """weighted-sticky's worked example: when c joins it takes t-0 (10) from a, and a takes t-3 (1) from b: 11; when
    b leaves, c takes t-1 and t-3 (1 each) from a: 2 (b's two are orphaned, not moved). For every strategy, each
    row's weight moved is the weights in force at its snapshot of the partitions a live member handed to another;
    with every partition weighing 1 it is ``moved``; without weights, null."""
    rows, detail = replay_group("g", ROWS, TOPICS, STRATEGIES, weights=WEIGHTS, detail=True)
    ours = {r["snapshot_ts"]: r["moved_weight"] for r in rows if r["strategy"] == "weighted-sticky"}
    assert ours == {T0: 0.0, T0 + STEP: 11.0, T0 + 2 * STEP: 2.0, T0 + 3 * STEP: 0.0}
    stamps = [T0 + i * STEP for i in range(4)]
    for strategy in STRATEGIES:
        owner = {
            (d["snapshot_ts"], tp): d["member"] for d in detail if d["strategy"] == strategy for tp in d["partitions"]
        }
        for before, now in itertools.pairwise(stamps):
            live = {member for (ts, _), member in owner.items() if ts == now}
            weights = WEIGHTS.at(now, ["t"])
            expected = sum(
                weights.get(("t", int(tp.split("-")[1])), weights["t", None])
                for (ts, tp), member in owner.items()
                if ts == before and member in live and owner.get((now, tp), member) != member
            )
            row = next(r for r in rows if r["strategy"] == strategy and r["snapshot_ts"] == now)
            assert row["moved_weight"] == (expected if row["rebalanced"] else 0.0), (strategy, now)
    unit = WeightHistory([("t", None, 1.0, None)])
    for row in replay_group("g", ROWS, TOPICS, STRATEGIES, weights=unit)[0]:
        assert row["moved_weight"] == row["moved"]
    assert {row["moved_weight"] for row in replay_group("g", ROWS, TOPICS, STRATEGIES[:2])[0]} == {None}
