"""Hypothesis strategies for clusters and consumer groups.

Groups are small on purpose (a handful of members, topics and partitions): they shrink
to counterexamples a person can read. Scale belongs in the benchmarks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

from assignors._builtin.registry import assignor_names
from assignors._classic.events import AddPartitions, AssignorSpec, Crash, Event, Join, Leave, Restart, Subscribe
from assignors._core.model import (
    COOPERATIVE_STICKY_ASSIGNOR_NAME,
    RANGE_ASSIGNOR_NAME,
    Assignment,
    Cluster,
    MemberId,
    Subscription,
    TopicPartition,
)
from assignors._groups.scenario import Scenario
from assignors.testing._types import DrawFn, SearchStrategy, testing_extra_module

if TYPE_CHECKING:
    from collections.abc import Callable
    from random import Random

__all__ = ["Group", "assignments", "clusters", "event_sequences", "groups", "subscriptions", "topic_names"]

RACKS = ("a", "b", "c")


_T = TypeVar("_T")


def _composite(draw_one: Callable[..., _T]) -> Callable[..., SearchStrategy]:
    """``hypothesis.strategies.composite``, applied at the first call: importing this module imports no Hypothesis
    (``import assignors`` and its submodules stay dependency-free), drawing up a strategy does. This decorator runs
    at import time, so nothing it runs or names holds an import statement of Hypothesis: the first draw gets
    ``composite`` by name (:func:`~assignors.testing._types.testing_extra_module`)."""
    built: list[Callable[..., SearchStrategy]] = []

    @wraps(draw_one)
    def strategy(*args: Any, **kwargs: Any) -> SearchStrategy:
        if not built:
            built.append(testing_extra_module("hypothesis.strategies").composite(draw_one))
        return built[0](*args, **kwargs)

    return strategy


@dataclass(frozen=True)
class Group:
    """One rebalance's input: cluster metadata and every member's subscription."""

    cluster: Cluster
    subscriptions: dict[MemberId, Subscription] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        """Whether every member subscribes to the same topics."""
        return len({s.topics for s in self.subscriptions.values()}) <= 1

    def shuffled(self, rnd: Random) -> Group:
        """The same group with its members, topics and partition racks in another insertion order.

        An assignor must give this the same result (same input, same output: no dependence on
        dict order); :func:`~assignors.testing.determinism_problems` compares the two.
        """
        members = list(self.subscriptions.items())
        topics = list(self.cluster.partitions_per_topic.items())
        racks = list(self.cluster.partition_racks.items())
        for items in (members, topics, racks):
            rnd.shuffle(items)
        return Group(Cluster(dict(topics), partition_racks=dict(racks)), dict(members))


@_composite
def clusters(
    draw: DrawFn,
    *,
    min_topics: int = 1,
    max_topics: int = 4,
    max_partitions: int = 12,
    racks: bool | None = None,
) -> Cluster:
    """Clusters of topics ``t0, t1, ...``, with zero to ``max_partitions`` partitions each.

    Args:
        min_topics: fewest topics.
        max_topics: most topics.
        max_partitions: most partitions of one topic (zero partitions is drawn too).
        racks: whether partitions carry replica racks (from ``a``, ``b``, ``c``); None draws it.
    """
    st = testing_extra_module("hypothesis.strategies")

    count = draw(st.integers(min_topics, max_topics))
    partitions = {f"t{i}": draw(st.integers(0, max_partitions)) for i in range(count)}
    with_racks = draw(st.booleans()) if racks is None else racks
    partition_racks: dict[TopicPartition, frozenset[str]] = {}
    if with_racks:
        # Either every partition on every rack (rack-awareness stays off) or a random layout.
        everywhere = draw(st.booleans())
        for topic, size in partitions.items():
            for number in range(size):
                chosen = frozenset(RACKS) if everywhere else draw(st.frozensets(st.sampled_from(RACKS), max_size=3))
                if chosen:
                    partition_racks[TopicPartition(topic, number)] = chosen
    return Cluster(partitions, partition_racks=partition_racks)


@_composite
def groups(  # noqa: PLR0913 - keyword-only bounds, as hypothesis strategies take them
    draw: DrawFn,
    *,
    min_members: int = 1,
    max_members: int = 8,
    max_topics: int = 4,
    max_partitions: int = 12,
    identical: bool | None = None,
    static: bool | None = None,
    racks: bool | None = None,
    missing_topics: bool = True,
    owned: bool = False,
) -> Group:
    """Consumer groups: members ``c0, c1, ...`` in random insertion order.

    Args:
        min_members: fewest members.
        max_members: most members.
        max_topics: most topics in the cluster.
        max_partitions: most partitions of one topic.
        identical: all members subscribe to the same topics (True), to independent random
            subsets (False), or either (None).
        static: all members static (True), none (False), or each drawn (None). Static
            members get instance ids unrelated to their member ids.
        racks: members and partitions carry racks (True), do not (False), or drawn (None).
        missing_topics: members may subscribe to a topic the cluster has no metadata for.
        owned: members claim random partitions (of any topic, some claimed twice) with random
            generations from -1 to 3, as after an arbitrary history.
    """
    st = testing_extra_module("hypothesis.strategies")

    with_racks = draw(st.booleans()) if racks is None else racks
    cluster = draw(clusters(max_topics=max_topics, max_partitions=max_partitions, racks=with_racks))
    topics = list(cluster.topics)
    if missing_topics and draw(st.booleans()):
        topics.append("unknown")
    size = draw(st.integers(min_members, max_members))
    members = draw(st.permutations([f"c{i}" for i in range(size)]))
    instance_ids = draw(st.permutations([f"i{i}" for i in range(size)]))
    same = draw(st.booleans()) if identical is None else identical
    shared = draw(st.frozensets(st.sampled_from(topics), min_size=1))
    every_partition = [tp for t in cluster.topics for tp in cluster.partitions(t)]
    subscriptions: dict[MemberId, Subscription] = {}
    for index, member in enumerate(members):
        member_topics = shared if same else draw(st.frozensets(st.sampled_from(topics)))
        is_static = draw(st.booleans()) if static is None else static
        rack = draw(st.sampled_from((*RACKS, None))) if with_racks else None
        claims: frozenset[TopicPartition] = frozenset()
        generation = -1
        if owned and every_partition:
            claims = draw(st.frozensets(st.sampled_from(every_partition), max_size=len(every_partition)))
            generation = draw(st.integers(-1, 3))
        subscriptions[member] = Subscription(
            member_topics,
            group_instance_id=instance_ids[index] if is_static else None,
            rack_id=rack,
            owned_partitions=claims,
            generation_id=generation,
        )
    return Group(cluster, subscriptions)


def topic_names(*, max_size: int = 12) -> SearchStrategy:
    """Non-empty topic names of any Unicode text (what the wire format carries), ``max_size`` characters at most."""
    st = testing_extra_module("hypothesis.strategies")

    return st.text(st.characters(codec="utf-8"), min_size=1, max_size=max_size)


def _any_partitions() -> SearchStrategy:
    st = testing_extra_module("hypothesis.strategies")

    return st.builds(TopicPartition, topic_names(max_size=6), st.integers(0, 2**31 - 1))


@_composite
def subscriptions(draw: DrawFn, *, max_topics: int = 5, max_owned: int = 8, static: bool | None = None) -> Subscription:
    """Single subscriptions with every field drawn: topics, user data (or None), owned
    partitions, generation (-1 or any INT32 >= 0), rack (or None), instance id (or None).

    Args:
        max_topics: most subscribed topics.
        max_owned: most owned partitions.
        static: with a ``group_instance_id`` (True), without (False), or drawn (None).
    """
    st = testing_extra_module("hypothesis.strategies")

    is_static = draw(st.booleans()) if static is None else static
    return Subscription(
        draw(st.lists(topic_names(), max_size=max_topics)),
        user_data=draw(st.none() | st.binary(max_size=16)),
        owned_partitions=draw(st.frozensets(_any_partitions(), max_size=max_owned)),
        generation_id=draw(st.just(-1) | st.integers(0, 2**31 - 1)),
        rack_id=draw(st.none() | topic_names(max_size=6)),
        group_instance_id=draw(topic_names(max_size=8)) if is_static else None,
    )


@_composite
def assignments(draw: DrawFn, *, max_partitions: int = 12) -> Assignment:
    """Single member assignments: distinct partitions in any order, user data or None."""
    st = testing_extra_module("hypothesis.strategies")

    partitions = draw(st.lists(_any_partitions(), max_size=max_partitions, unique=True))
    return Assignment(partitions, user_data=draw(st.none() | st.binary(max_size=16)))


_DEFAULT_CONFIGS: tuple[tuple[str, ...], ...] = (
    *((name,) for name in assignor_names()),
    (COOPERATIVE_STICKY_ASSIGNOR_NAME, RANGE_ASSIGNOR_NAME),  # Kafka's upgrade path to cooperative
)


@_composite
def event_sequences(  # noqa: PLR0913, PLR0915 - keyword-only bounds; one small state machine
    draw: DrawFn,
    *,
    max_events: int = 12,
    max_topics: int = 3,
    max_partitions: int = 8,
    configs: Sequence[Sequence[AssignorSpec]] = _DEFAULT_CONFIGS,
    mixed: bool = True,
    session_timeout_s: float = 10.0,
) -> Scenario:
    """Scenarios for :class:`assignors.rebalance.GroupSimulator`: topics and a valid event sequence.

    Events: join (static or dynamic, with a rack or not), leave, crash, restart (within or
    beyond the session timeout, sometimes with another configuration), resubscribe and
    partition increase. Gaps between events range from none (events in one burst, so
    members are down during other members' rebalances) to beyond the session timeout.
    Events only name members that are up at that moment, so every event applies.

    Args:
        max_events: most events.
        max_topics: most topics.
        max_partitions: most initial partitions of one topic.
        configs: the assignor lists (``partition.assignment.strategy``) members draw from.
        mixed: members draw their configurations independently (True) or the group shares
            one (False; it may still change on restart with ``mixed``).
        session_timeout_s: the group's session timeout.
    """
    st = testing_extra_module("hypothesis.strategies")

    topics = [f"t{i}" for i in range(draw(st.integers(1, max_topics)))]
    partitions = {t: draw(st.integers(0, max_partitions)) for t in topics}
    all_configs = [tuple(c) for c in configs]
    shared = draw(st.sampled_from(all_configs))
    # What the coordinator may still hold for each member: its configurations, until when.
    config_of: dict[str, list[tuple[tuple[AssignorSpec, ...], float]]] = {}

    def compatible(excluding: str | None = None) -> list[tuple[AssignorSpec, ...]]:
        """Configurations the group accepts: sharing a name with every other member's."""
        if not mixed:
            return [shared]
        others = [
            {_spec_name(s) for s in c}
            for h, held in config_of.items()
            if h != excluding
            for c, until in held
            if until >= now
        ]
        common = set.intersection(*others) if others else None
        return [c for c in all_configs if common is None or {_spec_name(s) for s in c} & common]

    subsets = st.lists(st.sampled_from(topics), min_size=1, max_size=len(topics), unique=True).map(tuple)
    up_at: dict[str, float] = {}  # member handle -> when it can be named again
    events: list[Event] = []
    now, serial = 0.0, 0
    for _ in range(draw(st.integers(1, max_events))):
        now += draw(st.sampled_from((0.0, 1.0, 2.0, session_timeout_s * 3)))
        ready = sorted(h for h, t in up_at.items() if t <= now)
        kind = (
            "join"
            if not ready
            else draw(st.sampled_from(("join", "join", "leave", "crash", "restart", "subscribe", "grow")))
        )
        if kind == "join":
            if not compatible():
                continue  # members on their way out still hold the group to their assignors
            handle = f"m{serial}"
            serial += 1
            static = draw(st.booleans())
            chosen = draw(st.sampled_from(compatible()))
            config_of[handle] = [(chosen, math.inf)]
            events.append(Join(now, handle, draw(subsets), chosen,
                               instance_id=f"i-{handle}" if static else None,
                               rack=draw(st.sampled_from((None, "a", "b")))))  # fmt: skip
            up_at[handle] = now
            continue
        if kind == "grow":
            topic = draw(st.sampled_from(topics))
            partitions_now = max(
                [partitions[topic], *(e.count for e in events if isinstance(e, AddPartitions) and e.topic == topic)]
            )
            events.append(AddPartitions(now, topic, partitions_now + draw(st.integers(1, 4))))
            continue
        handle = draw(st.sampled_from(ready))
        if kind in {"leave", "crash"}:
            events.append(Leave(now, handle) if kind == "leave" else Crash(now, handle))
            del up_at[handle]
            until = now if kind == "leave" else now + session_timeout_s + 1
            config_of[handle] = [(c, until) for c, _ in config_of[handle]]
        elif kind == "restart":
            downtime = draw(st.sampled_from((0.0, session_timeout_s / 2, session_timeout_s * 2)))
            options = compatible(excluding=handle) if mixed else []
            new_config = draw(st.none() | st.sampled_from(options)) if options else None
            current = config_of[handle][-1][0]
            if new_config is not None:  # the old one may be held until the member is back
                back = now + max(downtime, session_timeout_s) + 1
                config_of[handle] = [(current, back), (new_config, math.inf)]
            events.append(Restart(now, handle, downtime, assignors=new_config))
            up_at[handle] = now + max(downtime, session_timeout_s) + 1
        else:
            events.append(Subscribe(now, handle, draw(subsets)))
    return Scenario(partitions, session_timeout_s, tuple(events))


def _spec_name(spec: AssignorSpec) -> str:
    return spec if isinstance(spec, str) else spec.name
