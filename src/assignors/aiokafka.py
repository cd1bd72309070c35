"""Any assignor as an aiokafka ``partition_assignment_strategy`` entry (EAGER: aiokafka's only protocol)::

    from aiokafka import AIOKafkaConsumer
    from assignors.aiokafka import for_aiokafka

    assignor = for_aiokafka("sticky")
    consumer = AIOKafkaConsumer("orders", group_id="billing", partition_assignment_strategy=[assignor])
    assignor.bind(consumer)  # so the assignor learns each generation

Each consumer gets its own adapter and its own assignor instance: no state is shared
between consumers of one process (aiokafka's own sticky assignor keeps it on the class,
aiokafka issue 1175). aiokafka never tells an assignor its generation (issue 1176); a
bound adapter reads it from the consumer's group coordinator when the assignment
arrives, so sticky user data carries the real generation. The metadata is Kafka's
version-3 bytes; aiokafka's leader reads only their version-0 fields (topics and user
data), which is where the sticky assignors carry ownership under EAGER. For an assignor that
balances load (``weighted-sticky``), a bound adapter also measures each partition's consumption
rate (what ``getmany`` and ``getone`` return) and reports it when the consumer joins.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from assignors._clients import (
    DEFAULT_WINDOW_S,
    RateMeter,
    cluster_of,
    measure_aiokafka,
    note_assigned,
    report_measured_loads,
    require_protocol,
    resolve,
)
from assignors._core.model import DEFAULT_GENERATION, Assignment, RebalanceProtocol, Subscription, TopicPartition
from assignors._wire.consumer_protocol import encode_assignment, encode_subscription

if TYPE_CHECKING:
    from assignors._core.interface import ConsumerPartitionAssignor

__all__ = ["for_aiokafka"]


def for_aiokafka(assignor: ConsumerPartitionAssignor | str, *, rack: str | None = None) -> Any:
    """An aiokafka ``AbstractPartitionAssignor`` that runs ``assignor`` (an object or a built-in name).

    Args:
        assignor: the assignor; a name gets a fresh built-in instance.
        rack: this consumer's rack (sent as the subscription's RackId, KIP-881).

    Raises:
        ConfigurationError: the assignor does not support EAGER, the only protocol aiokafka runs.
    """
    inner = resolve(assignor)
    require_protocol(inner, RebalanceProtocol.EAGER, "aiokafka")  # its only protocol
    adapter: Any = _adapter_class()(inner, rack)
    return adapter


@cache
def _adapter_class() -> type:
    try:
        from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
    except ImportError as error:  # pragma: no cover - exercised without the client
        msg = f"for_aiokafka needs aiokafka (pip install aiokafka): {error}"
        raise ImportError(msg) from None

    class AiokafkaAssignor(AbstractPartitionAssignor):  # type: ignore[misc] # aiokafka's base is untyped here
        """aiokafka's assignor interface around a ``ConsumerPartitionAssignor``, per consumer."""

        def __init__(self, inner: ConsumerPartitionAssignor, rack: str | None) -> None:
            self.inner = inner
            self.rack = rack
            self.generation = DEFAULT_GENERATION
            self._consumer: Any = None
            self.meter: RateMeter | None = None

        @property
        def name(self) -> str:
            return self.inner.name

        def bind(self, consumer: Any, *, window_s: float = DEFAULT_WINDOW_S) -> None:
            """Read each generation from ``consumer`` (an ``AIOKafkaConsumer``) when assignments arrive.

            For an assignor that takes loads (``report_loads``), also measure what the consumer consumes per
            partition over the last ``window_s`` seconds (its ``getmany`` and ``getone``, which iteration uses,
            are wrapped to count records and bytes) and report it when the consumer joins.
            """
            self._consumer = consumer
            self.meter = measure_aiokafka(self.inner, consumer, window_s)

        def metadata(self, topics: Collection[str]) -> bytes:
            """JoinGroup metadata, version 3; nothing owned (EAGER members revoke everything first)."""
            report_measured_loads(self.inner, self.meter)
            subscription = Subscription(
                topics,
                user_data=self.inner.subscription_user_data(topics),
                generation_id=self.generation,
                rack_id=self.rack,
            )
            return encode_subscription(subscription)

        def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
            """The leader's assignment from aiokafka's decoded member metadata, as Kafka's bytes."""
            subscriptions = {
                member: Subscription(metadata.subscription, user_data=metadata.user_data or None)
                for member, metadata in members.items()
            }
            result = self.inner.assign(cluster_of(cluster, subscriptions.values()), subscriptions)
            return {member: encode_assignment(assignment) for member, assignment in result.items()}

        def on_assignment(self, assignment: Any) -> None:
            coordinator = getattr(self._consumer, "_coordinator", None)
            generation = getattr(coordinator, "generation", None)
            if isinstance(generation, int) and generation >= 0:
                self.generation = generation
            partitions = tuple(TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions())
            note_assigned(self.meter, partitions)
            self.inner.on_assignment(Assignment(partitions, user_data=assignment.user_data), self.generation)

    return AiokafkaAssignor
