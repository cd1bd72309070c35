"""Our sticky and range inside aiokafka consumers (EAGER), in a group on a real broker."""

from __future__ import annotations

from functools import partial

import pytest

from assignors.testing import KafkaBroker
from helpers.group_log import GroupLog, settled
from helpers.members import PARTITIONS, AiokafkaMember, churn

pytestmark = [pytest.mark.integration, pytest.mark.kafka]  # real rebalances: `make integration` runs several at once


@pytest.mark.parametrize("strategy", ["sticky", "range"])
def test_group_with_aiokafka(broker: KafkaBroker, topic: str, group: str, strategy: str) -> None:
    """Three consumers; one leaves, one joins: never held twice, balanced; sticky survivors keep theirs."""
    log = GroupLog()
    member = partial(
        AiokafkaMember, bootstrap=broker.bootstrap_servers, topic=topic, group=group, log=log, strategy=strategy
    )
    wait = partial(settled, log, partitions=PARTITIONS)
    members: dict[str, AiokafkaMember] = {}
    try:
        first, second, third = churn(member, wait, members)
        assert log.double_ownership() == []
        # EAGER: every member gives up everything each rebalance, so this is where sticky and range differ.
        if strategy == "sticky":
            assert first["a"] <= second["a"]
            assert first["b"] <= second["b"]
            assert third["a"] <= second["a"]
            assert third["b"] <= second["b"]
        else:
            assert sorted(map(sorted, third.values())) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    finally:
        for running in members.values():
            running.leave()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)
