"""The Admin route's snapshots (``assignors.collect._admin.AdminHistory``) from group descriptions, without a cluster.

The descriptions are shaped as confluent-kafka's ``ConsumerGroupDescription`` (the real ones are checked against
real groups in test_collect_secured.py): a snapshot per Stable state that changed, none for a repeat, none for a
group between states, and a run that continues the tables records nothing twice.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from assignors.collect._admin import AdminHistory


class State(Enum):
    STABLE = 3
    PREPARING_REBALANCE = 1


class Kind(Enum):
    CLASSIC = 2
    CONSUMER = 1


@dataclass
class Partition:
    topic: str
    partition: int


@dataclass
class Assigned:
    topic_partitions: list[Partition]


@dataclass
class Member:
    member_id: str
    assignment: Assigned
    group_instance_id: str | None = None


@dataclass
class Description:
    group_id: str
    members: list[Member]
    state: State = State.STABLE
    type: Kind = Kind.CLASSIC
    partition_assignor: str = "range"
    extra: dict[str, Any] = field(default_factory=dict)


T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

holdings = st.dictionaries(
    st.sampled_from(["m1", "m2", "m3"]),
    st.lists(st.tuples(st.sampled_from(["orders", "payments"]), st.integers(0, 5)), max_size=4, unique=True),
    min_size=1,
)
stable = st.booleans().map(lambda b: State.STABLE if b else State.PREPARING_REBALANCE)


def _description(held: dict[str, list[tuple[str, int]]], state: State = State.STABLE) -> Description:
    members = [Member(m, Assigned([Partition(t, p) for t, p in parts])) for m, parts in held.items()]
    return Description("g", members, state)


def _key(held: dict[str, list[tuple[str, int]]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((m, tuple(f"{t}-{p}" for t, p in sorted(parts))) for m, parts in held.items()))


@given(st.lists(st.tuples(holdings, stable), max_size=12))
def test_a_snapshot_is_each_stable_state_that_changed(
    polls: list[tuple[dict[str, list[tuple[str, int]]], State]],
) -> None:
    history = AdminHistory()
    expected: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
    for n, (held, state) in enumerate(polls):
        history.add(_description(held, state), T0 + dt.timedelta(seconds=n))
        if state is State.STABLE and (not expected or expected[-1] != _key(held)):
            expected.append(_key(held))
    _, actual = history.drain()
    snapshots: dict[dt.datetime, list[tuple[str, tuple[str, ...]]]] = {}
    for row in actual:
        snapshots.setdefault(row["snapshot_ts"], []).append((row["member_id"], tuple(row["assigned"])))
    assert [tuple(sorted(rows)) for _, rows in sorted(snapshots.items())] == expected
    generations = sorted({row["snapshot_ts"]: row["generation"] for row in actual}.items())
    assert [g for _, g in generations] == list(range(1, len(expected) + 1))
    assert history.stats["snapshots"] == len(expected)


@given(st.lists(holdings, min_size=1, max_size=8), st.integers(0, 8))
def test_a_run_that_continues_the_tables_records_nothing_twice(
    states: list[dict[str, list[tuple[str, int]]]], cut: int
) -> None:
    """Stopped after ``cut`` polls and started again on what it wrote: the same snapshots as one run."""
    whole = AdminHistory()
    for n, held in enumerate(states):
        whole.add(_description(held), T0 + dt.timedelta(seconds=n))
    _, expected = whole.drain()
    first = AdminHistory()
    for n, held in enumerate(states[:cut]):
        first.add(_description(held), T0 + dt.timedelta(seconds=n))
    _, written = first.drain()
    second = AdminHistory()
    second.resume(written, first.topics())
    for n, held in enumerate(states[cut:], start=min(cut, len(states))):
        second.add(_description(held), T0 + dt.timedelta(seconds=n))
    _, more = second.drain()
    assert written + more == expected


def test_the_rows_of_one_snapshot() -> None:
    history = AdminHistory()
    history.observe_counts({"orders": 6}, T0)
    description = Description(
        "g",
        [Member("m2", Assigned([Partition("orders", 3), Partition("orders", 1)]), "i2"), Member("m1", Assigned([]))],
        type=Kind.CONSUMER,
        partition_assignor="range",
    )
    assert history.add(description, T0)
    assert not history.add(description, T0 + dt.timedelta(seconds=1))
    membership, actual = history.drain()
    assert actual == [
        {"group_id": "g", "snapshot_ts": T0, "generation": 1, "protocol": "consumer-range", "leader": None,
         "member_id": "m1", "group_instance_id": None, "assigned": []},
        {"group_id": "g", "snapshot_ts": T0, "generation": 1, "protocol": "consumer-range", "leader": None,
         "member_id": "m2", "group_instance_id": "i2", "assigned": ["orders-1", "orders-3"]},
    ]  # fmt: skip
    assert [(r["member_id"], r["topics"], r["rack_id"]) for r in membership] == [
        ("m1", ["orders"], None),
        ("m2", ["orders"], None),
    ]
    history.observe_counts({"orders": 8}, T0 + dt.timedelta(seconds=5))
    assert history.topics() == [
        {"topic": "orders", "partitions": 6, "valid_from": None},
        {"topic": "orders", "partitions": 8, "valid_from": T0 + dt.timedelta(seconds=5)},
    ]
    assert history.warnings == []
    history.add(Description("h", [Member("x", Assigned([Partition("hidden", 0)]))]), T0)
    assert history.warnings == [
        (
            "no partition count for topic 'hidden': the cluster's metadata does not show it (ask for DESCRIBE on TOPIC "
            "hidden, or give the counts to evaluate with --topics)"
        )
    ]
