"""What the client adapters share: the partition counts a client's cluster metadata knows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assignors._model import Cluster, Subscription


def cluster_of(metadata: Any, subscriptions: Iterable[Subscription]) -> Cluster:
    """The partition counts ``metadata`` (a client's ClusterMetadata) knows for the subscribed topics."""
    counts: dict[str, int] = {}
    for topic in sorted({t for s in subscriptions for t in s.topics}):
        partitions = metadata.partitions_for_topic(topic)
        if partitions:
            counts[topic] = max(partitions) + 1
    return Cluster(counts)
