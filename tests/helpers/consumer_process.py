"""One group member in its own process, so a test can SIGKILL it: kafka-python or aiokafka with one of our
assignors, consuming and committing until SIGTERM.

    python consumer_process.py client=kafka-python strategy=cooperative-sticky bootstrap=127.0.0.1:PORT \
        group=G topic=T name=c1 [instance=static-1] [session_ms=6000]

It prints one JSON object per line, as the Java member (``dev.assignors.member.ConsumerMember``) does, each with
``t`` (``time.monotonic()``: CLOCK_MONOTONIC, the clock Java's ``System.nanoTime`` reads on Linux) and ``e``:
``started``; ``assigned``, ``revoked``, ``lost`` (the rebalance listener, with ``partitions``); ``record``
(``p``, ``o``, ``k``) for each record consumed; ``committed`` (``offsets``: partition to next offset) after each
successful commit; ``commit-failed``; ``closed``. Records are committed after they are printed (at least once),
and what was consumed of a partition is committed before it is given up.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import threading
import time
from typing import Any

POLL_MS = 200


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"e": event, "t": time.monotonic(), **fields}, sort_keys=True) + "\n")
    sys.stdout.flush()


def _partitions(tps: Any) -> list[int]:
    return sorted(tp.partition for tp in tps)


def run_kafka_python(options: dict[str, str], stop: threading.Event) -> None:  # noqa: C901 - one consumer's life
    from kafka import AsyncConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata
    from kafka.errors import KafkaError

    from assignors._member import _known_to
    from assignors.kafka_python import finish_joins, for_kafka_python

    pending: dict[Any, int] = {}

    def take(only: Any = None) -> dict[Any, int]:
        return {tp: o for tp, o in pending.items() if only is None or tp in only}

    def done(offsets: dict[Any, int], error: Exception | None) -> None:
        if error is not None:
            emit("commit-failed", error=type(error).__name__)
            return
        for tp, o in offsets.items():
            if pending.get(tp) == o:
                del pending[tp]
        emit("committed", offsets={str(tp.partition): o for tp, o in offsets.items()})

    def commit(consumer: KafkaConsumer) -> None:
        offsets = take()
        if offsets:
            try:
                consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()})
            except KafkaError as error:
                done(offsets, error)
            else:
                done(offsets, None)

    # kafka-python 3 runs listeners on its IO loop, where a blocking commit() is refused: commit what was
    # consumed of the revoked partitions with the coordinator's awaitable commit instead.
    class Listener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            offsets = take(set(revoked))
            if offsets:
                commits = {tp: OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()}
                try:
                    await consumer._coordinator._commit_offsets_sync_async(commits, timeout_ms=10_000)
                except KafkaError as error:
                    done(offsets, error)
                else:
                    done(offsets, None)
            emit("revoked", partitions=_partitions(revoked))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            emit("assigned", partitions=_partitions(assigned))

        async def on_partitions_lost(self, lost: Any) -> None:
            for tp in lost:
                pending.pop(tp, None)
            emit("lost", partitions=_partitions(lost))

    consumer = KafkaConsumer(
        bootstrap_servers=options["bootstrap"],
        group_id=options["group"],
        client_id=options["name"],
        group_instance_id=options.get("instance"),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=int(options.get("session_ms", "6000")),
        heartbeat_interval_ms=500,
        max_poll_interval_ms=30_000,
        partition_assignment_strategy=[for_kafka_python(options["strategy"])],
    )
    finish_joins(consumer)  # kafka-python 3.0.12 can lose a rebalance that a poll left in flight
    # as collect's members: a leader that knows no partition yet records an empty first generation, and rejoins
    _known_to(consumer, [options["topic"]])
    consumer.subscribe([options["topic"]], listener=Listener())
    emit("started")
    try:
        while not stop.is_set():
            try:
                batch = consumer.poll(timeout_ms=POLL_MS)
            except KafkaError as error:  # kafka-python 3.0.12 raises a refused connection while the broker restarts
                if not error.retriable:
                    raise
                emit("retrying", error=str(error))
                continue
            for tp, records in batch.items():
                for record in records:
                    emit("record", p=tp.partition, o=record.offset, k=record.key.decode())
                pending[tp] = records[-1].offset + 1
            commit(consumer)
    finally:
        consumer.close()
        emit("closed")


def run_aiokafka(options: dict[str, str], stop: threading.Event) -> None:  # noqa: C901 - one consumer's life
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener
    from aiokafka.errors import KafkaError

    from assignors.aiokafka import for_aiokafka

    pending: dict[Any, int] = {}

    async def commit(consumer: AIOKafkaConsumer, only: Any = None) -> None:
        offsets = {tp: o for tp, o in pending.items() if only is None or tp in only}
        if not offsets:
            return
        try:
            await consumer.commit(offsets)
        except KafkaError as error:
            emit("commit-failed", error=type(error).__name__)
            return
        for tp, o in offsets.items():
            if pending.get(tp) == o:
                del pending[tp]
        emit("committed", offsets={str(tp.partition): o for tp, o in offsets.items()})

    async def main() -> None:
        adapter = for_aiokafka(options["strategy"])
        consumer = AIOKafkaConsumer(
            bootstrap_servers=options["bootstrap"],
            group_id=options["group"],
            client_id=options["name"],
            group_instance_id=options.get("instance"),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=int(options.get("session_ms", "6000")),
            heartbeat_interval_ms=500,
            max_poll_interval_ms=30_000,
            partition_assignment_strategy=[adapter],
        )
        adapter.bind(consumer)

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                await commit(consumer, set(revoked))
                emit("revoked", partitions=_partitions(revoked))

            async def on_partitions_assigned(self, assigned: Any) -> None:
                emit("assigned", partitions=_partitions(assigned))

        consumer.subscribe([options["topic"]], listener=Listener())
        await consumer.start()
        emit("started")
        try:
            while not stop.is_set():
                batch = await consumer.getmany(timeout_ms=POLL_MS)
                for tp, records in batch.items():
                    for record in records:
                        emit("record", p=tp.partition, o=record.offset, k=record.key.decode())
                    pending[tp] = records[-1].offset + 1
                await commit(consumer)
        finally:
            # aiokafka's stop() leaves the group without calling on_partitions_revoked: commit and say so here.
            held = consumer.assignment()
            await commit(consumer)
            emit("revoked", partitions=_partitions(held))
            await consumer.stop()
            emit("closed")

    asyncio.run(main())


def main(argv: list[str]) -> None:
    options = dict(arg.split("=", 1) for arg in argv)
    # The clients' own story (joins, elections, errors) on stderr, which the log interleaves with the JSON lines.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for name in ("kafka.coordinator", "aiokafka.consumer.group_coordinator"):
        logging.getLogger(name).setLevel(logging.INFO)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    run = {"kafka-python": run_kafka_python, "aiokafka": run_aiokafka}[options["client"]]
    run(options, stop)


if __name__ == "__main__":
    main(sys.argv[1:])
