"""The weighted-sticky rows: groups of :mod:`benchmarks.workloads` with skewed weights.

A case spec with ``"weights": "skewed"`` comes here from :mod:`benchmarks.case`. The weights are fixed per
partition: one partition in 50 is hot (40 to 100 times a cold one), the others weigh 1.0 to 1.9, a spread of
the shape the demo's weights table has. The assignor is built once with them (``weights=``, checked then), and
each timed call is one ``assign``; a 2nd round is the round after our own first one, as for the other rows.
"""

from __future__ import annotations

import math
import resource
import statistics
from typing import Any

from assignors import Assignment, TopicPartition, WeightedStickyAssignor
from benchmarks import workloads


def skewed(workload: workloads.Workload) -> dict[TopicPartition, float]:
    """A weight per partition of the workload's subscribed topics: one in 50 hot, the rest 1.0-1.9."""
    subscribed = sorted({t for s in workload.subscriptions.values() for t in s.topics})
    weights: dict[TopicPartition, float] = {}
    for index, topic in enumerate(subscribed):
        for number in range(workload.cluster.partition_count(topic) or 0):
            mixed = (number * 7919 + index * 104729) % 1000
            hot = mixed % 50 == 0
            weights[TopicPartition(topic, number)] = 40.0 + mixed % 61 if hot else 1.0 + (mixed % 10) / 10
    return weights


def _max_mean(result: dict[str, Assignment], weights: dict[TopicPartition, float]) -> float:
    loads = [math.fsum(weights[tp] for tp in a.partitions) for a in result.values()]
    return max(loads) * len(loads) / math.fsum(loads)


def run_case(spec: dict[str, Any], workload: workloads.Workload, timer: Any) -> dict[str, Any]:
    """Time ``assign`` on ``workload`` (the spec's, as :mod:`benchmarks.case` builds it) with skewed weights.

    ``timer`` is :func:`benchmarks.case._time`; this module imports nothing of ``case``, which imports it.
    """
    weights = skewed(workload)
    assignor = WeightedStickyAssignor(weights)
    if spec.get("round") == 2:
        first = assignor.assign(workload.cluster, workload.subscriptions)
        workload = workloads.owning(workload, first)
    repeat = int(spec.get("repeat", 5))
    times, cpu, result = timer(lambda: assignor.assign(workload.cluster, workload.subscriptions), repeat)
    workloads.check(workload, result, withheld=True)
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_median_s": statistics.median(cpu),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "partitions": workloads.total_partitions(workload),
        "max_mean_load": round(_max_mean(result, weights), 4),
    }
