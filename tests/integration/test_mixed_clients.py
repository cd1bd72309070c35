"""kafka-python consumers with our cooperative-sticky and confluent-kafka consumers with librdkafka's own
cooperative-sticky in one group: Kafka's bytes both ways, and the group stays valid whoever leads."""

from __future__ import annotations

from functools import partial

import pytest

from integration.group_log import GroupLog, settled
from integration.members import PARTITIONS, ConfluentMember, KafkaPythonMember
from integration.mock_cluster import MockCluster

pytestmark = pytest.mark.integration  # minutes of real rebalances: `make integration` runs them 4 at a time

# A leader's SyncGroup may win the mock's race several times in a row (see members.py): allow for retries.
DEADLINE_S = 120.0


def test_mixed_group_stays_valid_whoever_leads(cluster: MockCluster) -> None:
    """librdkafka leads while a, the first member, is there; after a leaves, kafka-python (our assignor) leads."""
    log = GroupLog()
    led: list[str] = []  # kafka-python members that ran our assignor as leader
    python = partial(
        KafkaPythonMember,
        bootstrap=cluster.bootstrap_servers,
        group="mixed",
        log=log,
        strategy="cooperative-sticky",
        led=led,
    )
    librdkafka = partial(ConfluentMember, bootstrap=cluster.bootstrap_servers, group="mixed", log=log)
    wait = partial(settled, log, partitions=PARTITIONS, deadline_s=DEADLINE_S)
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
        assert led  # b (the longest-standing member) led: our assignor read librdkafka's owned partitions
        assert set(led) == {"b"}
        members["d"] = librdkafka("d")
        third = wait({"b": 4, "c": 4, "d": 4})
        assert third["b"] <= second["b"]  # they only gave up what d needed
        assert third["c"] <= second["c"]
        assert set(led) == {"b"}
        assert log.double_ownership() == []
        assert log.full_revocations(["b", "c", "d"]) == []  # COOPERATIVE on both clients
    finally:
        for running in members.values():
            running.leave()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)
