"""KIP-848's ``range`` server assignor (Kafka 3.9 and later): contiguous ranges, recomputed every time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assignors._builtin.range import RangeAssignor as ClassicRangeAssignor
from assignors._core.errors import ConfigurationError
from assignors._core.model import RANGE_ASSIGNOR_NAME, Cluster
from assignors.consumer_group._common import KAFKA_VERSION, ServerAssignor, kafka_version_tuple

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.model import MemberId, Subscription, Topic, TopicPartition

__all__ = ["RangeAssignor"]


class RangeAssignor(ServerAssignor):
    """Kafka's server-side ``RangeAssignor`` (KAFKA-16944, Kafka 3.9 and later).

    Not sticky on purpose: the target is a pure function of the members and their
    subscriptions, whatever the previous target (``owned_partitions``) was. Members are
    sorted with static members first by ``group_instance_id``, then dynamic members by
    member id (Java string order); each topic's partitions are split in contiguous ranges
    over its subscribers in that order, the first ``partitions % subscribers`` taking one
    more. With identical subscriptions the same members take the extra partition of every
    topic, which keeps co-partitioned topics together. A static member that restarts with a
    new member id keeps its place, hence its partitions.

    Kafka's output equals this one exactly (no ``HashMap`` order is involved), except that
    Kafka 4.0+ clients draw random member ids, so dynamic members sort differently than
    the classic clients' ``client.id-UUID`` ids. Racks are ignored, as in every released
    Kafka version. ``kafka_version`` (default :data:`~assignors.consumer_group.KAFKA_VERSION`)
    is the broker's: the same rule from 3.9.0 to 4.4.0; Kafka 3.7 and 3.8 had a sticky
    server range instead, not modelled (a ConfigurationError).

    >>> from assignors import Cluster, Subscription
    >>> subs = {"A": Subscription(["t1", "t3"]), "B": Subscription(["t1", "t3"])}
    >>> result = RangeAssignor().assign(Cluster({"t1": 3, "t3": 2}), subs)
    >>> {m: [str(tp) for tp in x.partitions] for m, x in result.items()}
    {'A': ['t1-0', 't1-1', 't3-0'], 'B': ['t1-2', 't3-1']}
    """

    name = RANGE_ASSIGNOR_NAME

    def __init__(self, *, kafka_version: str | None = None) -> None:
        version = KAFKA_VERSION if kafka_version is None else kafka_version
        if kafka_version_tuple(version) < (3, 9, 0):
            msg = (
                f"kafka_version={version!r}: KIP-848's server range is modelled from Kafka 3.9.0 on (KAFKA-16944); "
                "3.7 and 3.8 had a sticky range"
            )
            raise ConfigurationError(msg)
        self.kafka_version = version

    def __repr__(self) -> str:
        if self.kafka_version == KAFKA_VERSION:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(kafka_version={self.kafka_version!r})"

    def _targets(
        self,
        order: list[MemberId],
        counts: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        *,
        identical: bool,  # noqa: ARG002 - the same rule either way
        topic_ids: Mapping[Topic, str],  # noqa: ARG002 - Kafka's range goes by topic name
    ) -> list[list[TopicPartition]]:
        # The classic range without racks and with Kafka's member order is this rule exactly.
        result = ClassicRangeAssignor().assign(Cluster(counts), subscriptions)
        return [list(result[member].partitions) for member in order]
