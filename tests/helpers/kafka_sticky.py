"""Kafka's AbstractStickyAssignor, transcribed step by step for the differential tests (no racks).

Claim resolution, then the ConstrainedAssignmentBuilder when every member subscribes to
the same topics, else the GeneralAssignmentBuilder (the KIP-54 algorithm), each with its
own names and steps. Where Java iterates a ``HashMap``, members go in id order; where it
picks the first of a ``HashSet``, the smallest. Slow on purpose: it is the yardstick.
"""

from __future__ import annotations

from collections.abc import Mapping

from assignors import Cluster, Subscription, TopicPartition

TP = TopicPartition
DEFAULT_GENERATION = -1


def kafka_sticky(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    """Kafka's sticky assignment (``assignPartitions``) of ``subscriptions`` (ownership: owned_partitions)."""
    members = sorted(subscriptions)  # stands in for the HashMap iteration order
    partitions_per_topic = {
        t: n for t in sorted({t for s in subscriptions.values() for t in s.topics}) if (n := cluster.partition_count(t))
    }
    owned, multiple = _owned_partitions(partitions_per_topic, subscriptions, members)
    topic_sets = [frozenset(subscriptions[m].topics) for m in members if subscriptions[m].topics]
    if len(set(topic_sets)) <= 1:
        return _Constrained(partitions_per_topic, subscriptions, members, owned, multiple).build()
    return _General(partitions_per_topic, subscriptions, members, owned).build()


def _owned_partitions(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription], members: list[str]
) -> tuple[dict[str, list[TopicPartition]], set[TopicPartition]]:
    """``allSubscriptionsEqual``'s claim pass: consumerToOwnedPartitions and partitionsWithMultiplePreviousOwners."""
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    owner_of: dict[TopicPartition, str] = {}
    multiple: set[TopicPartition] = set()
    for member in members:
        generation = subscriptions[member].generation_id
        for tp in subscriptions[member].owned_partitions:
            if tp.topic not in partitions_per_topic or tp.partition >= partitions_per_topic[tp.topic]:
                continue
            other = owner_of.get(tp)
            owner_of[tp] = member
            if other is None:
                owned[member].append(tp)
                continue
            other_generation = subscriptions[other].generation_id
            if generation == other_generation:
                multiple.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
            elif generation > other_generation:
                owned[member].append(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
            else:
                owner_of[tp] = other
    return owned, multiple


class _Constrained:
    """ConstrainedAssignmentBuilder: assignOwnedPartitions, then assignRoundRobin over the rest."""

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        members: list[str],
        owned: dict[str, list[TopicPartition]],
        multiple: set[TopicPartition],
    ) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.members = [m for m in members if subscriptions[m].topics] or members
        self.owned = owned
        self.multiple = multiple
        self.assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        total = sum(partitions_per_topic.values())
        self.min_quota = total // len(self.members)
        self.max_quota = -(-total // len(self.members))
        self.expected = total % len(self.members)
        self.current = 0
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []

    def build(self) -> dict[str, list[TopicPartition]]:
        assigned = self.assign_owned_partitions()
        unassigned = [TP(t, p) for t in sorted(self.partitions_per_topic) for p in range(self.partitions_per_topic[t])]
        unassigned = [tp for tp in unassigned if tp not in assigned]
        self.under_min.sort()
        self.exactly_min.sort()
        self.assign_round_robin(unassigned)
        return self.assignment

    def assign_owned_partitions(self) -> set[TopicPartition]:
        assigned: set[TopicPartition] = set()
        for member in self.members:
            owned = sorted(self.owned.get(member, []), key=lambda tp: (tp.partition, tp.topic))
            owned = [tp for tp in owned if tp not in self.multiple]
            mine = self.assignment[member]
            if len(owned) < self.min_quota:
                mine.extend(owned)
                self.under_min.append(member)
            elif len(owned) >= self.max_quota and self.current < self.expected:
                self.current += 1
                if self.current == self.expected:
                    self.exactly_min.clear()
                mine.extend(owned[: self.max_quota])
            else:
                mine.extend(owned[: self.min_quota])
                if self.current < self.expected:
                    self.exactly_min.append(member)
            assigned.update(mine)
        return assigned

    def assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        position = 0  # the iterator over under_min
        for tp in unassigned:
            if position < len(self.under_min):
                member = self.under_min[position]
                from_iterator = True
            elif self.under_min:
                position = 0
                member = self.under_min[0]
                from_iterator = True
            elif self.exactly_min:
                member = self.exactly_min.pop(0)
                from_iterator = False
            else:
                msg = "no member left with room"
                raise RuntimeError(msg)
            self.assignment[member].append(tp)
            count = len(self.assignment[member])
            if count == self.min_quota and from_iterator:
                del self.under_min[position]  # iterator.remove(); the next one slides into this position
                self.exactly_min.append(member)
            else:
                if from_iterator:
                    position += 1
                if count == self.max_quota:
                    self.current += 1


class _General:
    """GeneralAssignmentBuilder: keep claims, place the rest least-loaded-first, then performReassignments."""

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        members: list[str],
        owned: dict[str, list[TopicPartition]],
    ) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.potential_topics = {m: [t for t in subscriptions[m].topics if t in partitions_per_topic] for m in members}
        self.potential_consumers = {
            t: [m for m in members if t in self.potential_topics[m]] for t in partitions_per_topic
        }
        self.current = {m: list(owned.get(m, [])) for m in members}
        self.holder: dict[TopicPartition, str] = {}  # currentPartitionConsumer (the Java keeps it too)
        self.balanced: bool | None = None  # isBalanced, cached until the next move
        self.revocation_required = False
        self.movements: dict[TopicPartition, tuple[str, str]] = {}  # partitionMovements: partition -> (src, dst)
        self.by_pair: dict[tuple[str, str, str], set[TopicPartition]] = {}  # (topic, src, dst) -> partitions

    def size(self, member: str) -> int:
        return len(self.current[member])

    def sorted_members(self) -> list[str]:
        """sortedCurrentSubscriptions: by (assignment size, member id)."""
        return sorted(self.current, key=lambda m: (self.size(m), m))

    def build(self) -> dict[str, list[TopicPartition]]:
        every = [
            TP(t, p)
            for t in sorted(self.partitions_per_topic, key=lambda t: (len(self.potential_consumers[t]), t))
            for p in range(self.partitions_per_topic[t])
        ]
        for member, partitions in self.current.items():
            kept = [tp for tp in partitions if tp.topic in self.potential_topics[member]]
            if len(kept) != len(partitions):
                self.revocation_required = True
            self.current[member] = kept
        self.holder = {tp: m for m, partitions in self.current.items() for tp in partitions}
        unassigned = [tp for tp in every if tp not in self.holder]
        initializing = max((self.size(m) for m in self.current), default=0) == 0
        for tp in unassigned:
            for member in self.sorted_members():
                if tp.topic in self.potential_topics[member]:
                    self.current[member].append(tp)
                    self.holder[tp] = member
                    break
        fixed_topics = {t for t, c in self.potential_consumers.items() if len(c) < 2}
        fixed_members = {
            m
            for m in self.current
            if self.size(m) == self.max_size(m)
            and not any(len(self.potential_consumers[tp.topic]) >= 2 for tp in self.current[m])
        }
        snapshot = {m: list(p) for m, p in self.current.items()}
        reassignable = [tp for tp in every if tp.topic not in fixed_topics]
        if not self.revocation_required:
            self.perform_reassignments([tp for tp in unassigned if tp.topic not in fixed_topics], fixed_members)
        performed = self.perform_reassignments(reassignable, fixed_members)
        if not initializing and performed and self.balance_score(self.current) >= self.balance_score(snapshot):
            self.current = snapshot
            self.holder = {tp: m for m, partitions in snapshot.items() for tp in partitions}
        return self.current

    def max_size(self, member: str) -> int:
        return sum(self.partitions_per_topic[t] for t in self.potential_topics[member])

    @staticmethod
    def balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
        sizes = [len(p) for p in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def is_balanced(self, fixed: set[str]) -> bool:
        if self.balanced is None:
            self.balanced = self._is_balanced(fixed)
        return self.balanced

    def _is_balanced(self, fixed: set[str]) -> bool:
        live = [m for m in self.current if m not in fixed]
        if not live:
            return True
        sizes = [self.size(m) for m in live]
        if min(sizes) >= max(sizes) - 1:
            return True
        holder = self.holder
        for member in live:
            count = self.size(member)
            if count == self.max_size(member):
                continue
            for topic in self.potential_topics[member]:
                for p in range(self.partitions_per_topic[topic]):
                    other = holder.get(TP(topic, p))
                    if other is not None and other != member and other not in fixed and count + 1 < self.size(other):
                        return False
        return True

    def perform_reassignments(self, partitions: list[TopicPartition], fixed: set[str]) -> bool:
        self.balanced = None
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self.is_balanced(fixed):
                    break
                owner = self.holder.get(tp)
                if owner is None or owner in fixed:
                    continue
                candidates = [c for c in self.potential_consumers[tp.topic] if c not in fixed]
                if any(self.size(owner) > self.size(c) + 1 for c in candidates):
                    receiver = next(
                        m for m in self.sorted_members() if m not in fixed and tp.topic in self.potential_topics[m]
                    )
                    self.move(tp, owner, receiver)
                    performed = modified = True
        return performed

    def move(self, tp: TopicPartition, owner: str, receiver: str) -> None:
        """reassignPartition: getTheActualPartitionToBeMoved, then processPartitionMovement."""
        source = owner
        if tp in self.movements:  # it moved before: stickiness looks at where it came from
            source = self.movements[tp][0]
        reverse = self.by_pair.get((tp.topic, receiver, source))
        actual = min(reverse) if reverse else tp
        holder = self.holder[actual]
        if actual in self.movements:
            src, dst = self.movements.pop(actual)
            self.by_pair[actual.topic, src, dst].discard(actual)
            if src != receiver:
                self._record(actual, src, receiver)
        else:
            self._record(actual, holder, receiver)
        self.current[holder].remove(actual)
        self.current[receiver].append(actual)
        self.holder[actual] = receiver
        self.balanced = None

    def _record(self, tp: TopicPartition, src: str, dst: str) -> None:
        self.movements[tp] = (src, dst)
        self.by_pair.setdefault((tp.topic, src, dst), set()).add(tp)
