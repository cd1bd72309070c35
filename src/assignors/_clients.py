"""What the client adapters share: the assignor they wrap, checked for the protocol the client runs, and the
partition counts a client's cluster metadata knows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from assignors._builtin.registry import get_assignor
from assignors._core.errors import ConfigurationError
from assignors._core.model import Cluster, RebalanceProtocol, Subscription

if TYPE_CHECKING:
    from assignors._core.interface import ConsumerPartitionAssignor


def resolve(assignor: ConsumerPartitionAssignor | str) -> ConsumerPartitionAssignor:
    """The assignor itself, or a fresh built-in one for a name."""
    return get_assignor(assignor) if isinstance(assignor, str) else assignor


def require_protocol(assignor: ConsumerPartitionAssignor, protocol: RebalanceProtocol, client: str) -> None:
    """Refuse an assignor that cannot run ``protocol``, the one the ``client`` consumer will run."""
    if protocol not in assignor.supported_protocols:
        msg = f"{client} runs {protocol.name}; assignor {assignor.name!r} does not support {protocol.name}"
        raise ConfigurationError(msg)


def cluster_of(metadata: Any, subscriptions: Iterable[Subscription]) -> Cluster:
    """The partition counts ``metadata`` (a client's ClusterMetadata) knows for the subscribed topics."""
    counts: dict[str, int] = {}
    for topic in sorted({t for s in subscriptions for t in s.topics}):
        partitions = metadata.partitions_for_topic(topic)
        if partitions:
            counts[topic] = max(partitions) + 1
    return Cluster(counts)
