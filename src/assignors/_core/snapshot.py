"""Read one group snapshot from JSON-like data (the CLI's ``--input``).

Format::

    {
      "topics": {"orders": 6, "payments": {"partitions": 4, "racks": [["a", "b"], ["b"], ["c"], ["a"]]}},
      "members": {
        "consumer-1": {"topics": ["orders"], "owned": ["orders-0", "orders-1"], "generation": 3,
                       "rack": "a", "group_instance_id": "host-1"}
      }
    }

A topic is a partition count, or an object with ``partitions`` and optional ``racks``
(one list of replica racks per partition). A member's ``topics`` is required; ``owned``
(``"topic-partition"`` strings), ``generation``, ``rack`` and ``group_instance_id`` are
optional. Errors name the JSON path of the offending field.
"""

from __future__ import annotations

from dataclasses import dataclass

from assignors._core.errors import InvalidSubscriptionError
from assignors._core.json_input import as_list, as_object, check_fields, fail, name, partition_count
from assignors._core.model import (
    DEFAULT_GENERATION,
    Cluster,
    MemberId,
    Subscription,
    TopicPartition,
    parse_topic_partition,
)

__all__ = ["Snapshot", "parse_snapshot"]

_MEMBER_FIELDS = frozenset({"topics", "owned", "generation", "rack", "group_instance_id"})


@dataclass(frozen=True)
class Snapshot:
    """A cluster and the members' subscriptions, as one rebalance's input."""

    cluster: Cluster
    subscriptions: dict[MemberId, Subscription]


def _parse_topics(value: object) -> Cluster:
    counts: dict[str, int] = {}
    racks: dict[TopicPartition, list[str]] = {}
    for topic, spec in as_object(value, "topics").items():
        path = f"topics.{topic}"
        name(topic, "topics")  # before a partition of it is built
        count = spec
        if isinstance(spec, dict):
            check_fields(spec, path, allowed=("partitions", "racks"), required=("partitions",))
            count = spec["partitions"]
            for index, replica_racks in enumerate(as_list(spec.get("racks", []), f"{path}.racks")):
                racks[TopicPartition(topic, index)] = as_list(replica_racks, f"{path}.racks[{index}]")
        counts[topic] = partition_count(count, path)
    try:
        return Cluster(counts, partition_racks=racks)
    except InvalidSubscriptionError as error:
        fail("topics", str(error))


def _parse_member(member: str, value: object, cluster: Cluster) -> Subscription:
    path = f"members.{member}"
    spec = as_object(value, path)
    check_fields(spec, path, allowed=_MEMBER_FIELDS, required=("topics",))
    owned: list[TopicPartition] = []
    for index, text in enumerate(as_list(spec.get("owned", []), f"{path}.owned")):
        where = f"{path}.owned[{index}]"
        if not isinstance(text, str):
            fail(where, f"expected 'topic-partition', got {text!r}")
        try:
            tp = parse_topic_partition(text)
        except InvalidSubscriptionError as error:
            fail(where, str(error))
        count = cluster.partition_count(tp.topic)
        if count is None or tp.partition >= count:
            fail(where, f"partition {text!r} is not in the snapshot's topics")
        owned.append(tp)
    topics = as_list(spec["topics"], f"{path}.topics")
    try:
        return Subscription(
            topics,
            owned_partitions=owned,
            generation_id=spec.get("generation", DEFAULT_GENERATION),
            rack_id=spec.get("rack"),
            group_instance_id=spec.get("group_instance_id"),
        )
    except InvalidSubscriptionError as error:
        fail(path, str(error))


def parse_snapshot(data: object) -> Snapshot:
    """Build a Snapshot from decoded JSON.

    Raises:
        ScenarioError: a field is missing or malformed; the message starts with its JSON path.
    """
    root = as_object(data, "snapshot")
    check_fields(root, "snapshot", allowed=("topics", "members"))
    cluster = _parse_topics(root.get("topics", {}))
    members = as_object(root.get("members", {}), "members")
    subscriptions = {name(member, "members"): _parse_member(member, spec, cluster) for member, spec in members.items()}
    return Snapshot(cluster, subscriptions)
