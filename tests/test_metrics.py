"""assignors.metrics: balance, movement and validity."""

from __future__ import annotations

import math
from random import Random

from hypothesis import given
from hypothesis import strategies as st

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
    """moved/orphaned/retained/released counted partition by partition, as DESIGN.md defines them."""
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
