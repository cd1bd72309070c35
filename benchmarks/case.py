"""Run one benchmark case in this process and print its figures as JSON.

``python -m benchmarks.case '{"assignor": "range", "workload": "identical", "args": [1000, 1000, 2000]}'``
A fresh process per case makes the peak RSS that case's own. Beside the wall-clock figures
(what the targets are about), ``cpu_median_s`` is the median CPU time of the same calls: on a
machine shared with other work, wall time includes waiting for a core, CPU time does not.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from assignors import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    Assignment,
    ConsumerPartitionAssignor,
    consumer_group,
    get_assignor,
)
from benchmarks import kafka_python, weighted, workloads

BUILDERS: dict[str, Callable[..., workloads.Workload]] = {
    "identical": workloads.identical,
    "last_member_on_first_topic": workloads.last_member_on_first_topic,
    "halves": workloads.halves,
    "racked": workloads.racked,
    "scale_out": workloads.scale_out,
    "overlapping": workloads.overlapping,
}


def _assignor(name: str) -> ConsumerPartitionAssignor:
    """A built-in client assignor, or a KIP-848 server assignor by strategy name (``uniform``, ``consumer-range``)."""
    if name in consumer_group.STRATEGIES:
        return consumer_group.server_assignor(name)
    return get_assignor(name)


def _time(run: Any, repeat: int) -> tuple[list[float], list[float], Any]:
    """Wall-clock and CPU seconds of ``repeat`` calls after a warm-up, and the last result."""
    result = run()  # warm-up
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = run()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu, result


def workload_of(spec: dict[str, Any]) -> workloads.Workload:
    """The group a case times: its workload, and for ``round: 2`` the round after OUR first one.

    The Java side (:mod:`benchmarks.java`) times Kafka's assignor on exactly this group, 2nd rounds included: both
    sides start from the same previous assignment, ours.
    """
    workload = BUILDERS[spec["workload"]](*spec["args"])
    if spec.get("round") == 2 and spec.get("client") != "kafka-python":
        first: dict[str, Assignment] = _assignor(spec["assignor"]).assign(workload.cluster, workload.subscriptions)
        workload = workloads.owning(workload, first)
    return workload


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("weights"):
        return weighted.run_case(spec, BUILDERS[spec["workload"]](*spec["args"]), _time)
    workload = workload_of(spec)
    repeat = int(spec.get("repeat", 5))
    name = spec["assignor"]
    if spec.get("client") == "kafka-python":
        times, cpu, _ = _time(lambda: kafka_python.assign(name, workload), repeat)
    else:
        times, cpu, result = _time(lambda: _assignor(name).assign(workload.cluster, workload.subscriptions), repeat)
        workloads.check(workload, result, withheld=name == COOPERATIVE_STICKY_ASSIGNOR_NAME)
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_median_s": statistics.median(cpu),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "partitions": workloads.total_partitions(workload),
    }


if __name__ == "__main__":
    print(json.dumps(run_case(json.loads(sys.argv[1]))))
