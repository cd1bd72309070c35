"""The benchmark workloads: deterministic groups of Kafka's large-group benchmark shapes."""

from __future__ import annotations

from dataclasses import dataclass

from assignors import Assignment, Cluster, Subscription, TopicPartition


@dataclass(frozen=True)
class Workload:
    """A named group: cluster metadata and subscriptions."""

    name: str
    cluster: Cluster
    subscriptions: dict[str, Subscription]


def identical(topics: int, partitions: int, members: int) -> Workload:
    """Every member subscribes to every topic."""
    names = [f"topic-{i}" for i in range(topics)]
    cluster = Cluster(dict.fromkeys(names, partitions))
    subscriptions = {f"consumer-{i:05d}": Subscription(names) for i in range(members)}
    return Workload(f"{topics}x{partitions}, {members} members, identical", cluster, subscriptions)


def last_member_on_first_topic(topics: int, partitions: int, members: int) -> Workload:
    """Identical subscriptions except the last member, which subscribes to the first topic only."""
    base = identical(topics, partitions, members)
    subscriptions = dict(base.subscriptions)
    subscriptions[f"consumer-{members - 1:05d}"] = Subscription(["topic-0"])
    return Workload(f"{topics}x{partitions}, {members} members, last on topic-0", base.cluster, subscriptions)


def halves(topics: int, partitions: int, members: int) -> Workload:
    """Every 4th member subscribes to the first half of the topics, the others to the second half."""
    names = [f"topic-{i}" for i in range(topics)]
    cluster = Cluster(dict.fromkeys(names, partitions))
    first, second = names[: topics // 2], names[topics // 2 :]
    subscriptions = {f"consumer-{i:05d}": Subscription(first if i % 4 == 0 else second) for i in range(members)}
    return Workload(f"{topics}x{partitions}, {members} members, every 4th on first half", cluster, subscriptions)


def racked(topics: int, partitions: int, members: int) -> Workload:
    """Identical subscriptions over three racks: members round-robin on them, each partition on two of them."""
    names = [f"topic-{i}" for i in range(topics)]
    racks = ("rack-0", "rack-1", "rack-2")
    partition_racks = {
        TopicPartition(t, p): (racks[p % 3], racks[(p + 1) % 3]) for t in names for p in range(partitions)
    }
    cluster = Cluster(dict.fromkeys(names, partitions), partition_racks=partition_racks)
    subscriptions = {f"consumer-{i:05d}": Subscription(names, rack_id=racks[i % 3]) for i in range(members)}
    return Workload(f"{topics}x{partitions}, {members} members, identical, 3 racks", cluster, subscriptions)


def scale_out(topics: int, partitions: int, members: int) -> Workload:
    """Ten members own everything; ``members`` in all, every 7th on the first half of the topics (an autoscaler)."""
    names = [f"topic-{i}" for i in range(topics)]
    cluster = Cluster(dict.fromkeys(names, partitions))
    owners = [f"consumer-{i:05d}" for i in range(10)]
    owned: dict[str, list[TopicPartition]] = {m: [] for m in owners}
    for topic in names:
        for number in range(partitions):
            owned[owners[number % 10]].append(TopicPartition(topic, number))
    subscriptions = {}
    for i in range(members):
        member = f"consumer-{i:05d}"
        chosen = names if i % 7 else names[: topics // 2]
        claims = [tp for tp in owned.get(member, []) if tp.topic in chosen]
        subscriptions[member] = Subscription(chosen, owned_partitions=claims, generation_id=1)
    return Workload(f"{topics}x{partitions}, 10 -> {members} members, mixed", cluster, subscriptions)


def overlapping(topics: int, partitions: int, members: int, per_member: int) -> Workload:
    """Each member subscribes to ``per_member`` consecutive topics (wrapping), 7 topics apart (KIP-1263's shape)."""
    names = [f"topic-{i}" for i in range(topics)]
    cluster = Cluster(dict.fromkeys(names, partitions))
    subscriptions = {
        f"consumer-{i:05d}": Subscription([names[(7 * i + j) % topics] for j in range(per_member)])
        for i in range(members)
    }
    label = f"{topics}x{partitions}, {members} members, {per_member} topics each (overlapping)"
    return Workload(label, cluster, subscriptions)


def owning(workload: Workload, assignment: dict[str, Assignment], generation: int = 1) -> Workload:
    """The next round: every member but the first owns what ``assignment`` gave it."""
    first = min(workload.subscriptions)
    subscriptions = {
        member: Subscription(
            s.topics,
            owned_partitions=() if member == first else assignment[member].partitions,
            generation_id=generation,
            rack_id=s.rack_id,
        )
        for member, s in workload.subscriptions.items()
    }
    return Workload(workload.name + ", 2nd round", workload.cluster, subscriptions)


def total_partitions(workload: Workload) -> int:
    subscribed = {t for s in workload.subscriptions.values() for t in s.topics}
    return sum(workload.cluster.partition_count(t) or 0 for t in subscribed)


def check(workload: Workload, result: dict[str, Assignment], *, withheld: bool = False) -> None:
    """A cheap invariant, so a fast wrong change cannot win: every partition assigned once, to a subscriber.

    With ``withheld`` (a cooperative round) a partition some member still owns may stay unassigned.
    """
    seen: set[TopicPartition] = set()
    for member, assignment in result.items():
        topics = set(workload.subscriptions[member].topics)
        for tp in assignment.partitions:
            if tp.topic not in topics:
                msg = f"{tp} assigned to non-subscriber {member}"
                raise AssertionError(msg)
        seen.update(assignment.partitions)
    if withheld:
        seen.update(tp for s in workload.subscriptions.values() for tp in s.owned_partitions)
    assigned = sum(len(a.partitions) for a in result.values())
    if len(seen) != total_partitions(workload) or assigned != len({tp for a in result.values() for tp in a.partitions}):
        msg = "not every partition is assigned exactly once"
        raise AssertionError(msg)
