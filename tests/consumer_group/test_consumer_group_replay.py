"""The evaluation's step for consumer-protocol groups: hand-computed histories, and replay equals direct calls."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition, UnknownAssignorError
from assignors.consumer_group import RangeAssignor, UniformAssignor, replay_step, server_assignor
from assignors.testing import Group, groups


def parts(result: dict[str, Assignment]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in a.partitions] for m, a in result.items()}


def test_uniform_history() -> None:
    """a, b on t (6); c joins; a leaves; t grows to 8: hand-computed with Kafka's homogeneous rules."""
    cluster = Cluster({"t": 6})
    step = replay_step(None, cluster, {m: Subscription(["t"]) for m in "ab"})
    assert parts(step.target) == {"a": ["t-0", "t-1", "t-2"], "b": ["t-3", "t-4", "t-5"]}
    assert (step.revoked, step.moved, step.heartbeats) == (0, 0, 1)
    # c joins: quotas 2/2/2; a keeps t-0, t-1 and b keeps t-3, t-4; c takes t-2 then t-5.
    step = replay_step(step.target, cluster, {m: Subscription(["t"]) for m in "abc"})
    assert parts(step.target) == {"a": ["t-0", "t-1"], "b": ["t-3", "t-4"], "c": ["t-2", "t-5"]}
    assert (step.revoked, step.moved, step.heartbeats) == (2, 2, 2)
    # a leaves: its partitions are free (neither revoked nor moved); b and c keep theirs and take one each.
    step = replay_step(step.target, cluster, {m: Subscription(["t"]) for m in "bc"})
    assert parts(step.target) == {"b": ["t-0", "t-3", "t-4"], "c": ["t-1", "t-2", "t-5"]}
    assert (step.revoked, step.moved, step.heartbeats) == (0, 0, 1)
    # t grows to 8: quotas 4/4; the new t-6, t-7 go one each.
    step = replay_step(step.target, Cluster({"t": 8}), {m: Subscription(["t"]) for m in "bc"})
    assert parts(step.target) == {"b": ["t-0", "t-3", "t-4", "t-6"], "c": ["t-1", "t-2", "t-5", "t-7"]}
    assert (step.revoked, step.moved, step.heartbeats) == (0, 0, 1)


def test_consumer_range_history() -> None:
    """The server range recomputes from scratch: a join moves partitions between members that stay."""
    cluster = Cluster({"t": 4})
    step = replay_step(None, cluster, {m: Subscription(["t"]) for m in "ab"}, assignor="consumer-range")
    assert parts(step.target) == {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"]}
    step = replay_step(step.target, cluster, {m: Subscription(["t"]) for m in "abc"}, assignor="consumer-range")
    assert parts(step.target) == {"a": ["t-0", "t-1"], "b": ["t-2"], "c": ["t-3"]}
    assert (step.revoked, step.moved, step.heartbeats) == (1, 1, 2)
    # c moves to another topic: its t-3 is revoked and goes to b.
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"]), "c": Subscription(["u"])}
    step = replay_step(step.target, Cluster({"t": 4, "u": 0}), subs, assignor=RangeAssignor())
    assert parts(step.target) == {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"], "c": []}
    assert (step.revoked, step.moved, step.heartbeats) == (1, 1, 2)


def test_unknown_strategy() -> None:
    with pytest.raises(UnknownAssignorError, match="'uniform', 'consumer-range'"):
        server_assignor("range")


@given(groups(owned=True), st.sampled_from(["uniform", "consumer-range"]))
def test_replay_equals_direct_calls(g: Group, strategy: str) -> None:
    """The step's target is the assignor run on the previous target; the counts follow their definitions."""
    previous = {m: Assignment(s.owned_partitions) for m, s in g.subscriptions.items() if len(m) % 2}
    step = replay_step(previous, g.cluster, g.subscriptions, assignor=strategy)
    direct_input = {
        m: Subscription(
            s.topics,
            owned_partitions=previous[m].partitions if m in previous else (),
            group_instance_id=s.group_instance_id,
            rack_id=s.rack_id,
        )
        for m, s in g.subscriptions.items()
    }
    make = UniformAssignor if strategy == "uniform" else RangeAssignor
    assert step.target == make().assign(g.cluster, direct_input)
    owner = {tp: m for m, a in step.target.items() for tp in a.partitions}
    gone: list[TopicPartition] = [
        tp for m, a in previous.items() for tp in a.partitions if tp not in step.target[m].partitions
    ]
    assert step.revoked == len(gone)
    assert step.moved == sum(1 for tp in gone if tp in owner)
    assert 1 <= step.heartbeats <= 2
    assert step.heartbeats == 1 or step.revoked  # a second round only waits for a revocation


def test_revoking_what_nobody_takes_settles_in_one_round() -> None:
    """A member that switches topics revokes its old partitions and, in its immediate ack, takes the new ones."""
    old = Assignment([TopicPartition("t0", p) for p in range(5)])
    step = replay_step({"m0": old}, Cluster({"t0": 5, "t1": 3}), {"m0": Subscription(["t1"])})
    assert parts(step.target) == {"m0": ["t1-0", "t1-1", "t1-2"]}
    assert (step.revoked, step.moved, step.heartbeats) == (5, 0, 1)
