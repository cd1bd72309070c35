"""The KIP-848 uniform assignor against Kafka's own ``UniformAssignor``, at the oracle's Kafka version.

Kafka iterates members and topic ids in ``HashMap``/``HashSet`` order, which hangs on the member ids and topic
Uuids; so does ``uniform`` (``coordinator_member_order``, and the topics by :attr:`assignors.Cluster.topic_ids`).
Three comparisons:

- Exact (:func:`check_exact`): the group as it is, the same topic ids on both sides (given to ours through
  ``Cluster(topic_ids=...)``): ``UniformAssignor(kafka_version=...)`` must return Kafka's target exactly, on every
  group; also with broker-like random member ids, and under aligned ids (:func:`aligned`: members renamed so that
  Java's ``HashMap`` iterates them in sorted order, topic ids in the names' order).
- Relabelled runs, ours without topic ids: Java runs on the group and on relabelled copies of it (other member ids,
  other topic ids, mapped back). Where every run gives the same target, the result does not depend on that order
  and ours must equal it exactly whatever topic order it went by.

``uniform-even`` (``EvenUniformAssignor``) is ours, not Kafka's: at least as balanced as Kafka's target in the same
order.

Kafka 4.0.1 and later keep a member's extra partition (KAFKA-18688); Kafka 3.8 to 4.0.0 do not, checked against
the 4.0.0 jar. Kafka 3.8 and 3.9 had another heterogeneous builder (before KAFKA-17710), checked against 3.9.1.
"""

from __future__ import annotations

import base64
import hashlib
import string
from collections.abc import Mapping

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assignors import Assignment, Cluster, Subscription, TopicPartition
from assignors._core.util import java_sorted
from assignors.consumer_group import EvenUniformAssignor, UniformAssignor
from assignors.testing import Group, validity_problems
from helpers.java_oracle import JavaError, JavaOracle, side_by_side
from helpers.oracle_groups import EXAMPLES, server_groups

Result = Mapping[str, Assignment]
KAFKA_18688 = (4, 0, 1)
KAFKA_17710 = (4, 0, 0)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units), as an unsigned 32-bit number."""
    units = text.encode("utf-16-be")
    h = 0
    for index in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[index : index + 2], "big")) & 0xFFFFFFFF
    return h


def hash_map_bucket(h: int, members: int) -> int:
    """The bucket of a key with hash ``h`` in a ``new HashMap<>()`` after ``members`` puts (16 buckets, doubled
    past three quarters full)."""
    capacity = 16
    while members > capacity * 3 // 4:
        capacity *= 2
    return (h ^ (h >> 16)) & (capacity - 1)


def aligned(group: Group) -> tuple[Group, dict[str, tuple[int, int]], dict[str, str]]:
    """``group`` with member ids that Java's ``HashMap`` iterates in their sorted order, and topic ids whose
    ``HashSet`` and ``compareTo`` orders are the topic names' order: Kafka's iteration order is then ours.

    Returns the renamed group, the topic ids, and the way back from new member ids to the old ones.
    """
    members = sorted(group.subscriptions)
    names: dict[str, str] = {}
    for rank, member in enumerate(members):
        name = next(
            f"a{rank:03d}{chr(a)}{chr(b)}"
            for a in range(33, 127)
            for b in range(33, 127)
            if hash_map_bucket(java_string_hash(f"a{rank:03d}{chr(a)}{chr(b)}"), len(members)) == rank
        )
        names[member] = name
    subscriptions = {names[m]: s for m, s in group.subscriptions.items()}
    topics = set(group.cluster.partitions_per_topic)
    for s in group.subscriptions.values():
        topics.update(s.topics)
        topics.update(tp.topic for tp in s.owned_partitions)
    # Uuid.hashCode: index + 1, the assigned topics (subscribed, with partitions) first, as Kafka 3.9's port counts
    counts = group.cluster.partitions_per_topic
    assigned = {t for s in group.subscriptions.values() for t in s.topics if counts.get(t, 0) > 0}
    ranked = sorted(topics, key=lambda topic: (topic not in assigned, topic))
    topic_ids = {topic: (index + 1, 0) for index, topic in enumerate(ranked)}
    return Group(group.cluster, subscriptions), topic_ids, {name: m for m, name in names.items()}


def id_text(halves: tuple[int, int]) -> str:
    """A ``Uuid`` given as its two signed halves, as Kafka prints it (22 characters of URL-safe base64)."""
    raw = halves[0].to_bytes(8, "big", signed=True) + halves[1].to_bytes(8, "big", signed=True)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def kafka_exact(oracle: JavaOracle, group: Group, topic_ids: Mapping[str, tuple[int, int]]) -> dict[str, Assignment]:
    """Kafka's target for ``group`` as it is, under ``topic_ids`` (members put into its map in Java's string order,
    as ``coordinator_member_order`` does; a member Kafka leaves out gets nothing)."""
    inserted = {member: group.subscriptions[member] for member in java_sorted(group.subscriptions)}
    result = oracle.server_assign("uniform", group.cluster, inserted, topic_ids=topic_ids)
    return {
        member: Assignment(sorted(result[member].partitions)) if member in result else Assignment([])
        for member in sorted(group.subscriptions)
    }


def with_topic_ids(cluster: Cluster, topic_ids: Mapping[str, tuple[int, int]]) -> Cluster:
    """``cluster`` knowing the ids of its topics."""
    counts = cluster.partitions_per_topic
    return Cluster(counts, topic_ids={topic: id_text(topic_ids[topic]) for topic in counts if topic in topic_ids})


def check_exact(oracle: JavaOracle, group: Group, topic_ids: Mapping[str, tuple[int, int]]) -> None:
    """``uniform`` with the group's topic ids is Kafka's target exactly (Kafka 3.9's throwing builder aside)."""
    cluster = with_topic_ids(group.cluster, topic_ids)
    ours = UniformAssignor(kafka_version=oracle.version).assign(cluster, group.subscriptions)
    try:
        java = kafka_exact(oracle, group, topic_ids)
    except JavaError as error:
        if not kafka_mismatches_a_movement_record(error):
            raise
        assert not validity_problems(group.cluster, group.subscriptions, ours), group
        return
    assert ours == java, f"not Kafka's target\n{group}\n{side_by_side(ours, java)}"


def _by_position(oracle: JavaOracle, group: Group) -> bool:
    """Kafka 3.8/3.9's heterogeneous builder is transcribed with topic ids in the names' order (``aligned``): there
    only aligned ids compare."""
    return oracle.version_tuple < KAFKA_17710 and len({s.topics for s in group.subscriptions.values()}) > 1


def check_aligned(oracle: JavaOracle, group: Group) -> None:
    """Exact on the group as it is (topic ids from the names), and on its copy under aligned ids."""
    if not _by_position(oracle, group):
        check_exact(oracle, group, _salted_ids(group, 0))
    renamed, topic_ids, _back = aligned(group)
    check_exact(oracle, renamed, topic_ids)


def _salted_ids(group: Group, salt: int) -> dict[str, tuple[int, int]]:
    topics = set(group.cluster.partitions_per_topic)
    for s in group.subscriptions.values():
        topics.update(s.topics)
        topics.update(tp.topic for tp in s.owned_partitions)
    ids = {}
    for topic in topics:
        digest = hashlib.sha256(f"{salt}/{topic}".encode()).digest()
        ids[topic] = (int.from_bytes(digest[:8], "big", signed=True), int.from_bytes(digest[8:16], "big", signed=True))
    return ids


def java_runs(
    oracle: JavaOracle, group: Group, salts: list[int], *, original: bool = True
) -> list[dict[str, frozenset[TopicPartition]]]:
    """Kafka's target on the group (unless not ``original``), then on each relabelled copy, mapped back.

    A copy renames every member to a random id (so both their HashMap order and their sorted order change) and
    gives every topic another Uuid.
    """
    runs = []
    for salt in [0, *salts] if original else salts:
        names = {
            member: member if salt == 0 else hashlib.sha256(f"{salt}/{member}".encode()).hexdigest()[:12]
            for member in group.subscriptions
        }
        back = {name: member for member, name in names.items()}
        subscriptions = {names[m]: s for m, s in group.subscriptions.items()}
        result = oracle.server_assign("uniform", group.cluster, subscriptions, topic_ids=_salted_ids(group, salt))
        mapped = {back[name]: frozenset(a.partitions) for name, a in result.items()}
        # The coordinator reads a member the assignor left out as one with an empty target.
        runs.append({member: mapped.get(member, frozenset()) for member in group.subscriptions})
    return runs


def depends_on_java_order(runs: list[dict[str, frozenset[TopicPartition]]]) -> bool:
    """Kafka's target changes with member ids or topic ids alone: its HashMap iteration order decides it."""
    return any(run != runs[0] for run in runs[1:])


def moved(subscriptions: Mapping[str, Subscription], result: Result) -> int:
    previous = {tp: m for m, s in subscriptions.items() for tp in s.owned_partitions}
    return sum(1 for m, a in result.items() for tp in a.partitions if previous.get(tp, m) != m)


MORE_SALTS = [2**32 + k for k in range(1, 25)]
"""Relabellings tried before calling a difference from an order-free Kafka target a failure: 8 runs that agree
can still hang on one coin flip of Kafka's order (1 in 128); 32 leave 1 in 2^31."""


def kafka_mismatches_a_movement_record(error: JavaError) -> bool:
    """Kafka 3.9's heterogeneous builder throws ``PartitionAssignorException: Mismatch in partition movement
    record with respect to partition ownership during a rebalance`` (its ``PartitionMovements`` bookkeeping, which
    Kafka 4.0 replaced with ``MemberAssignmentBalancer``) on some groups with previous targets
    (docs/java-parity.md). Ours assigns them."""
    return error.java_class.endswith("PartitionAssignorException") and "Mismatch in partition movement" in str(error)


def squares(result: Mapping[str, Assignment] | Mapping[str, frozenset[TopicPartition]]) -> int:
    """The sum of the squared member loads: lower is more even."""
    return sum(len(a.partitions if isinstance(a, Assignment) else a) ** 2 for a in result.values())


def check(oracle: JavaOracle, group: Group, salts: list[int], *, kafka_version: str) -> None:
    """Where Kafka's target does not hang on member or topic ids, ``uniform`` is that target exactly."""
    ours = UniformAssignor(kafka_version=kafka_version).assign(group.cluster, group.subscriptions)
    assert not validity_problems(group.cluster, group.subscriptions, ours), group
    try:
        runs = java_runs(oracle, group, salts)
    except JavaError as error:
        if not kafka_mismatches_a_movement_record(error):
            raise
        return
    java = {m: Assignment(sorted(p)) for m, p in runs[0].items()}
    exact = {m: frozenset(a.partitions) for m, a in ours.items()} == runs[0]
    if not depends_on_java_order(runs) and not exact:
        runs += java_runs(oracle, group, MORE_SALTS, original=False)
    if not depends_on_java_order(runs):
        assert exact, f"not Kafka's exactly (in {len(runs)} relabelled runs)\n{group}\n{side_by_side(ours, java)}"


def check_even(oracle: JavaOracle, group: Group) -> None:
    """``uniform-even`` against Kafka's target in the same order: at least as even, and as even, no more moves."""
    topic_ids = _salted_ids(group, 0)
    cluster = with_topic_ids(group.cluster, topic_ids)
    even = EvenUniformAssignor(kafka_version=oracle.version).assign(cluster, group.subscriptions)
    assert not validity_problems(group.cluster, group.subscriptions, even), group
    try:
        java = kafka_exact(oracle, group, topic_ids)
    except JavaError as error:
        if not kafka_mismatches_a_movement_record(error):
            raise
        return
    report = f"{group}\n{side_by_side(even, java)}"
    assert squares(even) <= squares(java), f"less even than Kafka's\n{report}"
    if squares(even) == squares(java) and oracle.version_tuple >= KAFKA_17710:  # evens out 4.0's builder's result
        assert moved(group.subscriptions, even) <= moved(group.subscriptions, java), f"more moves\n{report}"


def _member(topics: list[str], owned: list[tuple[str, int]] = ()) -> Subscription:  # type: ignore[assignment]
    return Subscription(topics, owned_partitions=[TopicPartition(t, p) for t, p in owned], generation_id=0)


MORE_MOVEMENT = Group(
    Cluster({"t0": 5, "t1": 6, "t2": 7}),
    {
        "c0": _member([]),
        "c1": _member(["t1"]),
        "c2": _member(["t0", "t1", "t2"]),
        "c3": _member(["t1"]),
        "c4": _member(["t0", "t1"], [("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0), ("t1", 1), ("t1", 2), ("t1", 3)]),
        "c5": _member(["t0", "t1", "t2"]),
        "c6": _member(["t0"]),
    },
)
"""Found by this property (Kafka 4.4): c4 held 7 and keeps 3; Kafka's c4 keeps t0-0, t1-0, t1-1 under the original
ids. ``uniform`` keeps only t1-0, t1-1 and takes the never-assigned t0-4 instead, as Kafka itself does under other
member and topic ids: 5 moves against 4. ``uniform-even`` gives a member back what it lost for what it gained of
the same topic (``_restore`` in assignors.consumer_group._heterogeneous)."""

KAFKA_CHURNS = Group(
    Cluster({"t0": 2, "t1": 0, "t2": 0, "t3": 6}),
    {
        "c0": _member([]),
        "c1": _member(["t0", "t1", "t2", "t3"]),
        "c2": _member(["t0", "t1", "t2", "t3"], [("t0", 0), ("t0", 1), ("t3", 0), ("t3", 1), ("t3", 2)]),
        "c3": _member(["t0"]),
    },
)
"""Found by this property (Kafka 4.4, the same target under 32 relabellings): Kafka's c2 gets the fresh t3-5 in
the fill and then gives up its own t3-2 to c1; so does ``uniform``; ``uniform-even`` keeps t3-2 and hands c1 t3-5."""

ALMOST_BALANCED = Group(
    Cluster({"t0": 0, "t1": 7, "t2": 8}),
    {
        **{member: _member([]) for member in ("c0", "c3", "c4")},
        **{member: _member(["t0", "t1", "t2"]) for member in ("c1", "c2")},
        **{member: _member(["t0", "t1"]) for member in ("c5", "c6")},
        "c7": _member(["t2"]),
    },
)
"""Found by this property in a random run (Kafka 4.4): Kafka's passes over one topic at a time leave 3/3/4/3/2
under some member ids (3/3/3/3/3 under the original ones), ``uniform`` too in member-id order; ``uniform-even``
hands a partition along c7 -> c1 -> c5: 3 each."""

EQUAL_BALANCE_MORE_MOVES = Group(
    Cluster({"t0": 4, "t1": 3, "t2": 0, "t3": 4}),
    {
        "c0": _member([]),
        "c1": _member(["t0", "t1", "t2", "t3"], [("t1", 1)]),
        "c2": _member(["t1"], [("t1", 0)]),
        "c3": _member(["t0", "t1"]),
        "c4": _member(["t0"], [("t0", 0), ("t0", 1), ("t0", 2)]),
    },
)
"""Found by this property in a random run (Kafka 4.4): the same loads (4/3/2/2), Kafka's target under the original
ids moves 1 (c1's t1-1), ours 2 (c1's t1-1 and c4's t0-2); Kafka's under other ids, member-id order among them,
moves 2 as well: Kafka's HashMap order decides (:func:`test_equal_balance_more_moves_is_kafkas_own_order`)."""

SALTS = st.lists(st.integers(1, 2**32), min_size=7, max_size=7, unique=True)  # 8 runs: a tie is seen as one


def _before_kafka_17710(oracle: JavaOracle, request: pytest.FixtureRequest) -> None:
    """Kafka 3.8 and 3.9 ran another heterogeneous builder (before KAFKA-17710): a pin of the 4.0 builder fails."""
    if oracle.version_tuple < KAFKA_17710:
        request.applymarker(
            pytest.mark.xfail(strict=True, reason="pins Kafka 4.0's heterogeneous builder; 3.8/3.9 ran another")
        )


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True))
def test_uniform_exactly_kafka_under_aligned_ids(oracle: JavaOracle, group: Group) -> None:
    check_aligned(oracle, group)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=False))
@example(group=MORE_MOVEMENT)
@example(group=KAFKA_CHURNS)
@example(group=ALMOST_BALANCED)
@example(group=EQUAL_BALANCE_MORE_MOVES)
def test_uniform_heterogeneous_exactly_kafka_under_aligned_ids(oracle: JavaOracle, group: Group) -> None:
    check_aligned(oracle, group)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), salts=SALTS)
def test_uniform_kafka_where_order_free(oracle: JavaOracle, group: Group, salts: list[int]) -> None:
    check(oracle, group, salts, kafka_version=oracle.version)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=False), salts=SALTS)
@example(group=MORE_MOVEMENT, salts=[1, 2, 3, 4, 5, 6, 7])
@example(group=KAFKA_CHURNS, salts=[1, 2, 3, 4, 5, 6, 7])
@example(group=ALMOST_BALANCED, salts=[1, 2, 3, 4, 5, 6, 7])
def test_uniform_heterogeneous_kafka_where_order_free(oracle: JavaOracle, group: Group, salts: list[int]) -> None:
    check(oracle, group, salts, kafka_version=oracle.version)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=False))
@example(group=MORE_MOVEMENT)
@example(group=KAFKA_CHURNS)
@example(group=ALMOST_BALANCED)
@example(group=EQUAL_BALANCE_MORE_MOVES)
def test_uniform_even_at_least_as_even_as_kafka(oracle: JavaOracle, group: Group) -> None:
    check_even(oracle, group)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), salts=SALTS)
def test_uniform_before_kafka_18688_against_kafka_4_0(
    legacy_oracle: JavaOracle, group: Group, salts: list[int]
) -> None:
    """The 4.0.0 jar (the last before KAFKA-18688): exact under aligned ids, and where order-free."""
    assert legacy_oracle.version_tuple < KAFKA_18688, legacy_oracle.version
    check_aligned(legacy_oracle, group)
    check(legacy_oracle, group, salts, kafka_version=legacy_oracle.version)


def test_equal_balance_more_moves_is_kafkas_own_order(oracle: JavaOracle, request: pytest.FixtureRequest) -> None:
    """The open finding of the evening uniform (now uniform-even) was Kafka's order, not a rule: Kafka's target
    under the original ids moves 1 (m1's t1-1), and so does ``uniform`` given the same topic ids; under ids it
    iterates in member-id order both move 2 (c1's t1-1 and c4's t0-2), with the same loads."""
    _before_kafka_17710(oracle, request)
    group = EQUAL_BALANCE_MORE_MOVES
    topic_ids = _salted_ids(group, 0)
    ours = UniformAssignor(kafka_version=oracle.version).assign(
        with_topic_ids(group.cluster, topic_ids), group.subscriptions
    )
    original = kafka_exact(oracle, group, topic_ids)
    assert ours == original
    renamed, aligned_ids, back = aligned(group)
    in_order = UniformAssignor(kafka_version=oracle.version).assign(
        with_topic_ids(renamed.cluster, aligned_ids), renamed.subscriptions
    )
    assert in_order == kafka_exact(oracle, renamed, aligned_ids)
    in_order = {back[m]: a for m, a in in_order.items()}
    assert squares(in_order) == squares(original)
    assert (moved(group.subscriptions, original), moved(group.subscriptions, in_order)) == (1, 2)


_ID_CHARACTERS = string.ascii_letters + string.digits + "-_"


_NAMES = st.lists(st.text(_ID_CHARACTERS, min_size=21, max_size=21), min_size=40, max_size=40, unique=True)


def check_broker_like(oracle: JavaOracle, group: Group, names: list[str], salt: int) -> None:
    """Members renamed to ids like the ones Kafka's consumers send (22 characters of URL-safe base64), random topic
    ids: ``uniform`` given the topic ids is Kafka's target, whatever order the ids make."""
    renamed = {member: names[index] + "A" for index, member in enumerate(sorted(group.subscriptions))}
    copy = Group(group.cluster, {renamed[m]: s for m, s in group.subscriptions.items()})
    if _by_position(oracle, copy):
        aligned_copy, topic_ids, _back = aligned(copy)
        check_exact(oracle, aligned_copy, topic_ids)
        return
    check_exact(oracle, copy, _salted_ids(group, salt))


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=True), names=_NAMES, salt=st.integers(1, 2**32))
def test_uniform_exactly_kafka_under_broker_like_ids(
    oracle: JavaOracle, group: Group, names: list[str], salt: int
) -> None:
    check_broker_like(oracle, group, names, salt)


@settings(max_examples=EXAMPLES)
@given(group=server_groups(identical=False), names=_NAMES, salt=st.integers(1, 2**32))
def test_uniform_heterogeneous_exactly_kafka_under_broker_like_ids(
    oracle: JavaOracle, group: Group, names: list[str], salt: int
) -> None:
    check_broker_like(oracle, group, names, salt)


def test_worked_examples_of_kafka_3_9(oracle: JavaOracle) -> None:
    """The examples pinned in tests/consumer_group/test_uniform_heterogeneous_38.py (member ids Java's ``HashMap``
    iterates in sorted order, topic ids in the names' order) are the jar's output: Kafka 3.9.1's at 3.8/3.9, and
    ours is the jar's at every version."""
    from consumer_group.test_uniform_heterogeneous_38 import WORKED

    for group, expected in WORKED:
        _renamed, topic_ids, _back = aligned(group)
        java = kafka_exact(oracle, group, topic_ids)
        if oracle.version_tuple < KAFKA_17710:
            assert {m: [str(tp) for tp in a.partitions] for m, a in java.items()} == expected
        cluster = with_topic_ids(group.cluster, topic_ids)
        assert UniformAssignor(kafka_version=oracle.version).assign(cluster, group.subscriptions) == java
