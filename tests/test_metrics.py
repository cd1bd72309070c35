"""assignors.metrics: balance, movement and validity."""

from __future__ import annotations

import math

from hypothesis import given

from assignors import Cluster, RangeAssignor, RebalanceProtocol, Subscription, TopicPartition
from assignors.metrics import balance, check_assignment, movement
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
