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
from typing import Any

from assignors._errors import InvalidSubscriptionError
from assignors._model import (
    DEFAULT_GENERATION,
    INT32_MAX,
    Cluster,
    MemberId,
    Subscription,
    TopicPartition,
    is_partition_count,
    parse_topic_partition,
)

__all__ = ["Snapshot", "parse_snapshot"]

_MEMBER_FIELDS = frozenset({"topics", "owned", "generation", "rack", "group_instance_id"})


@dataclass(frozen=True)
class Snapshot:
    """A cluster and the members' subscriptions, as one rebalance's input."""

    cluster: Cluster
    subscriptions: dict[MemberId, Subscription]


def _fail(path: str, message: str) -> InvalidSubscriptionError:
    return InvalidSubscriptionError(f"{path}: {message}")


def _object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {type(value).__name__}")
    return value


def _list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {type(value).__name__}")
    return value


def _parse_topics(value: object) -> Cluster:
    counts: dict[str, int] = {}
    racks: dict[TopicPartition, list[str]] = {}
    for topic, spec in _object(value, "topics").items():
        path = f"topics.{topic}"
        if isinstance(spec, dict):
            unknown = set(spec) - {"partitions", "racks"}
            if unknown:
                raise _fail(path, f"unknown field(s) {sorted(unknown)}; expected 'partitions' and optional 'racks'")
            count = spec.get("partitions")
            for index, replica_racks in enumerate(_list(spec.get("racks", []), f"{path}.racks")):
                racks[TopicPartition(topic, index)] = _list(replica_racks, f"{path}.racks[{index}]")
        else:
            count = spec
        if not is_partition_count(count):
            raise _fail(path, f"partition count must be an integer in 0..{INT32_MAX}, got {count!r}")
        counts[topic] = count
    try:
        return Cluster(counts, partition_racks=racks)
    except InvalidSubscriptionError as error:
        raise _fail("topics", str(error)) from None


def _parse_member(member: str, value: object, cluster: Cluster) -> Subscription:
    path = f"members.{member}"
    spec = _object(value, path)
    unknown = set(spec) - _MEMBER_FIELDS
    if unknown:
        raise _fail(path, f"unknown field(s) {sorted(unknown)}; expected {sorted(_MEMBER_FIELDS)}")
    if "topics" not in spec:
        raise _fail(path, "missing field 'topics'")
    owned: list[TopicPartition] = []
    for index, text in enumerate(_list(spec.get("owned", []), f"{path}.owned")):
        if not isinstance(text, str):
            raise _fail(f"{path}.owned[{index}]", f"expected 'topic-partition', got {text!r}")
        try:
            tp = parse_topic_partition(text)
        except InvalidSubscriptionError as error:
            raise _fail(f"{path}.owned[{index}]", str(error)) from None
        count = cluster.partition_count(tp.topic)
        if count is None or tp.partition >= count:
            raise _fail(f"{path}.owned[{index}]", f"partition {text!r} is not in the snapshot's topics")
        owned.append(tp)
    topics = _list(spec["topics"], f"{path}.topics")
    try:
        return Subscription(
            topics,
            owned_partitions=owned,
            generation_id=spec.get("generation", DEFAULT_GENERATION),
            rack_id=spec.get("rack"),
            group_instance_id=spec.get("group_instance_id"),
        )
    except InvalidSubscriptionError as error:
        raise _fail(path, str(error)) from None


def parse_snapshot(data: object) -> Snapshot:
    """Build a Snapshot from decoded JSON.

    Raises:
        InvalidSubscriptionError: a field is missing or malformed; the message starts with its JSON path.
    """
    root = _object(data, "snapshot")
    unknown = set(root) - {"topics", "members"}
    if unknown:
        raise _fail("snapshot", f"unknown field(s) {sorted(unknown)}; expected 'topics' and 'members'")
    cluster = _parse_topics(root.get("topics", {}))
    members = _object(root.get("members", {}), "members")
    subscriptions = {member: _parse_member(member, spec, cluster) for member, spec in members.items()}
    return Snapshot(cluster, subscriptions)
