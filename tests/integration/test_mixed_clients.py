"""kafka-python consumers with our cooperative-sticky and confluent-kafka consumers with librdkafka's own
cooperative-sticky in one group on a real broker: Kafka's bytes both ways, and the group stays valid whoever leads."""

from __future__ import annotations

from functools import partial

import pytest

from assignors.testing import KafkaBroker
from helpers.group_log import GroupLog, settled
from helpers.members import PARTITIONS, ConfluentMember, KafkaPythonMember, Led

pytestmark = [pytest.mark.integration, pytest.mark.kafka]  # real rebalances: `make integration` runs several at once


def test_mixed_group_stays_valid_whoever_leads(broker: KafkaBroker, topic: str, group: str) -> None:
    """librdkafka leads while a, the first member, is there; after a leaves, kafka-python (our assignor) leads."""
    log = GroupLog()
    led: list[Led] = []  # the rounds our assignor led in a kafka-python member
    python = partial(
        KafkaPythonMember,
        bootstrap=broker.bootstrap_servers,
        topic=topic,
        group=group,
        log=log,
        strategy="cooperative-sticky",
        led=led,
    )
    librdkafka = partial(ConfluentMember, bootstrap=broker.bootstrap_servers, topic=topic, group=group, log=log)
    wait = partial(settled, log, partitions=PARTITIONS)
    members: dict[str, KafkaPythonMember | ConfluentMember] = {}
    try:
        members["a"] = librdkafka("a")
        wait({"a": 12})
        members["b"] = python("b")
        wait({"a": 6, "b": 6})
        members["c"] = python("c")
        first = wait({"a": 4, "b": 4, "c": 4})
        assert led == []  # librdkafka led every round so far: it read our subscriptions, we read its assignments
        members.pop("a").leave()
        second = wait({"b": 6, "c": 6})
        assert first["b"] <= second["b"]  # survivors kept theirs
        assert first["c"] <= second["c"]
        assert led  # b or c led (the coordinator picks the next leader): our assignor ran
        assert {call.leader for call in led} <= {"b", "c"}
        members["d"] = librdkafka("d")
        third = wait({"b": 4, "c": 4, "d": 4})
        assert third["b"] <= second["b"]  # they only gave up what d needed
        assert third["c"] <= second["c"]
        # Our leader read librdkafka's JoinGroup metadata: d's topic, and in d's second round what it owned then.
        d_rounds = [call for call in led if any(m.startswith("d-") for m in call.subscriptions)]
        assert d_rounds
        for call in d_rounds:
            (d_id,) = (m for m in call.subscriptions if m.startswith("d-"))
            assert call.subscriptions[d_id].topics == (topic,)
        assert {tp.partition for tp in d_rounds[-1].subscriptions[d_id].owned_partitions} <= third["d"]
        assert set(d_rounds[-1].assignment[d_id]) == third["d"]
        assert log.double_ownership() == []
        assert log.full_revocations(["b", "c", "d"]) == []  # COOPERATIVE on both clients
    finally:
        for running in members.values():
            running.leave()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)
