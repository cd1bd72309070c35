"""Group members of the three Python clients, each consuming in its own thread (and event loop) until told to
leave, against a real broker (``assignors.testing.KafkaBroker``).

Every member records each rebalance-listener call in a shared :class:`GroupLog` and keeps the first error that
stopped it in ``error``; ``leave()`` stops it and closes the consumer, which sends LeaveGroup. A member running
our assignor can note each time it led (:func:`recording`): who, what our assignor decoded from every member's
JoinGroup metadata, and what it assigned.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener as AioListener
from confluent_kafka import Consumer, TopicPartition
from kafka import ConsumerRebalanceListener, KafkaConsumer

from assignors import Subscription
from assignors.aiokafka import for_aiokafka
from assignors.kafka_python import finish_joins, for_kafka_python
from helpers.group_log import GroupLog

PARTITIONS = 12  # of the topic, in every scenario
SESSION_TIMEOUT_MS = 4000  # a crashed member is noticed within 4 s; heartbeats well inside it
HEARTBEAT_INTERVAL_MS = 500
POLL_TIMEOUT_S = 1.0
JOIN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Led:
    """One assignment our assignor made as the group's leader."""

    leader: str
    subscriptions: dict[str, Subscription]  # member id -> what our adapter decoded from its JoinGroup metadata
    assignment: dict[str, tuple[int, ...]]  # member id -> the partitions it was given


def recording(adapter: Any, led: list[Led] | None, name: str) -> Any:
    """Note in ``led`` each assignment the adapter's assignor makes (when ``name`` leads); return the adapter."""
    if led is None:
        return adapter
    inner = adapter.inner
    assign = inner.assign

    def noted(cluster: Any, subscriptions: Mapping[str, Subscription]) -> Any:
        result = assign(cluster, subscriptions)
        given = {member: tuple(sorted(tp.partition for tp in a.partitions)) for member, a in result.items()}
        led.append(Led(name, dict(subscriptions), given))
        return result

    inner.assign = noted
    return adapter


def close_kafka_python(consumer: KafkaConsumer) -> None:
    """``consumer.close()``, then close the sockets kafka-python 3.0 leaves open.

    ``KafkaClient.close()`` closes each connection gracefully: a transport with a request still in
    its write buffer leaves its socket to the pending write task, and ``KafkaNetSelector.close()``
    then cancels that task. The socket stays open, held by the transport-connection reference cycle,
    until the garbage collector frees it, often at interpreter exit: ``ResourceWarning: unclosed
    <socket ... raddr=(mock cluster)>``, an error under ``filterwarnings = error``. Those
    connections never finished closing, so they are still in the client's connection table.
    """
    consumer.close()
    for connection in list(consumer._client._manager._conns.values()):
        sock = getattr(connection.transport, "_sock", None)
        if sock is not None:
            sock.close()


def _partitions(topic_partitions: Iterable[Any]) -> list[int]:
    return [tp.partition for tp in topic_partitions]


class Member:
    """The thread, the stop flag and the error every member has."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)

    def _main(self) -> None:
        try:
            self._consume()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error

    def _consume(self) -> None:
        raise NotImplementedError

    def leave(self) -> None:
        self.stop.set()
        self.thread.join(timeout=JOIN_TIMEOUT_S)
        if self.thread.is_alive():
            msg = f"member {self.name} did not stop within {JOIN_TIMEOUT_S} s"
            raise AssertionError(msg)


class _KafkaPythonListener(ConsumerRebalanceListener):  # type: ignore[misc] # kafka-python is untyped
    def __init__(self, name: str, log: GroupLog) -> None:
        self.name, self.log = name, log

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.log.record(self.name, "revoked", _partitions(revoked))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.log.record(self.name, "assigned", _partitions(assigned))

    def on_partitions_lost(self, lost: Any) -> None:
        self.log.record(self.name, "lost", _partitions(lost))


class KafkaPythonMember(Member):
    """A kafka-python 3.x consumer whose only strategy is our ``strategy`` through ``for_kafka_python``.

    ``protocol`` is the adapter's (its strategy's default when None); ``window_s`` binds the adapter to the consumer
    with that measurement window (what weighted-sticky's members report)."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        group: str,
        log: GroupLog,
        strategy: str,
        led: list[Led] | None = None,
        *,
        protocol: Any = None,
        window_s: float | None = None,
    ) -> None:
        super().__init__(name)
        adapter = for_kafka_python(strategy) if protocol is None else for_kafka_python(strategy, protocol=protocol)
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=10_000,
            partition_assignment_strategy=[recording(adapter, led, name)],
        )
        if window_s is not None:
            adapter.bind(self.consumer, window_s=window_s)
        finish_joins(self.consumer)
        self.consumer.subscribe([topic], listener=_KafkaPythonListener(name, log))
        self.thread.start()

    def _consume(self) -> None:
        try:
            while not self.stop.is_set():
                self.consumer.poll(timeout_ms=int(POLL_TIMEOUT_S * 1000))
        finally:
            close_kafka_python(self.consumer)


class ConfluentMember(Member):
    """A confluent-kafka consumer running librdkafka's own cooperative-sticky assignor."""

    def __init__(self, name: str, bootstrap: str, topic: str, group: str, log: GroupLog) -> None:
        super().__init__(name)
        self.log = log
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "partition.assignment.strategy": "cooperative-sticky",
                "enable.auto.commit": False,
                "session.timeout.ms": SESSION_TIMEOUT_MS,
                "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
                "log_level": 3,
            }
        )
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost)
        self.thread.start()

    # Under COOPERATIVE, librdkafka passes the increments, and assigns or unassigns them after the callback.
    def _assigned(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.log.record(self.name, "assigned", _partitions(partitions))

    def _revoked(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.log.record(self.name, "revoked", _partitions(partitions))

    def _lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.log.record(self.name, "lost", _partitions(partitions))

    def _consume(self) -> None:
        try:
            while not self.stop.is_set():
                message = self.consumer.poll(POLL_TIMEOUT_S)
                if message is not None and message.error() is not None:
                    raise RuntimeError(str(message.error()))
        finally:
            self.consumer.close()


class _AiokafkaListener(AioListener):  # type: ignore[misc] # aiokafka is untyped here
    def __init__(self, name: str, log: GroupLog) -> None:
        self.name, self.log = name, log

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.log.record(self.name, "revoked", _partitions(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.log.record(self.name, "assigned", _partitions(assigned))


class AiokafkaMember(Member):
    """An aiokafka consumer (EAGER) with our ``strategy`` through ``for_aiokafka``, on its own event loop; ``led`` and
    ``window_s`` as :class:`KafkaPythonMember` takes them."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        group: str,
        log: GroupLog,
        strategy: str,
        led: list[Led] | None = None,
        *,
        window_s: float | None = None,
    ) -> None:
        super().__init__(name)
        self.bootstrap, self.topic, self.group, self.log, self.strategy = bootstrap, topic, group, log, strategy
        self.led, self.window_s = led, window_s
        self.thread.start()

    def _consume(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        adapter = recording(for_aiokafka(self.strategy), self.led, self.name)
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            client_id=self.name,
            enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=10_000,
            partition_assignment_strategy=[adapter],
        )
        if self.window_s is None:
            adapter.bind(consumer)
        else:
            adapter.bind(consumer, window_s=self.window_s)
        consumer.subscribe([self.topic], listener=_AiokafkaListener(self.name, self.log))
        try:
            await consumer.start()
            while not self.stop.is_set():
                await consumer.getmany(timeout_ms=int(POLL_TIMEOUT_S * 1000))
        finally:
            # aiokafka's stop() leaves the group without calling on_partitions_revoked: log it here,
            # before the LeaveGroup that lets the others take these partitions.
            self.log.record(self.name, "revoked", self.log.holdings().get(self.name, set()))
            await consumer.stop()


Holdings = dict[str, set[int]]
M = TypeVar("M", bound=Member)


def churn(
    start: Callable[[str], M], wait: Callable[[dict[str, int]], Holdings], members: dict[str, M]
) -> tuple[Holdings, Holdings, Holdings]:
    """The common scenario: a, b and c join one at a time (each join is one rebalance of a settled group), c
    leaves, d joins. ``members`` keeps the running ones for the caller to stop. Returns the holdings at 4/4/4 with
    c, at 6/6 without it, and at 4/4/4 with d."""
    for name, sizes in (("a", {"a": 12}), ("b", {"a": 6, "b": 6}), ("c", {"a": 4, "b": 4, "c": 4})):
        members[name] = start(name)
        first = wait(sizes)
    members.pop("c").leave()
    second = wait({"a": 6, "b": 6})
    members["d"] = start("d")
    third = wait({"a": 4, "b": 4, "d": 4})
    return first, second, third
