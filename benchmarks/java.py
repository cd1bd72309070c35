"""Kafka's own Java assignors timed warm on one benchmark case, and its figures printed as JSON.

``python -m benchmarks.java '{"assignor": "sticky", "workload": "identical", "args": [500, 2000, 2000]}'``

The case's group is :func:`benchmarks.case.workload_of`'s, exactly ours: the same members, topics, partition
counts, racks and, for a 2nd round, the same owned partitions (our first round's; a classic member's user data is
what Kafka's client sends with them). One JVM per case runs the Java oracle (``jvm/``, ``make jvm``): the classic
assignors through ``ConsumerPartitionAssignor.assign``, the KIP-848 ``UniformAssignor`` through ``GroupSpec``. It
warms up as Kafka's JMH benchmarks do, in the same JVM (calls for ``warmup_s`` seconds and at least ``warmup``
calls), then times as many calls as our side does (at least MIN_RUNS once BUDGET_S passed). Its last result
comes back and is checked like ours.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from assignors import COOPERATIVE_STICKY_ASSIGNOR_NAME
from assignors.consumer_group import STRATEGIES
from benchmarks import workloads
from benchmarks.case import workload_of

ROOT = Path(__file__).resolve().parents[1]
WARMUP_S = 5.0
WARMUP_CALLS = 2
# Timed calls: as many as ours, but a call of Kafka's that takes tens of seconds (the rack-aware sticky 2nd round
# on 1M partitions) stops after MIN_RUNS once the timed calls took BUDGET_S.
MIN_RUNS = 3
BUDGET_S = 20.0
# Kafka's heap for a 1M-partition group with its own previous round: the JVM's default (a quarter of the RAM) on
# a small machine may be less.
HEAP = "4g"


def kafka_version() -> str:
    """The Kafka version whose build the bench runs: ``KAFKA_VERSION``, else the one jvm/pom.xml pins."""
    pom = (ROOT / "jvm" / "pom.xml").read_text(encoding="utf-8")
    found = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", pom)
    return os.environ.get("KAFKA_VERSION") or (found.group(1) if found else "")


def classpath() -> tuple[list[str], str]:
    """The oracle's classpath as ``make jvm`` built it, and ``""``; or ``[]`` and why the Java rows cannot run."""
    version = kafka_version()
    if shutil.which("java") is None:
        return [], "no `java` on PATH (install a JDK 17 or newer, and Maven for `make jvm`)"
    folder = ROOT / "jvm" / "target" / f"kafka-{version}"
    listing = folder / "classpath.txt"
    if not listing.is_file():
        return [], f"no {listing.relative_to(ROOT)}: `make jvm` builds it (needs java, mvn and Maven Central)"
    jars = [entry for entry in listing.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]
    return [str(folder / "classes"), *jars], ""


def run_java_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Kafka's assignor ``spec["assignor"]`` on the case's group: median, spread, the JVM's peak RSS, its version."""
    path, why = classpath()
    if not path:
        return {"error": why}
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.append(tests)  # the oracle's client lives beside the differential tests that use it
    from helpers.java_oracle import JavaOracle, bench_assignments

    workload = workload_of(spec)
    name = spec["assignor"]
    server = name in STRATEGIES
    runs = int(spec.get("repeat", 5))
    with (
        tempfile.TemporaryDirectory(prefix="bench-java-") as logs,
        JavaOracle.start(path, Path(logs), heap=spec.get("heap", HEAP)) as oracle,
    ):
        answer = oracle.bench(
            name,
            workload.cluster,
            workload.subscriptions,
            server=server,
            runs=runs,
            warmup_s=float(spec.get("warmup_s", WARMUP_S)),
            warmup=int(spec.get("warmup", WARMUP_CALLS)),
            min_runs=min(runs, MIN_RUNS),
            budget_s=BUDGET_S,
            client_user_data=not server,
            result=True,
        )
        peak = oracle.peak_rss_mb()
        version = oracle.version
    result = bench_assignments(answer, server=server)
    workloads.check(workload, result, withheld=name == COOPERATIVE_STICKY_ASSIGNOR_NAME)
    times = [nanos / 1e9 for nanos in answer["nanos"]]
    cpu = [nanos / 1e9 for nanos in answer["cpu_nanos"]]
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_median_s": statistics.median(cpu),
        "runs": len(times),
        "warmup_calls": answer["warmup_calls"],
        "peak_rss_mb": peak,
        "kafka": version,
        "jvm": answer["jvm"],
    }


if __name__ == "__main__":
    print(json.dumps(run_java_case(json.loads(sys.argv[1]))))
