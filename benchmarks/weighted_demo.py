"""The demo's weighted history (``spark_udfs.sample``) replayed in plain Python under the count-based strategies and
``weighted-sticky``: the weighted max/mean load of every snapshot, and the partitions moved.

``python -m benchmarks.weighted_demo [GROUPS]`` (default 300 groups x 48 snapshots, the demo's history). A group
rebalances when its members, their subscriptions or the partition counts change, as in the evaluation; weighted-sticky
is given each snapshot's weights table (what the members would report), runs COOPERATIVE with one instance through
``assignors.rebalance.rebalance``, and loads are measured with ``assignors.metrics.weighted_load``. docs/weighted.md
quotes its output.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
from collections import defaultdict
from typing import Any

from assignors import Cluster, RebalanceProtocol, Subscription, TopicPartition, WeightedStickyAssignor, get_assignor
from assignors.metrics import weighted_load
from assignors.rebalance import rebalance
from spark_udfs.demo.sample import generate_history  # noqa: TID251
from spark_udfs.replay.weights import WeightHistory  # noqa: TID251 - the demo's own history and weights

STRATEGIES = {
    "range": RebalanceProtocol.EAGER,
    "roundrobin": RebalanceProtocol.EAGER,
    "sticky": RebalanceProtocol.EAGER,
    "cooperative-sticky": RebalanceProtocol.COOPERATIVE,
    "weighted-sticky": RebalanceProtocol.COOPERATIVE,
}
Row = tuple[str, tuple[str, ...], str | None, str | None]  # member, topics, instance, rack


def _counts_at(
    versions: dict[str, list[tuple[dt.datetime | None, int]]], names: list[str], ts: dt.datetime
) -> dict[str, int]:
    """Each topic's partition count in force at ``ts`` (the latest ``valid_from <= ts``; None: always)."""
    counts: dict[str, int] = {}
    for topic in names:
        valid = [(when, count) for when, count in versions.get(topic, ()) if when is None or when <= ts]
        if valid:  # a dated row beats the undated one; the latest date wins
            counts[topic] = max(valid, key=lambda row: (row[0] is not None, row[0] or ts))[1]
    return counts


def _moved(prior: str | None, owner: str, after: dict[str, Any]) -> bool:
    """Owned before by another member that is still there (avoidable churn, the evaluation's ``moved``)."""
    return prior is not None and prior != owner and prior in after


def _replay(
    name: str, by_ts: dict[dt.datetime, list[Row]], versions: dict[str, list[tuple[dt.datetime | None, int]]],
    weights: WeightHistory,
) -> tuple[list[float], int]:  # fmt: skip
    """One group under one strategy: its weighted max/mean load per snapshot, and the partitions moved."""
    previous: Any = None
    held: dict[str, tuple[TopicPartition, ...]] = {}
    generation, moved, ratios = -1, 0, []
    for ts in sorted(by_ts):
        rows = by_ts[ts]
        counts = _counts_at(versions, sorted({t for row in rows for t in row[1]}), ts)
        identity = {member: instance or member for member, _, instance, _ in rows}
        key = (sorted((identity[m], topics) for m, topics, _, _ in rows), sorted(counts.items()))
        now = weights.at(ts, counts)
        if key != previous:
            subscriptions = {m: Subscription(t, group_instance_id=i, rack_id=r) for m, t, i, r in rows}
            owned = {m: held[identity[m]] for m in subscriptions if identity[m] in held}
            assignor = WeightedStickyAssignor(now) if name == "weighted-sticky" else get_assignor(name)
            result = rebalance(assignor, Cluster(counts), subscriptions, owned, generation=generation,
                               protocol=STRATEGIES[name])  # fmt: skip
            generation = result.rounds[-1].generation
            before = {tp: owner for owner, parts in held.items() for tp in parts}
            after = {identity[m]: a.partitions for m, a in result.assignment.items()}
            moved += sum(1 for owner, parts in after.items() for tp in parts if _moved(before.get(tp), owner, after))
            held, previous = after, key
        load = weighted_load(held, now)
        if load.total > 0:
            ratios.append(load.max_mean_ratio)
    return ratios, moved


def main(groups: int) -> None:
    history = generate_history(groups, 48)
    weights = WeightHistory(history.weights)
    versions: dict[str, list[tuple[dt.datetime | None, int]]] = defaultdict(list)
    for topic, count, valid_from in history.topics:
        versions[topic].append((valid_from, count))
    snapshots: dict[str, dict[dt.datetime, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for group, ts, member, topics, instance, rack in history.membership:
        snapshots[group][ts].append((member, tuple(sorted(topics)), instance, rack))
    for name in STRATEGIES:
        ratios: list[float] = []
        moved = 0
        for by_ts in snapshots.values():
            found, count = _replay(name, by_ts, versions, weights)
            ratios += found
            moved += count
        ratios.sort()
        p95 = ratios[min(len(ratios) - 1, int(0.95 * len(ratios)))]
        print(f"{name:20s} {len(ratios)} snapshots, weighted max/mean: median {statistics.median(ratios):.2f}, "
              f"p95 {p95:.2f}, max {ratios[-1]:.2f}; partitions moved {moved}")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
