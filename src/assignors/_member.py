"""One member of a real consumer group, as a process: ``python -m assignors._member``.

The child side of :mod:`assignors.testing._groups` (which starts it and reads what it prints; what both agree on
is in :mod:`assignors._groups.member_process`, so the child needs nothing of the ``testing`` extra): one client
(confluent-kafka, kafka-python or aiokafka, the last two with this project's assignors through
:mod:`assignors.kafka_python` and :mod:`assignors.aiokafka`) in one group, consuming until SIGTERM, printing one
JSON line per rebalance-listener call and reading ``subscribe t1,t2`` lines from a control file. An entry point
like ``__main__``: nothing imports it, and it may import the client adapters.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import logging
import signal
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assignors._groups.member_process import CLIENTS, METADATA_TIMEOUT_S, POLL_S, STACKS_SIGNAL
from assignors.aiokafka import for_aiokafka
from assignors.kafka_python import finish_joins, for_kafka_python


class _Member:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stop = False
        self.control_read = 0

    def emit(self, event: str, partitions: Iterable[Any] = (), **extra: Any) -> None:
        listed = sorted([tp.topic, tp.partition] for tp in partitions)
        line = {"at": time.time(), "t": time.monotonic(), "event": event, "name": self.args.name, "partitions": listed}
        line |= extra
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    def fetched(self, partitions: Iterable[Any]) -> None:
        """With ``--fetched``: the partitions one poll returned records of (the calibration's consumption clock)."""
        if self.args.fetched and partitions:
            self.emit("fetched", partitions)

    def commands(self) -> list[list[str]]:
        """New lines of the control file, split in words."""
        text = Path(self.args.control).read_text(encoding="utf-8")
        complete = text[: text.rfind("\n") + 1]
        new, self.control_read = complete[self.control_read :], len(complete)
        return [line.split() for line in new.splitlines() if line.strip()]


def _confluent_config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap_servers,
        "group.id": args.group,
        "client.id": args.name,
        "enable.auto.commit": False,
        "log_level": 3,
    }
    if args.remote_assignor:
        return config | {"group.protocol": "consumer", "group.remote.assignor": args.remote_assignor}
    return config | {
        "partition.assignment.strategy": args.strategy or "range",
        "session.timeout.ms": args.session_timeout_ms,
        "heartbeat.interval.ms": 500,
    }


def _run_confluent(member: _Member) -> None:
    from confluent_kafka import Consumer

    args = member.args
    consumer = Consumer(_confluent_config(args))

    def extra() -> dict[str, Any]:
        return {"member_id": consumer.memberid()}

    def assigned(_c: Any, partitions: list[Any]) -> None:
        member.emit("assigned", partitions, **extra())

    def revoked(_c: Any, partitions: list[Any]) -> None:
        member.emit("revoked", partitions, **extra())

    def lost(_c: Any, partitions: list[Any]) -> None:
        member.emit("lost", partitions, **extra())

    def subscribe(topics: list[str]) -> None:
        consumer.subscribe(topics, on_assign=assigned, on_revoke=revoked, on_lost=lost)

    subscribe(args.topics.split(","))
    try:
        while not member.stop:
            for command in member.commands():
                if command[0] == "subscribe":
                    subscribe(command[1].split(","))
            message = consumer.poll(POLL_S)
            error = message.error() if message is not None else None
            if error is not None and error.fatal():
                raise RuntimeError(str(error))
    finally:
        consumer.close()
        member.emit("closed")


def _known_to(consumer: Any, topics: Sequence[str], timeout: float = METADATA_TIMEOUT_S) -> None:
    """Wait until kafka-python's metadata names every partition of ``topics``.

    kafka-python sends its first JoinGroup without waiting for metadata of the topics it subscribes to (only a
    pattern subscription waits, KAFKA-3949; aiokafka waits for any). A leader that knows no partition of a topic
    yet assigns none of it, as Kafka's ``AbstractPartitionAssignor`` skips a topic without metadata, and rejoins
    when the metadata arrives: the broker then records a generation with nothing of that topic assigned, which
    no replay with the topic's real partition count reproduces. Members of these tests start knowing their topics.
    """
    deadline = time.monotonic() + timeout
    while not all(consumer.partitions_for_topic(topic) for topic in topics):
        if time.monotonic() > deadline:
            msg = f"kafka-python's metadata named no partitions of {', '.join(topics)} within {timeout:.0f} s"
            raise TimeoutError(msg)
        time.sleep(0.1)


def _run_kafka_python(member: _Member) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer

    # kafka-python's group coordinator says what it does at INFO (join, sync, errors): into the member's log
    coordinator_log = logging.getLogger("kafka.coordinator")
    coordinator_log.setLevel(logging.INFO)
    coordinator_log.addHandler(logging.StreamHandler(sys.stderr))

    args = member.args
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap_servers,
        group_id=args.group,
        client_id=args.name,
        enable_auto_commit=False,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        partition_assignment_strategy=[for_kafka_python(args.strategy or "range")],
        **_optional(args),
    )
    finish_joins(consumer)  # kafka-python 3.0.12 can lose a rebalance that a poll left in flight

    def extra() -> dict[str, Any]:
        generation = consumer._coordinator._generation  # noqa: SLF001 - kafka-python has no public accessor
        return {"member_id": generation.member_id, "generation": generation.generation_id}

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc] # kafka-python is untyped
        def on_partitions_revoked(self, revoked: Any) -> None:
            member.emit("revoked", revoked, **extra())

        def on_partitions_assigned(self, assigned: Any) -> None:
            member.emit("assigned", assigned, **extra())

        def on_partitions_lost(self, lost: Any) -> None:
            member.emit("lost", lost, **extra())

    def subscribe(topics: list[str]) -> None:
        _known_to(consumer, topics)
        consumer.subscribe(topics, listener=Listener())

    subscribe(args.topics.split(","))
    try:
        while not member.stop:
            for command in member.commands():
                if command[0] == "subscribe":
                    subscribe(command[1].split(","))
            member.fetched(_poll_kafka_python(consumer, member))
    finally:
        consumer.close(autocommit=False)
        member.emit("closed")


def _poll_kafka_python(consumer: Any, member: _Member) -> list[Any]:
    """One poll; a retriable error is said and the next poll retries (kafka-python 3.0.12's poll raises a refused
    connection while the broker restarts: its metadata refresh in ``ensure_coordinator_ready`` is not guarded)."""
    from kafka.errors import KafkaError

    try:
        return list(consumer.poll(timeout_ms=int(POLL_S * 1000)))
    except KafkaError as error:
        if not error.retriable:
            raise
        member.emit("retrying", error=str(error))
    return []


async def _run_aiokafka(member: _Member) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    args = member.args
    adapter = for_aiokafka(args.strategy or "range")
    consumer = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap_servers,
        group_id=args.group,
        client_id=args.name,
        enable_auto_commit=False,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        partition_assignment_strategy=[adapter],
        **_optional(args),
    )
    adapter.bind(consumer)

    def extra() -> dict[str, Any]:
        coordinator = consumer._coordinator  # noqa: SLF001 - aiokafka has no public accessor
        return {"member_id": coordinator.member_id, "generation": coordinator.generation}

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc] # aiokafka is untyped here
        async def on_partitions_revoked(self, revoked: Any) -> None:
            member.emit("revoked", revoked, **extra())

        async def on_partitions_assigned(self, assigned: Any) -> None:
            member.emit("assigned", assigned, **extra())

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: setattr(member, "stop", True))
    consumer.subscribe(args.topics.split(","), listener=Listener())
    await consumer.start()
    try:
        while not member.stop:
            for command in member.commands():
                if command[0] == "subscribe":
                    consumer.subscribe(command[1].split(","), listener=Listener())
            member.fetched(list(await consumer.getmany(timeout_ms=int(POLL_S * 1000))))
    finally:
        # aiokafka's stop() leaves the group without calling on_partitions_revoked: say so here.
        member.emit("revoked", consumer.assignment(), **extra())
        await consumer.stop()
        member.emit("closed")


def _optional(args: argparse.Namespace) -> dict[str, Any]:
    """The kafka-python / aiokafka settings given only when asked for (their defaults otherwise)."""
    found: dict[str, Any] = {}
    if args.group_instance_id:
        found["group_instance_id"] = args.group_instance_id
    if args.metadata_max_age_ms is not None:
        found["metadata_max_age_ms"] = args.metadata_max_age_ms
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """One member: consume until SIGTERM, printing each listener call as a JSON line."""
    parser = argparse.ArgumentParser(prog="python -m assignors._member", description=main.__doc__)
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--client", choices=CLIENTS, required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--topics", required=True, help="comma-separated")
    parser.add_argument("--control", required=True, help="a file of commands: 'subscribe t1,t2' lines")
    parser.add_argument("--strategy")
    parser.add_argument("--remote-assignor")
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=500)
    parser.add_argument("--metadata-max-age-ms", type=int)
    parser.add_argument("--group-instance-id", help="a static member (kafka-python, aiokafka)")
    parser.add_argument("--fetched", action="store_true", help="print the partitions each poll returned records of")
    args = parser.parse_args(argv)
    member = _Member(args)
    faulthandler.register(STACKS_SIGNAL, all_threads=True)  # the parent asks where a stuck member is
    signal.signal(signal.SIGTERM, lambda *_: setattr(member, "stop", True))
    if args.client == "confluent":
        _run_confluent(member)
    elif args.client == "kafka-python":
        _run_kafka_python(member)
    else:
        asyncio.run(_run_aiokafka(member))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
