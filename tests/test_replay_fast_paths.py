"""The replay's cheaper paths give what the general ones give: validity, per-topic spread, the round engine."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition, get_assignor
from assignors.consumer_protocol import encode_sticky_user_data
from assignors.metrics import balance, check_assignment, topic_spreads
from assignors.rebalance import rebalance

TP = TopicPartition
TOPICS = ("a", "b", "c")


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Cluster, dict[str, Subscription], dict[str, list[TopicPartition]]]:
    counts = {t: draw(st.integers(0, 5)) for t in TOPICS}
    members = draw(st.lists(st.sampled_from("mnopqr"), min_size=1, max_size=5, unique=True))
    subs = {m: Subscription(draw(st.lists(st.sampled_from(TOPICS), max_size=3))) for m in members}
    every = [TP(t, p) for t in TOPICS for p in range(counts[t] + 1)]  # one partition beyond each topic
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


@given(st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]), st.integers(1, 6))
def test_rebalance_given_assignments_equals_given_partitions(name: str, joining: int) -> None:
    """Passing the Assignment objects a member received as ``owned`` changes nothing but the checks skipped."""
    cluster = Cluster({"a": 7, "b": 5})
    members = [f"m{i}" for i in range(6)]
    subs = {m: Subscription(["a", "b"] if i % 2 else ["a"]) for i, m in enumerate(members)}
    first = rebalance(get_assignor(name), cluster, {m: subs[m] for m in members[:joining]}, {}, generation=-1)
    as_assignments: dict[str, Assignment] = {m: first.assignment[m] for m in members[:joining]}
    as_partitions = {m: list(a.partitions) for m, a in as_assignments.items()}
    one = rebalance(get_assignor(name), cluster, subs, as_assignments, generation=first.generation)
    other = rebalance(get_assignor(name), cluster, subs, as_partitions, generation=first.generation)
    assert [replace(r, assign_seconds=0.0) for r in one.rounds] == [
        replace(r, assign_seconds=0.0) for r in other.rounds
    ]


@given(
    st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 9)), unique=True, max_size=6),
    st.integers(-1, 2**31 - 1),
    st.integers(-1, 2**31 - 1),
)
def test_sticky_user_data_decodes_the_same_when_its_assignment_was_seen_before(
    pairs: list[tuple[str, int]], first: int, second: int
) -> None:
    """A V1 blob whose assignment bytes were decoded before (with another generation) decodes as from scratch."""
    from assignors._wire import consumer_protocol

    partitions = [TP(t, p) for t, p in pairs]
    consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, first))
    again = consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, second))
    consumer_protocol._V1_ASSIGNMENTS.clear()  # decode without what was seen
    fresh = consumer_protocol.decode_sticky_user_data(encode_sticky_user_data(partitions, second))
    assert again == fresh
    assert again.generation == second
    assert sorted(again.partitions) == sorted(partitions)
