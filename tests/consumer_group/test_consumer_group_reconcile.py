"""KIP-848 reconciliation: Kafka's CurrentAssignmentBuilderTest examples pinned, fencing, and properties."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import AssignorError, SimulationError, TopicPartition
from assignors.consumer_group import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    FencedMemberEpochError,
    MemberAssignmentState,
    MemberState,
    check_member_epoch,
    next_member_state,
    static_leave,
    static_rejoin,
)
from assignors.consumer_group._coordinator import Coordinator

STABLE, UNREVOKED, UNRELEASED = MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS, MemberState.UNRELEASED_PARTITIONS


def tps(t1: tuple[int, ...] = (), t2: tuple[int, ...] = ()) -> frozenset[TopicPartition]:
    return frozenset([TopicPartition("topic1", p) for p in t1] + [TopicPartition("topic2", p) for p in t2])


def _foo_bar(foo: tuple[int, ...] = (), bar: tuple[int, ...] = ()) -> list[TopicPartition]:
    return [TopicPartition("foo", p) for p in foo] + [TopicPartition("bar", p) for p in bar]


def epochs(value: int) -> Callable[[TopicPartition], int]:
    return lambda _tp: value


def member(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: frozenset[TopicPartition],
    pending: frozenset[TopicPartition] = frozenset(),
) -> MemberAssignmentState:
    return MemberAssignmentState(state, epoch, previous, assigned, pending)


# Each: (member before, target epoch, target, partition epoch, owned, member after) from Kafka's test of that name.
EXAMPLES = {
    "testStableToStable": (
        member(STABLE, 10, 10, tps((1, 2, 3), (4, 5, 6))),
        11,
        tps((1, 2, 3), (4, 5, 6)),
        epochs(10),
        None,
        member(STABLE, 11, 10, tps((1, 2, 3), (4, 5, 6))),
    ),
    "testStableToStableWithNewPartitions": (
        member(STABLE, 10, 10, tps((1, 2, 3), (4, 5, 6))),
        11,
        tps((1, 2, 3, 4), (4, 5, 6, 7)),
        epochs(-1),
        None,
        member(STABLE, 11, 10, tps((1, 2, 3, 4), (4, 5, 6, 7))),
    ),
    "testStableToUnrevokedPartitions": (
        member(STABLE, 10, 10, tps((1, 2, 3), (4, 5, 6))),
        11,
        tps((2, 3, 4), (5, 6, 7)),
        epochs(-1),
        None,
        member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((1,), (4,))),
    ),
    "testStableToUnreleasedPartitions": (
        member(STABLE, 10, 10, tps((1, 2, 3), (4, 5, 6))),
        11,
        tps((1, 2, 3, 4), (4, 5, 6, 7)),
        epochs(10),
        None,
        member(UNRELEASED, 11, 10, tps((1, 2, 3), (4, 5, 6))),
    ),
    "testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions": (
        member(STABLE, 10, 10, tps((1, 2, 3), (4, 5, 6))),
        11,
        tps((1, 2, 3), (4, 5, 7)),
        lambda tp: 10 if tp.topic == "topic2" else -1,
        frozenset(),
        member(UNRELEASED, 11, 10, tps((1, 2, 3), (4, 5))),
    ),
    "testUnrevokedPartitionsToStable": (
        member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((1,), (4,))),
        11,
        tps((2, 3), (5, 6)),
        epochs(-1),
        tps((2, 3), (5, 6)),
        member(STABLE, 11, 10, tps((2, 3), (5, 6))),
    ),
    "testUnrevokedPartitionsToUnrevokedPartitions": (
        member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((1,), (4,))),
        12,
        tps((3,), (6,)),
        epochs(-1),
        tps((2, 3), (5, 6)),
        member(UNREVOKED, 10, 10, tps((3,), (6,)), tps((2,), (5,))),
    ),
    "testUnrevokedPartitionsToUnreleasedPartitions": (
        member(UNREVOKED, 11, 10, tps((2, 3), (5, 6))),
        11,
        tps((2, 3, 4), (5, 6, 7)),
        epochs(10),
        tps((2, 3), (5, 6)),
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
    ),
    "testUnrevokedPartitionsToStableWithReturnedPartitionsPendingRevocation": (
        member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((4,))),
        12,
        tps((2, 3, 4), (5, 6, 7)),
        lambda tp: 10 if tp in tps((2, 3, 4), (5, 6)) else -1,
        tps((2, 3), (5, 6)),
        member(STABLE, 12, 10, tps((2, 3, 4), (5, 6, 7))),
    ),
    "testUnreleasedPartitionsToStable": (
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
        12,
        tps((2, 3), (5, 6)),
        epochs(10),
        None,
        member(STABLE, 12, 11, tps((2, 3), (5, 6))),
    ),
    "testUnreleasedPartitionsToStableWithNewPartitions": (
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
        11,
        tps((2, 3, 4), (5, 6, 7)),
        epochs(-1),
        None,
        member(STABLE, 11, 11, tps((2, 3, 4), (5, 6, 7))),
    ),
    "testUnreleasedPartitionsToUnreleasedPartitions": (
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
        11,
        tps((2, 3, 4), (5, 6, 7)),
        epochs(10),
        None,
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
    ),
    "testUnreleasedPartitionsToUnrevokedPartitions": (
        member(UNRELEASED, 11, 11, tps((2, 3), (5, 6))),
        12,
        tps((3,), (6,)),
        epochs(10),
        None,
        member(UNREVOKED, 11, 11, tps((3,), (6,)), tps((2,), (5,))),
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_current_assignment_builder_examples(name: str) -> None:
    before, epoch, target, partition_epoch, owned, after = EXAMPLES[name]
    got = next_member_state(before, target_epoch=epoch, target=target, partition_epoch=partition_epoch, owned=owned)
    assert got == after


@pytest.mark.parametrize(
    "owned", [None, tps((1, 2, 3), (5, 6)), tps((2, 3), (4, 5, 6))], ids=["not-listed", "owns-t1-1", "owns-t2-4"]
)
def test_remains_in_unrevoked_partitions(owned: frozenset[TopicPartition] | None) -> None:
    """Kafka's testRemainsInUnrevokedPartitions: while a pending partition is still listed, nothing changes."""
    before = member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((1,), (4,)))
    got = next_member_state(before, target_epoch=12, target=tps((3,), (6,)), partition_epoch=epochs(-1), owned=owned)
    assert got is before


def test_unsubscribed_topics_leave_the_target() -> None:
    before = member(STABLE, 10, 10, tps((1,), (4,)))
    got = next_member_state(
        before, target_epoch=11, target=tps((1,), (4,)), partition_epoch=epochs(-1), subscribed_topics=["topic1"]
    )
    assert got == member(UNREVOKED, 10, 10, tps((1,)), tps((), (4,)))


def test_fencing() -> None:
    m = member(STABLE, 11, 10, tps((1, 2)))
    check_member_epoch("m", m, 11, None)
    check_member_epoch("m", m, 10, tps((1,)))  # lost response: previous epoch, owns a subset
    for epoch, owned in ((12, None), (10, tps((3,))), (10, None), (9, frozenset())):
        with pytest.raises(FencedMemberEpochError, match="member 'm' sent epoch") as raised:
            check_member_epoch("m", m, epoch, owned)
        assert isinstance(raised.value, AssignorError)
        assert (raised.value.member, raised.value.epoch, raised.value.expected) == ("m", epoch, 11)


partitions = st.frozensets(st.builds(TopicPartition, st.sampled_from(["a", "b"]), st.integers(0, 5)), max_size=8)


@given(
    state=st.sampled_from(list(MemberState)),
    epoch=st.integers(0, 5),
    assigned=partitions,
    pending=partitions,
    target=partitions,
    held=partitions,
    report=st.booleans(),
)
def test_a_step_never_hands_over_a_held_partition(
    state: MemberState,
    epoch: int,
    assigned: frozenset[TopicPartition],
    pending: frozenset[TopicPartition],
    target: frozenset[TopicPartition],
    held: frozenset[TopicPartition],
    report: bool,
) -> None:
    """New partitions are never held by another member; nothing new while revoking; the epoch never goes back."""
    before = member(state, epoch, epoch, assigned, pending - assigned)
    others = held - assigned - before.pending_revocation
    owned = assigned if report else None
    after = next_member_state(
        before, target_epoch=epoch + 1, target=target, partition_epoch=lambda tp: 1 if tp in others else -1, owned=owned
    )
    gained = after.assigned - before.assigned
    assert not gained & others
    assert after.assigned <= before.assigned | target
    if after.state is MemberState.UNREVOKED_PARTITIONS:
        assert not gained
        assert after.member_epoch == before.member_epoch
    else:
        assert after.member_epoch in (before.member_epoch, epoch + 1)
        assert not (after.assigned - target)  # converged members hold only target partitions


def test_static_leave_and_rejoin_as_pure_functions() -> None:
    """Epoch -2 keeps the assignment and clears the pending revocation; a rejoin inherits it at epoch 0."""
    before = member(UNREVOKED, 10, 9, tps((2, 3)), tps((1,)))
    left = static_leave(before)
    assert left == member(UNREVOKED, LEAVE_GROUP_STATIC_MEMBER_EPOCH, 9, tps((2, 3)))
    back = static_rejoin(left)
    assert back == member(UNREVOKED, 0, 0, tps((2, 3)))


def test_static_member_keeps_its_target_while_away_and_the_new_member_id_inherits_it() -> None:
    """Kafka's consumerGroupHeartbeat for static members: no epoch bump on leave (-2) nor on rejoin; fenced later."""
    group = Coordinator({"topic1": 4})
    group.join("a", ["topic1"], instance_id="ia")
    group.join("b", ["topic1"], instance_id="ib")
    for m in ("a", "b", "a", "b"):  # a revokes half for b, acknowledges; b takes it
        group.heartbeat(m, sorted(group.members[m].reconciliation.assigned))
    assert group.stable()
    epoch, target = group.group_epoch, dict(group.target)
    held = group.members["a"].reconciliation.assigned
    assert held == tps((0, 1))
    group.leave("a", static=True)
    assert group.group_epoch == epoch  # no bump, no new target
    assert group.target == target
    assert group.members["a"].reconciliation.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH
    assert group.members["a"].left
    with pytest.raises(SimulationError, match="instance id 'ib' is still used by member 'b'"):
        group.join("b2", ["topic1"], instance_id="ib")  # b has not left: refused
    assert group.join("a2", ["topic1"], instance_id="ia") == "replaced a"
    assert group.group_epoch == epoch  # same subscription: still no bump
    assert "a" not in group.members
    assert group.target["a2"] == target["a"]
    state = group.heartbeat("a2", [])
    assert (state.state, state.member_epoch, state.assigned) == (STABLE, group.assignment_epoch, held)
    # Away past the session timeout instead: fenced, which bumps the epoch and frees its partitions.
    group.leave("b", static=True)
    group.remove("b")
    assert group.group_epoch == epoch + 1
    group.heartbeat("a2", sorted(held))
    assert group.target == {"a2": tps((0, 1, 2, 3))}


# Kafka's CurrentAssignmentBuilderTest after KAFKA-19431: the member subscribes to topic2 only, topic1 is still in
# its assignment. (target epoch, subscription changed, owned, member after)
NO_LONGER_SUBSCRIBED = {
    "testStableToStableWithAssignmentTopicsNoLongerInSubscription": [
        (11, False, tps((), (4, 5, 6)), member(STABLE, 11, 10, tps((), (4, 5, 6)))),
        (11, True, tps((), (4, 5, 6)), member(STABLE, 11, 10, tps((), (4, 5, 6)))),
        (10, True, tps((), (4, 5, 6)), member(STABLE, 10, 10, tps((), (4, 5, 6)))),
    ],
    "testStableToUnrevokedPartitionsWithAssignmentTopicsNoLongerInSubscription": [
        (epoch, changed, tps((1, 2, 3), (4, 5, 6)), member(UNREVOKED, 10, 10, tps((), (4, 5, 6)), tps((1, 2, 3))))
        for epoch, changed in ((11, False), (11, True), (10, True))
    ],
}


@pytest.mark.parametrize(
    ("target_epoch", "changed", "owned", "expected"),
    [case for cases in NO_LONGER_SUBSCRIBED.values() for case in cases],
    ids=[f"{name}-{i}" for name, cases in NO_LONGER_SUBSCRIBED.items() for i in range(len(cases))],
)
def test_assignment_topics_no_longer_in_subscription(
    target_epoch: int, changed: bool, owned: frozenset[TopicPartition], expected: MemberAssignmentState
) -> None:
    """A partition of a topic the member left is dropped at once when no longer owned, else revoked first."""
    got = next_member_state(
        member(STABLE, 10, 9, tps((1, 2, 3), (4, 5, 6))),
        target_epoch=target_epoch,
        target=tps((1, 2, 3), (4, 5, 6)),
        partition_epoch=epochs(-1),
        owned=owned,
        subscribed_topics=["topic2"],
        subscription_changed=changed,
    )
    assert got == expected


def test_remains_in_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() -> None:
    """Kafka's test of that name: waiting for a revocation, the member still gives up the topic it left."""
    before = member(UNREVOKED, 10, 10, tps((2, 3), (5, 6)), tps((1,), (4,)))
    got = next_member_state(
        before,
        target_epoch=12,
        target=tps((1, 3, 4), (6, 7)),
        partition_epoch=epochs(-1),
        owned=tps((1, 2, 3), (4, 5, 6)),
        subscribed_topics=["topic2"],
        subscription_changed=True,
    )
    assert got == member(UNREVOKED, 10, 10, tps((), (5, 6)), tps((1, 2, 3), (4,)))


@pytest.mark.parametrize(
    ("subscribed", "expected"),
    [
        (["foo"], member(UNREVOKED, 10, 10, frozenset(_foo_bar((1, 2, 3))), frozenset(_foo_bar((), (4, 5, 6))))),
        ([], member(UNREVOKED, 10, 10, frozenset(), frozenset(_foo_bar((1, 2, 3), (4, 5, 6))))),
        (["foo", "bar"], member(STABLE, 10, 10, frozenset(_foo_bar((1, 2, 3), (4, 5, 6))))),
    ],
    ids=[
        "testSubscribedTopicNameAndUnresolvedRegularExpression",
        "testUnresolvedRegularExpression",
        "testSubscribedTopicNameAndResolvedRegularExpression",
    ],
)
def test_regular_expression_subscriptions(subscribed: list[str], expected: MemberAssignmentState) -> None:
    """Kafka's regex tests, with the regex ``bar*`` given as the topics it resolves to (unresolved: none)."""
    held = frozenset(_foo_bar((1, 2, 3), (4, 5, 6)))
    got = next_member_state(
        member(STABLE, 10, 10, held),
        target_epoch=10,
        target=held,
        partition_epoch=epochs(-1),
        owned=held,
        subscribed_topics=subscribed,
        subscription_changed=True,
    )
    assert got == expected
