"""kafka-python 3.x's own assignors on our workloads, for the ratio (needs the ``bench`` extra)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from assignors import RANGE_ASSIGNOR_NAME, ROUNDROBIN_ASSIGNOR_NAME, STICKY_ASSIGNOR_NAME
from benchmarks.workloads import Workload


class _ClusterMetadata:
    """The methods kafka-python's assignors call on its ClusterMetadata."""

    def __init__(self, workload: Workload) -> None:
        self._counts = workload.cluster.partitions_per_topic

    def topics(self) -> set[str]:
        return set(self._counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._counts.get(topic)
        return None if count is None else set(range(count))


def assign(name: str, workload: Workload) -> Any:
    """Run kafka-python's assignor ``name`` (range, roundrobin, sticky) on a fresh group."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyPartitionAssignor,
    )

    classes = {
        RANGE_ASSIGNOR_NAME: RangePartitionAssignor,
        ROUNDROBIN_ASSIGNOR_NAME: RoundRobinPartitionAssignor,
        STICKY_ASSIGNOR_NAME: StickyPartitionAssignor,
    }
    members = [
        SimpleNamespace(
            member_id=member,
            group_instance_id=s.group_instance_id,
            metadata=SimpleNamespace(topics=list(s.topics), user_data=b"", owned_partitions=[], generation_id=-1),
        )
        for member, s in workload.subscriptions.items()
    ]
    assignor = classes[name]()
    return assignor.assign(_ClusterMetadata(workload), members)
