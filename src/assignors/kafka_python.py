"""Any assignor as a kafka-python 3.x ``partition_assignment_strategy`` entry::

    from kafka import KafkaConsumer
    from assignors.kafka_python import for_kafka_python

    consumer = KafkaConsumer("orders", group_id="billing",
                             partition_assignment_strategy=[for_kafka_python("cooperative-sticky")])
    finish_joins(consumer)  # kafka-python 3.0's lost rebalance: see finish_joins

Give each consumer its own adapter (the assignor inside keeps that consumer's previous
assignment and generation). For an assignor that balances load (``weighted-sticky``), bind the
adapter to its consumer so that it measures each partition's consumption rate and reports it
when the consumer joins::

    adapter = for_kafka_python("weighted-sticky")
    consumer = KafkaConsumer("orders", group_id="billing", partition_assignment_strategy=[adapter])
    adapter.bind(consumer)
 The JoinGroup metadata and the SyncGroup assignments it
produces are Kafka's bytes (:mod:`assignors.consumer_protocol`), so kafka-python members
can share a group with Java and librdkafka members. kafka-python is imported when the
first adapter is built, never by ``import assignors``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from assignors._builtin.registry import is_built_in
from assignors._classic.rules import choose_protocol, validate_cooperative_assignment
from assignors._clients import (
    DEFAULT_WINDOW_S,
    RateMeter,
    cluster_of,
    measure_kafka_python,
    note_assigned,
    report_measured_loads,
    require_protocol,
    resolve,
)
from assignors._core.model import (
    DEFAULT_GENERATION,
    Assignment,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from assignors._wire.consumer_protocol import encode_assignment, encode_subscription

if TYPE_CHECKING:
    from assignors._core.interface import ConsumerPartitionAssignor

__all__ = ["finish_joins", "for_kafka_python"]


def for_kafka_python(
    assignor: ConsumerPartitionAssignor | str,
    *,
    protocol: RebalanceProtocol | None = None,
    rack: str | None = None,
) -> Any:
    """A kafka-python ``AbstractPartitionAssignor`` that runs ``assignor`` (an object or a built-in name).

    Args:
        assignor: the assignor; a name gets a fresh built-in instance.
        protocol: the rebalance protocol this consumer runs; by default the assignor's
            preferred one. kafka-python requires every assignor of one consumer to share it,
            so beside EAGER-only assignors (a rolling upgrade) pass ``RebalanceProtocol.EAGER``.
        rack: this consumer's rack (sent as the subscription's RackId, KIP-881).

    Raises:
        ConfigurationError: the assignor does not support ``protocol``.
    """
    inner = resolve(assignor)
    chosen = protocol if protocol is not None else choose_protocol([inner])
    require_protocol(inner, chosen, "this kafka-python consumer")
    adapter: Any = _adapter_class()(inner, chosen, rack)
    return adapter


def finish_joins(consumer: Any) -> bool:
    """Make a kafka-python 3.0 consumer finish every rebalance a poll left in flight. Call it once per consumer.

    kafka-python 3.0's ``join_group_async`` (dpkp/kafka-python#2955) runs the JoinGroup/SyncGroup round trip as a
    task that outlives a poll whose timeout is shorter than the round trip, and loses it in two ways:

    - It takes the task up again only while ``need_rejoin()`` holds; 2.x also waited for a pending join
      (dpkp/kafka-python#1695). When a change of metadata caused the rejoin (the topics' partitions differ from
      those the leader last assigned), the leader's new assignment ends that condition in the middle of the round
      trip, since it records the metadata it assigned: no later poll takes the result up, and the member holds
      nothing, sends no heartbeat, and the group waits for it, for good. Its log ends with ``Elected group leader
      -- performing partition assignments``. It happens to kafka-python's own assignors as well, typically in the
      first seconds of a consumer whose first JoinGroup went out before the metadata of its topics arrived.
    - A task that finished between two polls is not taken up either: the next poll sends a new JoinGroup, which
      begins a new generation. The assignment the coordinator recorded for the finished one never reaches the
      member, and a consumer that does some work between short polls rejoins for as long as it runs.

    Kafka's Java consumer (``AbstractCoordinator.joinGroupIfNeeded``) keeps its join future until a poll finds it
    done, then completes the join with its result. This does the same: the coordinator says a rejoin is needed
    also while a join of its own is in flight or done and not taken up, and the next poll takes a finished one
    up. Returns whether it applied; False, changing nothing, for a kafka-python whose coordinator has no such
    join task (2.x) or no consumer group.
    """
    coordinator: Any = getattr(consumer, "_coordinator", None)
    need_rejoin = getattr(coordinator, "need_rejoin", None)
    join_group_async = getattr(coordinator, "join_group_async", None)
    if need_rejoin is None or join_group_async is None or not hasattr(coordinator, "_join_task"):
        return False
    if getattr(need_rejoin, "finishes_joins", False):
        return True

    def needs_rejoin_or_has_a_join() -> bool:
        return bool(need_rejoin()) or coordinator._join_task is not None  # noqa: SLF001 - the state lost upstream

    async def join_taking_up_a_finished_one(timeout_ms: float | None = None) -> bool:
        task = coordinator._join_task  # noqa: SLF001
        if task is not None and task.is_done:
            coordinator._join_task = _Finished(task)  # noqa: SLF001 - awaited, not sent again
        return bool(await join_group_async(timeout_ms))

    needs_rejoin_or_has_a_join.finishes_joins = True  # type: ignore[attr-defined]
    coordinator.need_rejoin = needs_rejoin_or_has_a_join
    coordinator.join_group_async = join_taking_up_a_finished_one
    return True


class _Finished:
    """A join task that finished before a poll took it up, shown to ``join_group_async`` as one still in flight:
    the loop then awaits it (its result, or its error, at once) instead of sending a new JoinGroup."""

    is_done = False

    def __init__(self, task: Any) -> None:
        self._task = task

    def add_callback(self, callback: Any, *args: Any, **kwargs: Any) -> Any:
        return self._task.add_callback(callback, *args, **kwargs)

    def add_errback(self, errback: Any, *args: Any, **kwargs: Any) -> Any:
        return self._task.add_errback(errback, *args, **kwargs)

    def __await__(self) -> Any:
        return self._task.__await__()


class _Measuring:
    """The adapter's measuring of consumption rates, for assignors that balance load."""

    inner: ConsumerPartitionAssignor
    owned: tuple[TopicPartition, ...]
    meter: RateMeter | None = None

    def bind(self, consumer: Any, *, window_s: float = DEFAULT_WINDOW_S) -> None:
        """Measure what ``consumer`` (a ``KafkaConsumer``) consumes per partition, over the last ``window_s``
        seconds, and report it when it joins, for an assignor that takes loads (``report_loads``); for any other
        assignor nothing changes. Its ``poll`` (which iteration uses too) is wrapped to count records and bytes."""
        self.meter = measure_kafka_python(self.inner, consumer, window_s, self.owned)


@cache
def _adapter_class() -> type:
    try:
        from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor
        from kafka.coordinator.assignors.abstract import RebalanceProtocol as KafkaProtocol
    except ImportError as error:  # pragma: no cover - exercised without the client
        msg = f"for_kafka_python needs kafka-python 3.x (pip install 'kafka-python>=3'): {error}"
        raise ImportError(msg) from None

    class KafkaPythonAssignor(_Measuring, AbstractPartitionAssignor):  # type: ignore[misc] # kafka-python is untyped
        """kafka-python's assignor interface around a ``ConsumerPartitionAssignor``."""

        def __init__(self, inner: ConsumerPartitionAssignor, protocol: RebalanceProtocol, rack: str | None) -> None:
            self.inner = inner
            self.protocol = protocol
            self.rack = rack
            self.owned: tuple[TopicPartition, ...] = ()
            self.generation = DEFAULT_GENERATION

        @property
        def name(self) -> str:
            return self.inner.name

        @property
        def version(self) -> int:
            return self.inner.version

        def supported_protocols(self) -> list[Any]:
            return [KafkaProtocol(int(self.protocol))]

        def metadata(self, topics: Collection[str]) -> bytes:
            """JoinGroup metadata, version 3: what this member owns, in which generation, on which rack.

            Under EAGER the consumer revokes everything before joining, so it reports nothing
            owned (as Java does); under COOPERATIVE it reports what it still owns of ``topics``.
            """
            cooperative = self.protocol is RebalanceProtocol.COOPERATIVE
            owned = [tp for tp in self.owned if tp.topic in topics] if cooperative else []
            report_measured_loads(self.inner, self.meter)
            subscription = Subscription(
                topics,
                user_data=self.inner.subscription_user_data(topics),
                owned_partitions=owned,
                generation_id=self.generation,
                rack_id=self.rack,
            )
            return encode_subscription(subscription)

        def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, bytes]:
            """The leader's assignment: members' decoded metadata in, Kafka's assignment bytes out."""
            subscriptions = {member.member_id: _subscription(member) for member in members}
            result = self.inner.assign(cluster_of(cluster, subscriptions.values()), subscriptions)
            if self.protocol is RebalanceProtocol.COOPERATIVE and not is_built_in(self.inner):
                validate_cooperative_assignment({m: s.owned_partitions for m, s in subscriptions.items()}, result)
            return {member: encode_assignment(assignment) for member, assignment in result.items()}

        def on_assignment(self, assignment: Any, generation: int) -> None:
            partitions = tuple(TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions())
            self.owned, self.generation = partitions, generation
            note_assigned(self.meter, partitions)
            self.inner.on_assignment(Assignment(partitions, user_data=assignment.user_data), generation)

    return KafkaPythonAssignor


def _subscription(member: Any) -> Subscription:
    """A JoinGroup member, as kafka-python decoded its metadata, as our Subscription."""
    metadata = member.metadata
    owned = [
        TopicPartition(entry.topic, number)
        for entry in getattr(metadata, "owned_partitions", None) or ()
        for number in entry.partitions
    ]
    generation = getattr(metadata, "generation_id", None)
    return Subscription(
        metadata.topics,
        user_data=metadata.user_data or None,
        owned_partitions=owned,
        generation_id=DEFAULT_GENERATION if generation is None else generation,
        rack_id=getattr(metadata, "rack_id", None),
        group_instance_id=getattr(member, "group_instance_id", None),
    )
