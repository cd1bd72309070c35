"""Our cooperative-sticky inside kafka-python 3.x consumers, in a group on a real broker."""

from __future__ import annotations

from functools import partial

import pytest

from assignors.testing import KafkaBroker
from integration.group_log import GroupLog, settled
from integration.members import PARTITIONS, KafkaPythonMember, Led, churn

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
