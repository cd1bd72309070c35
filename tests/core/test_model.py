"""The model's validation: bad input raises InvalidSubscriptionError naming the field, never anything else."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    Assignment,
    AssignorError,
    Cluster,
    InvalidSubscriptionError,
    RangeAssignor,
    RoundRobinAssignor,
    Subscription,
    TopicPartition,
    UnknownAssignorError,
    get_assignor,
)
from assignors._core.model import parse_topic_partition

TP = TopicPartition
ASSIGNORS = [RangeAssignor, RoundRobinAssignor]

not_an_int = st.one_of(st.floats(), st.text(), st.none(), st.booleans(), st.lists(st.integers(), max_size=2))
not_a_name = st.one_of(st.integers(), st.floats(), st.none(), st.binary(), st.just(""))


def test_topic_partition_is_a_cheap_ordered_value() -> None:
    """TopicPartition orders by (topic, partition), prints as topic-partition, and hashes like a tuple."""
    assert TP("a", 10) > TP("a", 9)
    assert str(TP("my-topic", 3)) == "my-topic-3"
    assert {TP("t", 1): 1}[TP("t", 1)] == 1
    assert parse_topic_partition("my-topic-3") == TP("my-topic", 3)


@pytest.mark.parametrize("text", ["t", "t-", "-1", "t-x", "t-1.5", "t-\u0661"])
def test_parse_topic_partition_rejects_garbage(text: str) -> None:
    """Strings without a '-<digits>' suffix are rejected with the text in the message."""
    with pytest.raises(InvalidSubscriptionError, match="topic-<partition number>"):
        parse_topic_partition(text)


@given(st.integers(max_value=-1) | st.integers(min_value=2**31))
def test_partition_outside_int32_rejected(partition: int) -> None:
    """A negative partition number, or one beyond Kafka's INT32, names the partition and topic."""
    with pytest.raises(InvalidSubscriptionError, match=rf"partition={partition} of topic='t' .* 0\.\.2147483647"):
        TP("t", partition)


def test_int32_bounds_are_accepted() -> None:
    """The largest partition number and count Kafka can carry are valid input."""
    assert TP("t", 2**31 - 1).partition == 2**31 - 1
    assert Cluster({"t": 2**31 - 1}).partition_count("t") == 2**31 - 1
    assert Subscription(["t"], generation_id=2**31 - 1).generation_id == 2**31 - 1


@given(not_an_int.filter(lambda v: not isinstance(v, int) or isinstance(v, bool)))
def test_non_integer_partition_rejected(partition: Any) -> None:
    """A partition that is not an int (bools included) is rejected."""
    with pytest.raises(InvalidSubscriptionError, match=r"must be an integer in 0\.\.2147483647"):
        TP("t", partition)


@given(not_a_name)
def test_non_string_topic_rejected(topic: Any) -> None:
    """Topics must be non-empty strings, in partitions, subscriptions and clusters alike."""
    with pytest.raises(InvalidSubscriptionError, match="topic"):
        TP(topic, 0)
    with pytest.raises(InvalidSubscriptionError, match="topic"):
        Subscription([topic])
    with pytest.raises(InvalidSubscriptionError, match="topic"):
        Cluster({topic: 1})


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=2**31), not_an_int))
def test_bad_partition_count_rejected(count: Any) -> None:
    """Negative, non-integer or beyond-INT32 partition counts name the topic and the value (no huge allocation)."""
    with pytest.raises(InvalidSubscriptionError, match=r"partition count .* of topic='t' must be an integer in 0\.\."):
        Cluster({"t": count})


def test_single_string_is_not_a_subscription() -> None:
    """Subscription('orders') would silently mean topics o, r, d, e, s: it is rejected."""
    with pytest.raises(InvalidSubscriptionError, match="not a single string"):
        Subscription("orders")


def test_subscription_normalises_like_the_wire_format() -> None:
    """Topics sorted and unique, owned sorted, negative generations are -1, empty rack is None."""
    owned: list[Any] = [TP("b", 0), ("a", 1)]  # (topic, partition) pairs are accepted too
    sub = Subscription(["b", "a", "a"], owned_partitions=owned, generation_id=-7, rack_id="")
    assert sub.topics == ("a", "b")
    assert sub.owned_partitions == (TP("a", 1), TP("b", 0))
    assert sub.generation_id == -1
    assert sub.rack_id is None


def test_owning_a_partition_twice_is_rejected() -> None:
    """A member that lists the same owned partition twice is malformed input."""
    with pytest.raises(InvalidSubscriptionError, match="owned_partitions lists partition 't-1' twice"):
        Subscription(["t"], owned_partitions=[TP("t", 1), TP("t", 1)])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"generation_id": 1.5}, "generation_id=1.5 must be an integer"),
        ({"generation_id": True}, "generation_id=True must be an integer"),
        ({"generation_id": 2**31}, "generation_id=2147483648 must be an integer <= 2147483647"),
        ({"group_instance_id": ""}, "group_instance_id='' must be"),
        ({"group_instance_id": 7}, "group_instance_id=7 must be a string"),
        ({"rack_id": 3}, "rack_id=3 must be a string"),
        ({"user_data": "text"}, "user_data must be bytes"),
        ({"owned_partitions": ["t-1"]}, "owned_partitions must hold TopicPartition values"),
    ],
)
def test_bad_subscription_fields(kwargs: dict[str, Any], match: str) -> None:
    """Each malformed Subscription field is named in the error."""
    with pytest.raises(InvalidSubscriptionError, match=match):
        Subscription(["t"], **kwargs)


def test_assignment_rejects_duplicates() -> None:
    """An Assignment that lists a partition twice is rejected."""
    with pytest.raises(InvalidSubscriptionError, match="partitions lists 't-0' twice"):
        Assignment([TP("t", 0), TP("t", 0)])


@pytest.mark.parametrize(
    ("racks", "match"),
    [
        ({TP("t", 5): ["a"]}, "partition_racks names partition 't-5', but topic='t' has 2 partitions"),
        ({TP("u", 0): ["a"]}, "topic='u' has no metadata"),
        ({TP("t", 0): "ab"}, "must be an iterable of rack names, not a single string"),
        ({TP("t", 0): [1]}, "rack 1 of partition 't-0' must be a string"),
    ],
)
def test_bad_partition_racks(racks: dict[TopicPartition, Any], match: str) -> None:
    """Racks of partitions outside their topic, or that are not names, are rejected."""
    with pytest.raises(InvalidSubscriptionError, match=match):
        Cluster({"t": 2}, partition_racks=racks)


@pytest.mark.parametrize(
    ("topic_ids", "match"),
    [
        ({"u": "AAAAAAAAAAEAAAAAAAAAAg"}, "topic_ids names topic='u', which has no partition count"),
        ({"t": "AAAAAAAAAAEAAAAAAAAAAh"}, "topic id 'AAAAAAAAAAEAAAAAAAAAAh' of topic='t' must be a Kafka Uuid"),
        ({"t": "not-an-id"}, "topic id 'not-an-id' of topic='t' must be a Kafka Uuid"),
        ({"t": 7}, "topic id 7 of topic='t'"),
        (
            {"t": "AAAAAAAAAAEAAAAAAAAAAg", "v": "AAAAAAAAAAEAAAAAAAAAAg"},
            "topic_ids gives topic='t' and topic='v' the same id",
        ),
        (["t"], "topic_ids must be a mapping"),
    ],
)
def test_bad_topic_ids(topic_ids: Any, match: str) -> None:
    """Topic ids of topics without a count, or that are not Kafka Uuids as Kafka prints them, are rejected."""
    with pytest.raises(InvalidSubscriptionError, match=match):
        Cluster({"t": 2, "v": 1}, topic_ids=topic_ids)


def test_topic_ids_are_part_of_the_value() -> None:
    ids = {"t": "AAAAAAAAAAEAAAAAAAAAAg"}
    cluster = Cluster({"t": 2}, topic_ids=ids)
    assert cluster.topic_ids == ids
    assert cluster != Cluster({"t": 2})
    assert cluster == Cluster({"t": 2}, topic_ids=dict(ids))
    assert repr(cluster) == "Cluster({'t': 2}, topic_ids={'t': 'AAAAAAAAAAEAAAAAAAAAAg'})"
    with pytest.raises(TypeError):
        cluster.topic_ids["t"] = "x"  # type: ignore[index]


@pytest.mark.parametrize("assignor", ASSIGNORS)
@given(member=not_a_name)
def test_bad_member_ids_rejected(assignor: type[RangeAssignor], member: Any) -> None:
    """Member ids must be non-empty strings; the error names the value and nothing is assigned."""
    with pytest.raises(InvalidSubscriptionError, match="member id"):
        assignor().assign(Cluster({"t": 1}), {member: Subscription(["t"])})


@pytest.mark.parametrize("assignor", ASSIGNORS)
@pytest.mark.parametrize(
    ("cluster", "subscriptions", "match"),
    [
        ({"t": 1}, {"m": Subscription(["t"])}, "cluster must be an assignors.Cluster"),
        (Cluster({"t": 1}), [("m", Subscription(["t"]))], "subscriptions must be a mapping"),
        (Cluster({"t": 1}), {"m": ["t"]}, "subscription of member='m' must be an assignors.Subscription"),
    ],
)
def test_bad_assign_arguments(assignor: type[RangeAssignor], cluster: Any, subscriptions: Any, match: str) -> None:
    """assign() checks its arguments at the boundary."""
    with pytest.raises(InvalidSubscriptionError, match=match):
        assignor().assign(cluster, subscriptions)


@given(
    st.recursive(
        st.one_of(st.none(), st.integers(), st.text(max_size=3), st.floats(), st.booleans()),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
        max_leaves=8,
    )
)
def test_random_garbage_only_raises_assignor_errors(value: Any) -> None:
    """Whatever is passed where model values belong, only AssignorError subclasses come out."""
    for build in (
        lambda: Cluster(value),
        lambda: Subscription(value),
        lambda: Subscription(["t"], owned_partitions=value),
        lambda: Assignment(value),
        lambda: RangeAssignor().assign(Cluster({"t": 2}), value),
        lambda: get_assignor(value),
    ):
        with contextlib.suppress(AssignorError):
            build()


def test_unknown_assignor_name() -> None:
    """get_assignor names the unknown name and lists the known ones; it is also a LookupError."""
    with pytest.raises(UnknownAssignorError, match="unknown assignor name='sticky2'; the built-in assignors are"):
        get_assignor("sticky2")
    with pytest.raises(LookupError):
        get_assignor("nope")


def test_get_assignor_returns_fresh_instances() -> None:
    """Each call builds a new instance: no state is shared."""
    assert get_assignor("range") is not get_assignor("range")
    assert get_assignor("roundrobin").name == "roundrobin"


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_empty_group(assignor: type[RangeAssignor]) -> None:
    """No members, no assignment (Kafka's RoundRobin would throw here)."""
    assert assignor().assign(Cluster({"t": 3}), {}) == {}


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_owned_claims_beyond_metadata_are_ignored(assignor: type[RangeAssignor]) -> None:
    """Range and RoundRobin ignore ownership; stale claims of vanished partitions do not fail the leader."""
    subs = {"m": Subscription(["t"], owned_partitions=[TP("t", 7), TP("gone", 0)], generation_id=3)}
    assert assignor().assign(Cluster({"t": 2}), subs)["m"].partitions == (TP("t", 0), TP("t", 1))
