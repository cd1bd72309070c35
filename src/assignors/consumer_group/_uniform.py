"""KIP-848's ``uniform`` server assignor: the homogeneous builder (identical subscriptions) and its dispatch."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import chain, compress, pairwise, repeat
from operator import call, itemgetter
from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias

from assignors._core.errors import AssignorError, ConfigurationError
from assignors._core.util import java_sorted
from assignors.consumer_group._common import (
    KAFKA_VERSION,
    ServerAssignor,
    cached_partitions,
    kafka_version_tuple,
    previous_targets,
)
from assignors.consumer_group._heterogeneous import MOST_EVEN_CLASSES, heterogeneous_targets
from assignors.consumer_group._heterogeneous_38 import KafkaThrows, heterogeneous_targets_38
from assignors.consumer_group._java_order import (
    coordinator_member_order,
    subscribed_topic_order,
    target_topic_order,
    uuid_order_key,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assignors._core.model import MemberId, Subscription, Topic, TopicPartition
    from assignors.consumer_group._java_order import CoordinatorTable

__all__ = [
    "EVEN_UNIFORM_ASSIGNOR_NAME",
    "KAFKA_17710",
    "KAFKA_18688",
    "UNIFORM_ASSIGNOR_NAME",
    "EvenUniformAssignor",
    "UniformAssignor",
    "java_set_order",
]

UNIFORM_ASSIGNOR_NAME: Final = "uniform"
EVEN_UNIFORM_ASSIGNOR_NAME: Final = "uniform-even"
KAFKA_18688: Final = (4, 0, 1)
"""The first Kafka with the stable homogeneous extras (KAFKA-18688: 4.0.1, and 4.1.0 on)."""
KAFKA_17710: Final = (4, 0, 0)
"""The first Kafka with the reworked heterogeneous builder (KAFKA-17710)."""
OLDEST: Final = (3, 8, 0)
"""The oldest Kafka whose uniform builders these are (3.8 and 3.9 have the same ones; 3.7's were early access)."""

_BEYOND: Final = 1 << 32  # above any partition number (INT32)
Target: TypeAlias = "list[TopicPartition] | tuple[TopicPartition, ...]"


class UniformAssignor(ServerAssignor):
    """Kafka's server-side ``UniformAssignor`` (KIP-848), the default of ``group.consumer.assignors``, as the broker
    of ``kafka_version`` runs it.

    When every member subscribes to the same topics, the homogeneous builder runs: sizes
    differ by at most one, and each member keeps as much of its previous target as its
    quota allows; a member whose target fits its quota gets it back as it is. Otherwise the
    heterogeneous builder (KAFKA-17710, Kafka 4.0) keeps every partition of a
    still-subscribed topic, gives the rest to the least loaded subscribers topic by topic,
    then moves partitions from the most to the least loaded subscribers of each topic, for
    at most 16 passes over the topics. Its result can stop "almost balanced" (9/10/11) when
    subscriptions overlap, as Kafka's does; :class:`EvenUniformAssignor` evens those out.
    A member with an empty subscription makes the group heterogeneous, as in Kafka.

    ``kafka_version`` (default :data:`~assignors.consumer_group.KAFKA_VERSION`, the
    project's pinned Kafka) picks the builders:

    - 4.0.1 and later (KAFKA-18688): a member already holding ``min + 1`` keeps its extra
      partition, so a balanced, valid target comes back unchanged whatever the member
      order; a member short of ``min + 1`` gives the extra up unless it is one of the last
      members that must take it.
    - 3.8.0 to 4.0.0: the ``total % members`` extras go to the first members in iteration
      order, which can move partitions of an already balanced group.
    - Before 4.0.0 (3.8.x, 3.9.x) Kafka's heterogeneous builder was another one, replaced by
      KAFKA-17710: keep, give each remaining partition to the least loaded subscriber, then
      move partitions with its ``PartitionMovements`` bookkeeping until balanced; it runs here
      as transcribed from Kafka 3.9.1 (:mod:`~assignors.consumer_group._heterogeneous_38`).
      Where Kafka's throws (``Mismatch in partition movement record``: the broker computes no
      new target) the 4.0 builder's target stands in. :class:`EvenUniformAssignor` evens out
      the 4.0 builder's result at every version.

    ``stable_extras`` is the older spelling of the same choice: True is the default
    version, False is Kafka 4.0.0 (the last before KAFKA-18688).

    Order. Kafka iterates members and topic ids in Java ``HashMap``/``HashSet`` order, and so
    does this port (:mod:`~assignors.consumer_group._java_order`): the members as the
    coordinator's ``HashMap`` of member ids iterates them (``String.hashCode`` buckets; within
    one bucket, put in Java's string order, where the broker puts them in its own group state's
    order); the topics, when the cluster's topic ids are given (``Cluster(topic_ids=...)``), as
    the ``HashSet`` of their ids iterates them, and a member's previous topics as the map the
    coordinator reads from its target record iterates them; without topic ids, in name order. A
    member's previous partitions of a topic go in Java's ``HashSet<Integer>`` order of the set
    the broker reads from its target record (``Assignment.fromRecord``: ``new HashSet<>(list)``;
    ascending when the numbers are below the set's table size, else by bucket, ascending within
    one). The heterogeneous topic comparator breaks its last tie by the topic ids' ``compareTo``
    (by name without ids). With the broker's member and topic ids the target is the broker's
    (checked against Kafka's own class on drawn groups, any ids); the remaining difference is
    the order inside one bucket, which follows the broker's history. Racks are ignored, as every
    released Kafka version ignores them.

    Runtime complexity: O(M log M + T + changed) for identical subscriptions, where
    ``changed`` counts the partitions of members whose target changes (a kept target is
    handed back as it is); O(P log P) per balancing pass otherwise.

    >>> from assignors import Cluster, Subscription, TopicPartition
    >>> a, b, c = (TopicPartition("t", p) for p in range(3))
    >>> prev = {"A": Subscription(["t"], owned_partitions=[b]), "B": Subscription(["t"], owned_partitions=[a, c])}
    >>> result = UniformAssignor().assign(Cluster({"t": 3}), prev)
    >>> {m: [str(tp) for tp in x.partitions] for m, x in result.items()}
    {'A': ['t-1'], 'B': ['t-0', 't-2']}
    >>> result = UniformAssignor(kafka_version="4.0.0").assign(Cluster({"t": 3}), prev)
    >>> {m: [str(tp) for tp in x.partitions] for m, x in result.items()}
    {'A': ['t-1', 't-2'], 'B': ['t-0']}
    """

    name: ClassVar[str] = UNIFORM_ASSIGNOR_NAME
    even: ClassVar[bool] = False
    """Whether the heterogeneous result is evened out past Kafka's (:class:`EvenUniformAssignor`)."""

    def __init__(self, *, kafka_version: str | None = None, stable_extras: bool | None = None) -> None:
        given: object = stable_extras  # checked at run time whatever the annotation says
        if given is not None and not isinstance(given, bool):
            msg = f"stable_extras={stable_extras!r} must be True or False"
            raise ConfigurationError(msg)
        if kafka_version is None:
            kafka_version = "4.0.0" if stable_extras is False else KAFKA_VERSION
        version = kafka_version_tuple(kafka_version)
        if version < OLDEST:
            msg = (
                f"kafka_version={kafka_version!r}: KIP-848's uniform assignor is modelled from Kafka "
                f"{'.'.join(map(str, OLDEST))} on (earlier ones were early access)"
            )
            raise ConfigurationError(msg)
        if stable_extras is not None and stable_extras != (version >= KAFKA_18688):
            msg = (
                f"stable_extras={stable_extras!r} contradicts kafka_version={kafka_version!r}: KAFKA-18688's stable "
                "extras are in Kafka 4.0.1 and later"
            )
            raise ConfigurationError(msg)
        self.kafka_version = kafka_version
        self.stable_extras = version >= KAFKA_18688

    def _member_order(
        self, subscriptions: Mapping[MemberId, Subscription], coordinator: CoordinatorTable | None
    ) -> list[MemberId]:
        """The members as the coordinator's ``HashMap`` of member ids iterates them (put in ``coordinator``'s order;
        without one, in the order of a table holding them, added in Java's string order)."""
        return coordinator_member_order(subscriptions, coordinator)

    def _targets(
        self,
        order: list[MemberId],
        counts: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        *,
        identical: bool,
        topic_ids: Mapping[Topic, str],
    ) -> list[Target]:
        ids = topic_ids if topic_ids and all(map(topic_ids.__contains__, counts)) else None
        if identical:
            topics = [t for t in subscriptions[order[0]].topics if t in counts]
            owned = [subscriptions[m].owned_partitions for m in order]
            if ids is None:
                return homogeneous_targets(topics, counts, owned, stable_extras=self.stable_extras)
            return homogeneous_targets(
                subscribed_topic_order(topics, ids),
                counts,
                owned,
                stable_extras=self.stable_extras,
                run_order=partial(target_topic_order, ids),
            )
        if not self.even and kafka_version_tuple(self.kafka_version) < KAFKA_17710:
            # Kafka 3.8/3.9's builder breaks its ties by member id (a TreeSet of members by size, then id) and
            # its topics as counted by position in name order, as transcribed (_heterogeneous_38).
            in_id_order = java_sorted(order)
            before, _ = previous_targets(in_id_order, counts, subscriptions)
            try:
                subscribed = [subscriptions[m].topics for m in in_id_order]
                targets = dict(zip(in_id_order, heterogeneous_targets_38(counts, subscribed, before), strict=True))
                return [targets[m] for m in order]
            except KafkaThrows:  # Kafka computes no target: the 4.0 builder's stands in
                pass
        current, owners = previous_targets(order, counts, subscriptions)
        subscribers = _subscribers(counts, [subscriptions[m].topics for m in order])
        topics_of = None  # Kafka's result, or too many distinct subscriptions for the most-even step
        if self.even:
            distinct = {subscriptions[m].topics for m in order}
            if len(distinct) <= MOST_EVEN_CLASSES:
                known = {topics: frozenset(t for t in topics if t in counts) for topics in distinct}
                topics_of = [known[subscriptions[m].topics] for m in order]
        return list(
            heterogeneous_targets(
                subscribers,
                counts,
                current,
                owners,
                members=order,
                topics_of=topics_of,
                restore=self.even,
                topic_key=None if ids is None else partial(uuid_order_key, ids),
            )
        )

    def __repr__(self) -> str:
        if self.kafka_version == KAFKA_VERSION:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(kafka_version={self.kafka_version!r})"


class EvenUniformAssignor(UniformAssignor):
    """Kafka's ``UniformAssignor`` (see :class:`UniformAssignor`), with the heterogeneous result evened out.

    Identical subscriptions: Kafka's homogeneous builder exactly (already within one). Mixed
    subscriptions: Kafka's heterogeneous builder, then two steps Kafka does not take. A
    member that lost a partition of a topic in Kafka's balancing passes and gained another
    of the same topic gets its own back (the same loads, one partition fewer moved); and
    where Kafka's passes over one topic at a time stop "almost balanced" (9/10/11), the
    loads are evened out along chains of subscribers across topics to the smallest sum of
    squares any valid target has, revoking as little of the previous target as that allows
    (up to 64 distinct subscriptions; above, Kafka's loads stand). No broker runs it: it
    shows what a better server assignor would do with the same group.

    >>> from assignors import Cluster, Subscription, TopicPartition
    >>> subs = {
    ...     "m1": Subscription(["x"], owned_partitions=[TopicPartition("x", p) for p in range(9)]),
    ...     "m2": Subscription(["x", "y"], owned_partitions=[TopicPartition("x", p) for p in range(9, 19)]),
    ...     "m3": Subscription(["y"]),
    ... }
    >>> cluster = Cluster({"x": 19, "y": 11})
    >>> {m: len(a.partitions) for m, a in UniformAssignor().assign(cluster, subs).items()}
    {'m1': 9, 'm2': 10, 'm3': 11}
    >>> {m: len(a.partitions) for m, a in EvenUniformAssignor().assign(cluster, subs).items()}
    {'m1': 10, 'm2': 10, 'm3': 10}
    """

    name: ClassVar[str] = EVEN_UNIFORM_ASSIGNOR_NAME
    even: ClassVar[bool] = True


def _subscribers(counts: Mapping[Topic, int], topic_lists: list[tuple[Topic, ...]]) -> dict[Topic, list[int]]:
    """Each topic of ``counts`` that somebody subscribes to, with its subscribers' positions ascending.

    Members are grouped by subscription first (by the topics tuple's id: equal lists are one object, see
    ``Subscription``). Where subscriptions are shared, a topic's subscribers are the ascending union of the member
    lists of the subscriptions naming it, built by C-level copies and merges (2,000 members on 1,000 topics: no
    per-member work per topic); where each member has its own (KIP-1263's shape), one C-level append per member
    and topic.
    """
    groups: dict[int, list[int]] = {}
    distinct: list[tuple[Topic, ...]] = []
    for position, topics in enumerate(topic_lists):
        members = groups.get(id(topics))
        if members is None:
            members = groups[id(topics)] = []
            distinct.append(topics)
        members.append(position)
    if 2 * len(distinct) > len(topic_lists):  # mostly one member a subscription
        return _appended(counts, topic_lists)
    naming: dict[Topic, list[list[int]]] = {topic: [] for topic in counts}
    sink: list[list[int]] = []
    for topics in distinct:
        members = groups[id(topics)]
        for topic in topics:
            naming.get(topic, sink).append(members)
    # Topics named by the same subscriptions share one list (read only): the balancing passes tell a group of
    # topics with one set of subscribers apart by it.
    merged: dict[tuple[int, ...], list[int]] = {}
    subscribers: dict[Topic, list[int]] = {}
    for topic, lists in naming.items():
        if lists:
            key = tuple(map(id, lists))
            union = merged.get(key)
            if union is None:
                union = merged[key] = lists[0] if len(lists) == 1 else sorted(chain.from_iterable(lists))
            subscribers[topic] = union
    return subscribers


def _appended(counts: Mapping[Topic, int], topic_lists: list[tuple[Topic, ...]]) -> dict[Topic, list[int]]:
    """:func:`_subscribers` by one C-level append per member and subscribed topic (a sink for topics without
    metadata)."""
    positions: dict[Topic, list[int]] = {topic: [] for topic in counts}
    appends = _Appends({topic: members.append for topic, members in positions.items()})
    for position, topics in enumerate(topic_lists):
        deque(map(call, map(appends.__getitem__, topics), repeat(position)), maxlen=0)
    return {topic: members for topic, members in positions.items() if members}


class _Appends(dict[str, "Callable[[int], None]"]):
    """Topic -> its subscriber list's ``append``; a topic without metadata gets a sink that keeps nothing."""

    __slots__ = ()

    def __missing__(self, topic: Topic) -> Callable[[int], None]:
        return _SINK


_SINK: Final[Callable[[int], None]] = deque[int](maxlen=0).append


def _table_size(capacity: int) -> int:
    """Java's ``HashMap.tableSizeFor``: the smallest power of two at least ``capacity``."""
    return 1 << (capacity - 1).bit_length() if capacity > 1 else 1


def java_set_order(partitions: Sequence[int]) -> list[int]:
    """The iteration order of Java's ``new HashSet<>(list)`` of ``partitions`` (ascending), as the broker reads a
    member's previous target of a topic from its record (``Assignment.fromRecord``).

    The table holds ``tableSizeFor(max(n / 0.75 + 1, 16))`` buckets; an ``Integer`` lands in bucket
    ``(p ^ p >>> 16) & (size - 1)``, and a bucket keeps insertion (here ascending) order.

    >>> java_set_order([0, 5, 16, 17])
    [0, 16, 17, 5]
    """
    size = _table_size(max(4 * len(partitions) // 3 + 1, 16))
    if not partitions or partitions[-1] < size:
        return list(partitions)
    mask = size - 1
    return sorted(partitions, key=lambda p: (p ^ (p >> 16)) & mask)


def _runs(owned: tuple[TopicPartition, ...]) -> list[tuple[Topic, tuple[TopicPartition, ...]]]:
    """``owned`` (sorted) cut into one run per topic, each found by bisection."""
    topic = owned[0][0]
    if owned[-1][0] == topic:
        return [(topic, owned)]
    runs = []
    start, size = 0, len(owned)
    while start < size:
        topic = owned[start][0]
        end = bisect_right(owned, (topic, _BEYOND), start)
        runs.append((topic, owned[start:end]))
        start = end
    return runs


Run: TypeAlias = "list[tuple[Topic, tuple[TopicPartition, ...]]]"


def _valid_runs(
    partitions: tuple[TopicPartition, ...], subscribed: set[Topic], counts: Mapping[Topic, int]
) -> tuple[Run, bool]:
    """A member's previous target as runs per topic (subscribed topics, existing partitions), and whether that is
    all of it."""
    runs: Run = []
    whole = True
    if partitions:
        for topic, run in _runs(partitions):
            if topic not in subscribed:
                whole = False
                continue
            count = counts[topic]
            if run[-1][1] >= count:  # partitions the topic no longer has (stale input)
                run = run[: bisect_left(run, (topic, count))]  # noqa: PLW2901
                whole = False
                if not run:
                    continue
            runs.append((topic, run))
    return runs, whole


class _Previous:
    """Every member's valid previous target as runs per topic, and the partitions nobody holds.

    A run is a slice of the member's sorted ``owned_partitions``; ``whole[m]`` says the member's
    valid target is its ``owned_partitions`` exactly (nothing stale, nothing claimed twice).
    """

    __slots__ = ("free", "runs", "whole")

    def __init__(
        self,
        topics: list[Topic],
        counts: Mapping[Topic, int],
        owned: Sequence[tuple[TopicPartition, ...]],
        run_order: Callable[[Run], Run] | None = None,
    ) -> None:
        subscribed = set(topics)
        self.runs: list[Run] = []
        self.whole: list[bool] = []
        by_topic: dict[Topic, list[tuple[int, int]]] = {}  # (member, run index)
        for member, partitions in enumerate(owned):
            runs, whole = _valid_runs(partitions, subscribed, counts)
            if run_order is not None and len(runs) > 1:
                runs = run_order(runs)
            for index, (topic, _) in enumerate(runs):
                by_topic.setdefault(topic, []).append((member, index))
            self.runs.append(runs)
            self.whole.append(whole)
        self.free: list[tuple[Topic, Sequence[int]]] = []
        for topic in topics:
            claims = by_topic.get(topic)
            count = counts[topic]
            if claims is None:
                self.free.append((topic, range(count)))
                continue
            self.free.extend((topic, free) for free in self._free(topic, count, claims) if free)

    def _free(self, topic: Topic, count: int, claims: list[tuple[int, int]]) -> list[Sequence[int]]:
        """The partitions of ``topic`` nobody holds, ascending, in pieces; a partition claimed twice stays with the
        first member in order."""
        runs = [self.runs[member][index][1] for member, index in claims]
        spans = sorted((run[0][1], run[-1][1], len(run)) for run in runs)
        disjoint = all(last < first for (_, last, _), (first, _, _) in pairwise(spans))
        if disjoint and all(last - first + 1 == size for first, last, size in spans):  # contiguous runs
            gaps: list[Sequence[int]] = []
            start = 0
            for first, last, _ in spans:
                gaps.append(range(start, first))
                start = last + 1
            gaps.append(range(start, count))
            return gaps
        held = bytearray(count)
        numbers = [list(map(itemgetter(1), run)) for run in runs]
        if disjoint or len(set(chain.from_iterable(numbers))) == sum(map(len, numbers)):
            for partitions in numbers:
                _mark(held, partitions)
            return [list(compress(range(count), held.translate(_FLIP)))]
        for (member, index), run, partitions in zip(claims, runs, numbers, strict=True):
            # Claimed twice: the first member in order keeps it (Kafka's own targets never overlap).
            keep = [not held[p] for p in partitions]
            if not all(keep):
                self.runs[member][index] = (topic, tuple(compress(run, keep)))
                self.whole[member] = False
            _mark(held, compress(partitions, keep))
        return [list(compress(range(count), held.translate(_FLIP)))]


def _mark(held: bytearray, partitions: Iterable[int]) -> None:
    """``held[p] = 1`` for each of ``partitions``, at C speed."""
    deque(map(held.__setitem__, partitions, repeat(1)), maxlen=0)


_FLIP = bytes([1, 0, *range(2, 256)])


def homogeneous_targets(
    topics: list[Topic],
    counts: Mapping[Topic, int],
    owned: Sequence[tuple[TopicPartition, ...]],
    *,
    stable_extras: bool,
    run_order: Callable[[Run], Run] | None = None,
) -> list[Target]:
    """Kafka's ``UniformHomogeneousAssignmentBuilder``: one target per member of ``owned`` (its previous target).

    Every member's quota is ``total // members``, and ``total % members`` of them take one
    more. Each member keeps its previous partitions up to its quota, topic by topic, each
    topic's in Java ``HashSet`` order (:func:`java_set_order`); what exceeds it goes after the
    never-assigned partitions; the members still short of their quota then take from that
    list in order. ``stable_extras`` chooses who takes the extras (see :class:`UniformAssignor`).
    A member that keeps its whole previous target and takes nothing gets that tuple back as it is.

    ``topics`` go in the order the coordinator iterates the subscribed topic ids; ``run_order`` puts a member's
    previous partitions of several topics in the order its target's map iterates them (topic name order without).
    """
    previous = _Previous(topics, counts, owned, run_order)
    kept_runs, unfilled, released = _keep(previous, counts, len(owned), stable_extras=stable_extras)
    gains = _hand_out(unfilled, previous.free + released, counts)
    targets: list[Target] = []
    for member, (whole, kept) in enumerate(zip(previous.whole, kept_runs, strict=True)):
        gained = gains.get(member)
        if whole and not gained:
            targets.append(owned[member])
        else:
            targets.append(_joined([run for _, run in kept] + (gained or [])))
    return targets


def _keep(
    previous: _Previous, counts: Mapping[Topic, int], members: int, *, stable_extras: bool
) -> tuple[list[Run], list[tuple[int, int]], list[tuple[Topic, Sequence[int]]]]:
    """Kafka's ``maybeRevokePartitions``: what each member keeps of its previous target, within its quota.

    Returns the kept runs per member, the members short of their quota in order with what they lack, and the
    partitions given up (per topic, in the order the next members take them).
    """
    min_quota, extra = divmod(sum(counts.values()), members)
    released: list[tuple[Topic, Sequence[int]]] = []
    unfilled: list[tuple[int, int]] = []
    kept_runs: list[Run] = []
    for member, runs in enumerate(previous.runs):
        quota, has_extra = min_quota, False
        if extra > 0:
            quota += 1
            has_extra = stable_extras
            if not stable_extras:
                extra -= 1
        size = sum(len(run) for _, run in runs)
        if size <= quota:
            quota -= size
            kept_runs.append(runs)
        else:
            kept_runs.append(_within(runs, quota, counts, released))
            quota = 0
            previous.whole[member] = False
        if stable_extras:
            if quota > 0 and has_extra and members - member > extra:
                # Gives the extra up for a later member to claim, unless it is one of the last ones that must take it.
                quota -= 1
                has_extra = False
            if has_extra:
                extra -= 1
        if quota > 0:
            unfilled.append((member, quota))
    return kept_runs, unfilled, released


def _within(runs: Run, quota: int, counts: Mapping[Topic, int], released: list[tuple[Topic, Sequence[int]]]) -> Run:
    """The first ``quota`` partitions of ``runs`` (topic by topic, each in HashSet order); the rest to ``released``."""
    kept: Run = []
    for topic, run in runs:
        if len(run) <= quota:
            quota -= len(run)
            kept.append((topic, run))
            continue
        order = java_set_order(list(map(itemgetter(1), run)))
        if quota:
            cache = cached_partitions(topic, counts[topic])
            kept.append((topic, tuple(map(cache.__getitem__, sorted(order[:quota])))))
        released.append((topic, order[quota:]))
        quota = 0
    return kept


def _hand_out(
    unfilled: list[tuple[int, int]], unassigned: list[tuple[Topic, Sequence[int]]], counts: Mapping[Topic, int]
) -> dict[int, list[tuple[TopicPartition, ...]]]:
    """Kafka's ``assignRemainingPartitions``: each unfilled member in order takes what it lacks from ``unassigned``.

    Returns each member's new partitions, one sorted piece per topic segment, sliced from :func:`cached_partitions`.

    Raises:
        AssignorError: partitions left over (a broken invariant, as Kafka's ``Partitions were left unassigned``).
    """
    gains: dict[int, list[tuple[TopicPartition, ...]]] = {}
    segment, offset = 0, 0
    for member, short in unfilled:
        lacking = short
        pieces: list[tuple[TopicPartition, ...]] = []
        while lacking > 0 and segment < len(unassigned):
            topic, partitions = unassigned[segment]
            take = min(lacking, len(partitions) - offset)
            cache = cached_partitions(topic, counts[topic])
            part = partitions[offset : offset + take]
            if isinstance(part, range):
                pieces.append(cache[part.start : part.stop])
            else:
                pieces.append(tuple(map(cache.__getitem__, sorted(part))))
            offset += take
            lacking -= take
            if offset == len(partitions):
                segment, offset = segment + 1, 0
        gains[member] = pieces
    if segment < len(unassigned):
        left = sum(len(p) for _, p in unassigned[segment:]) - offset
        msg = f"uniform: {left} partitions were left unassigned (a broken quota invariant)"
        raise AssignorError(msg)
    return gains


def _joined(pieces: list[tuple[TopicPartition, ...]]) -> Target:
    """The sorted union of sorted, disjoint ``pieces``: concatenated where they follow each other, else sorted."""
    pieces = [piece for piece in pieces if piece]
    if len(pieces) <= 1:
        return pieces[0] if pieces else ()
    pieces.sort(key=itemgetter(0))
    if all(before[-1] < after[0] for before, after in pairwise(pieces)):
        return tuple(chain.from_iterable(pieces))
    return sorted(chain.from_iterable(pieces))
