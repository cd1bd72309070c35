"""Exactly Kafka's: the classic range and roundrobin, the coordinator's range, against Kafka's own Java classes.

Each property draws a group (see helpers.oracle_groups), runs our assignor and Kafka's on it, and requires the
same partitions for every member (a member's list is compared as a set: the order inside one member's assignment
carries no meaning, and ours is sorted). A failure prints both results side by side.
"""

from __future__ import annotations

from hypothesis import given, settings

from assignors import RangeAssignor, RoundRobinAssignor
from assignors.consumer_group import RangeAssignor as ServerRangeAssignor
from assignors.testing import Group
from helpers.java_oracle import JavaOracle, side_by_side
from helpers.oracle_groups import EXAMPLES, classic_groups, server_groups


def _same(ours: dict, java: dict) -> bool:  # type: ignore[type-arg]
    return ours.keys() == java.keys() and all(sorted(ours[m].partitions) == sorted(java[m].partitions) for m in ours)


def _report(group: Group, ours: dict, java: dict) -> str:  # type: ignore[type-arg]
    return f"{group}\n{side_by_side(ours, java)}"


@settings(max_examples=EXAMPLES)
@given(group=classic_groups())
def test_range_exactly_kafka(oracle: JavaOracle, group: Group) -> None:
    ours = RangeAssignor().assign(group.cluster, group.subscriptions)
    java = oracle.assign("range", group.cluster, group.subscriptions)
    assert _same(ours, java), _report(group, ours, java)


@settings(max_examples=EXAMPLES)
@given(group=classic_groups())
def test_roundrobin_exactly_kafka(oracle: JavaOracle, group: Group) -> None:
    ours = RoundRobinAssignor().assign(group.cluster, group.subscriptions)
    java = oracle.assign("roundrobin", group.cluster, group.subscriptions)
    assert _same(ours, java), _report(group, ours, java)


@settings(max_examples=EXAMPLES)
@given(group=server_groups())
def test_server_range_exactly_kafka(oracle: JavaOracle, group: Group) -> None:
    ours = ServerRangeAssignor().assign(group.cluster, group.subscriptions)
    java = oracle.server_assign("range", group.cluster, group.subscriptions)
    assert _same(ours, java), _report(group, ours, java)
