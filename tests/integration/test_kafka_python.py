"""Our cooperative-sticky inside kafka-python 3.x consumers, against librdkafka's mock cluster."""

from __future__ import annotations

from functools import partial

import pytest

from integration.group_log import GroupLog, settled
from integration.members import PARTITIONS, KafkaPythonMember, churn
from integration.mock_cluster import MockCluster

pytestmark = pytest.mark.integration  # minutes of real rebalances: `make integration` runs them 4 at a time


def test_cooperative_sticky_group_with_kafka_python(cluster: MockCluster) -> None:
    """Three consumers; one leaves, one joins: no partition held twice, balanced, survivors keep theirs."""
    log = GroupLog()
    member = partial(
        KafkaPythonMember, bootstrap=cluster.bootstrap_servers, group="kp", log=log, strategy="cooperative-sticky"
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
    finally:
        for running in members.values():
            running.leave()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)
    assert {m.name: m.sync_races for m in members.values()} == dict.fromkeys(members, 0)  # Python leads only
