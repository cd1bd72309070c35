"""Our cooperative-sticky inside kafka-python 3.x consumers, in a group on a real broker."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener, KafkaConsumer

from assignors.kafka_python import finish_joins, for_kafka_python
from assignors.testing import KafkaBroker
from helpers.group_log import GroupLog, settled
from helpers.members import JOIN_TIMEOUT_S, PARTITIONS, KafkaPythonMember, Led, churn, close_kafka_python

pytestmark = [pytest.mark.integration, pytest.mark.kafka]  # real rebalances: `make integration` runs several at once


def test_cooperative_sticky_group_with_kafka_python(broker: KafkaBroker, topic: str, group: str) -> None:
    """Three consumers; one leaves, one joins: no partition held twice, balanced, survivors keep theirs."""
    log = GroupLog()
    led: list[Led] = []
    member = partial(
        KafkaPythonMember,
        bootstrap=broker.bootstrap_servers,
        topic=topic,
        group=group,
        log=log,
        strategy="cooperative-sticky",
        led=led,
    )
    wait = partial(settled, log, partitions=PARTITIONS)
    members: dict[str, KafkaPythonMember] = {}
    try:
        first, second, third = churn(member, wait, members)
        assert first["a"] <= second["a"]  # survivors kept theirs
        assert first["b"] <= second["b"]
        assert third["a"] <= second["a"]  # they only gave up what d needed
        assert third["b"] <= second["b"]
        assert log.double_ownership() == []
        assert log.full_revocations(["a", "b", "d"]) == []  # COOPERATIVE: no survivor ever gave up everything
        assert led  # our assignor led every round: a, the first member, stayed the leader
        assert {call.leader for call in led} == {"a"}
    finally:
        for running in members.values():
            running.leave()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)


JOINS = 6
SHORT_POLL_MS = 10


def test_a_member_polling_briefly_finishes_every_rebalance(broker: KafkaBroker, topic: str) -> None:
    """A lone consumer whose first JoinGroup goes out before its topic's metadata, polling 10 ms at a time: the
    metadata's arrival makes it rejoin, and the poll that sends that JoinGroup returns before its SyncGroup does.
    kafka-python 3.0.12 then loses the rebalance (no later poll takes it up: the consumer holds nothing, for good;
    5 of 8 such consumers here before ``finish_joins``). With it, every one holds the whole topic."""
    held: dict[str, int] = {}
    for number in range(JOINS):
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap_servers,
            group_id=f"brief-{number}-{topic}",
            enable_auto_commit=False,
            partition_assignment_strategy=[for_kafka_python("range")],
        )
        try:
            assert finish_joins(consumer)
            consumer.subscribe([topic])
            deadline = time.monotonic() + JOIN_TIMEOUT_S
            while len(consumer.assignment()) < PARTITIONS and time.monotonic() < deadline:
                consumer.poll(timeout_ms=SHORT_POLL_MS)
            held[f"consumer {number}"] = len(consumer.assignment())
        finally:
            close_kafka_python(consumer)
    assert held == {f"consumer {number}": PARTITIONS for number in range(JOINS)}


WORK_BETWEEN_POLLS_S = 0.5


def test_a_member_working_between_brief_polls_takes_up_every_generation(broker: KafkaBroker, topic: str) -> None:
    """A consumer that polls 1 ms at a time and works for 0.5 s between polls: its JoinGroup/SyncGroup round trip
    finishes while it works. kafka-python 3.0.12's next poll sends a new JoinGroup instead of taking the finished
    one up, so the consumer never joins (3 of 3 here before ``finish_joins`` took finished joins up). With it,
    the consumer's listener is called for every generation the group went through, from the first, and it ends
    holding the whole topic."""
    generations = {
        f"consumer {n}": _join_working_between_polls(broker, f"working-{n}-{topic}", topic) for n in range(3)
    }
    for name, seen in generations.items():
        assert seen, f"{name} never joined"
        assert [generation for generation, _ in seen] == list(range(1, len(seen) + 1)), name
        assert seen[-1][1] == PARTITIONS, name


def _join_working_between_polls(broker: KafkaBroker, group: str, topic: str) -> list[tuple[int, int]]:
    """Each listener call's (generation, partitions assigned) until the consumer holds every partition."""
    seen: list[tuple[int, int]] = []
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        partition_assignment_strategy=[for_kafka_python("range")],
    )

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc] # kafka-python is untyped
        def on_partitions_revoked(self, revoked: Any) -> None:
            pass

        def on_partitions_assigned(self, assigned: Any) -> None:
            seen.append((consumer._coordinator._generation.generation_id, len(assigned)))

    try:
        assert finish_joins(consumer)
        consumer.subscribe([topic], listener=Listener())
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        while len(consumer.assignment()) < PARTITIONS and time.monotonic() < deadline:
            consumer.poll(timeout_ms=1)
            time.sleep(WORK_BETWEEN_POLLS_S)
    finally:
        close_kafka_python(consumer)
    return seen
