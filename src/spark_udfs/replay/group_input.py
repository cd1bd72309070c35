"""One group's input, checked: its membership rows, the topics' partition counts over time, and its snapshots.

:func:`group_snapshots` groups a group's rows (:class:`MemberRow`) into snapshots in time order, with
each subscribed topic's partition count from :class:`TopicHistory`, and checks everything the
replay (:mod:`spark_udfs.replay.group_replay`) relies on: a fault raises :class:`GroupDataError`
naming the snapshot, member or topic.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assignors import AssignorError, Subscription
from assignors.tables import is_topic_id
from spark_udfs.replay.values import is_missing

_WITH_ID = 3  # a topics row's fields before its optional topic_id

if TYPE_CHECKING:
    import datetime as dt

__all__ = ["GroupDataError", "MemberRow", "Snapshot", "TopicHistory", "check_group_id", "group_snapshots"]


class GroupDataError(AssignorError, ValueError):
    """A group's input cannot be replayed; the message says what and where."""


@dataclass(frozen=True, slots=True)
class MemberRow:
    """One membership row of a group."""

    snapshot_ts: dt.datetime | None
    member_id: str | None
    topics: tuple[str, ...] | None
    group_instance_id: str | None = None
    rack_id: str | None = None


class TopicHistory:
    """Partition counts over time: a snapshot at ``ts`` uses, per topic, the latest row with ``valid_from <= ts``.

    A row without ``valid_from`` holds from the beginning of time. A row may carry the topic's id (a fourth field,
    the ``topics`` table's ``topic_id``): the id of the latest row that has one holds from that row on.
    """

    def __init__(
        self,
        rows: Iterable[
            tuple[str | None, int | None, dt.datetime | None]
            | tuple[str | None, int | None, dt.datetime | None, str | None]
        ],
        *,
        invalid: Mapping[str, str] | None = None,
    ) -> None:
        # A topic whose row holds a value that is not valid (a typo in a CSV): the message naming it is every
        # subscribing group's error, whatever the time (spark_udfs.tables.csv_checks).
        self.invalid: dict[str, str] = dict(invalid or {})
        by_topic: dict[str, dict[tuple[int, Any], set[int | None]]] = {}
        ids: dict[str, dict[tuple[int, Any], set[str]]] = {}
        for row in rows:
            topic, partitions, valid_from = row[0], row[1], row[2]
            if topic is None:
                continue
            # (0, -) sorts before any (1, time): rows without valid_from come first.
            when = (0, 0) if valid_from is None else (1, valid_from)
            by_topic.setdefault(topic, {}).setdefault(when, set()).add(partitions)
            topic_id = row[_WITH_ID] if len(row) > _WITH_ID else None  # the 4-field form
            if not is_missing(topic_id):
                if not is_topic_id(topic_id):
                    self.invalid.setdefault(
                        topic, f"topic_id {topic_id!r} is not a Kafka topic id (22 characters of URL-safe base64)"
                    )
                    continue
                ids.setdefault(topic, {}).setdefault(when, set()).add(topic_id)
        self._id_times: dict[str, list[tuple[int, Any]]] = {}
        self._ids: dict[str, list[str]] = {}
        for topic, named in ids.items():
            named_at = sorted(named)
            self._id_times[topic] = named_at
            self._ids[topic] = [min(named[t]) for t in named_at]  # two ids at one time: the smallest, not row order
        self._times: dict[str, list[tuple[int, Any]]] = {}
        self._counts: dict[str, list[int | None]] = {}
        # Rows with one topic and valid_from but different counts: which one holds would depend on
        # Spark's row order, so a snapshot they apply to is an input error (see clash_at).
        self._clashes: dict[str, dict[int, list[int | None]]] = {}
        for topic, entries in by_topic.items():
            times = sorted(entries)
            self._times[topic] = times
            self._counts[topic] = [min(entries[t], key=_count_order) for t in times]
            clashes = {i: sorted(entries[t], key=_count_order) for i, t in enumerate(times) if len(entries[t]) > 1}
            if clashes:
                self._clashes[topic] = clashes

    def clash_at(self, topic: str, ts: dt.datetime) -> list[int | None] | None:
        """The different counts of the rows that apply to ``topic`` at ``ts``, when there are several, else None."""
        clashes = self._clashes.get(topic)
        if clashes is None:
            return None
        return clashes.get(bisect_right(self._times[topic], (1, ts)) - 1)

    def id_at(self, topic: str, ts: dt.datetime) -> str | None:
        """The id of ``topic`` at ``ts`` (None when no row with an id applies yet)."""
        times = self._id_times.get(topic)
        if times is None:
            return None
        index = bisect_right(times, (1, ts))
        return self._ids[topic][index - 1] if index else None

    def count_at(self, topic: str, ts: dt.datetime) -> tuple[bool, int | None]:
        """``(known, count)`` of ``topic`` at ``ts``; ``known`` is False when no row applies yet."""
        times = self._times.get(topic)
        if times is None:
            return False, None
        index = bisect_right(times, (1, ts))
        if index == 0:
            return False, None
        return True, self._counts[topic][index - 1]


def _count_order(count: int | None) -> tuple[bool, int]:
    return (count is None, count or 0)


@dataclass(slots=True)
class Snapshot:
    ts: dt.datetime
    members: dict[str, tuple[str, Subscription]]  # identity -> (member_id, subscription)
    counts: dict[str, int]
    key: tuple[Any, ...]
    topic_ids: dict[str, str]  # the subscribed topics' ids, where the topics table gives them
    # Built once by the first strategy that rebalances here (the same for every strategy):
    identities: dict[str, str] | None = None  # member_id -> identity
    subscriptions: dict[str, Subscription] | None = None  # member_id -> subscription
    by_identity: dict[str, Subscription] | None = None  # identity -> subscription

    def members_by_id(self) -> tuple[dict[str, str], dict[str, Subscription], dict[str, Subscription]]:
        """``(member_id -> identity, member_id -> subscription, identity -> subscription)``, built once."""
        if self.identities is None or self.subscriptions is None or self.by_identity is None:
            self.identities = {member_id: identity for identity, (member_id, _) in self.members.items()}
            self.subscriptions = dict(self.members.values())
            self.by_identity = {identity: s for identity, (_, s) in self.members.items()}
        return self.identities, self.subscriptions, self.by_identity


def group_snapshots(rows: Sequence[MemberRow], history: TopicHistory) -> list[Snapshot]:
    """Group rows into snapshots in time order, checking everything the replay relies on.

    Raises:
        GroupDataError: naming the snapshot, member or topic at fault.
    """
    by_ts: dict[Any, list[MemberRow]] = {}
    for row in rows:
        if is_missing(row.snapshot_ts):
            msg = f"a member row has a null snapshot_ts (member_id={row.member_id!r})"
            raise GroupDataError(msg)
        by_ts.setdefault(row.snapshot_ts, []).append(row)
    snapshots: list[Snapshot] = []
    last_counts: dict[str, int] = {}
    # A member's row repeats from one snapshot to the next: a row already read gives its identity and subscription
    # again (one Subscription object, built and checked once); only the duplicate checks depend on the snapshot.
    known: dict[tuple[Any, ...], tuple[str, str, Subscription]] = {}
    for ts in sorted(by_ts):
        members: dict[str, tuple[str, Subscription]] = {}
        seen_ids: set[str] = set()
        counts: dict[str, int] = {}
        for row in by_ts[ts]:
            identity, member_id, subscription = _known_member(row, ts, members, seen_ids, known)
            seen_ids.add(member_id)
            for topic in subscription.topics:
                if topic not in counts:
                    counts[topic] = _count(history, topic, ts, member_id, last_counts)
            members[identity] = (member_id, subscription)
        last_counts.update(counts)
        topic_ids = {topic: topic_id for topic in counts if (topic_id := history.id_at(topic, ts)) is not None}
        key = (
            tuple(sorted((i, s.topics, s.rack_id) for i, (_, s) in members.items())),
            tuple(sorted(counts.items())),
            tuple(sorted(topic_ids.items())),  # a topic recreated under a new id is new metadata
        )
        snapshots.append(Snapshot(ts, members, counts, key, topic_ids))
    return snapshots


def _known_member(
    row: MemberRow,
    ts: Any,
    members: Mapping[str, object],
    seen_ids: set[str],
    known: dict[tuple[Any, ...], tuple[str, str, Subscription]],
) -> tuple[str, str, Subscription]:
    """:func:`_member`, reusing what an equal row gave before: only its duplicate checks run again.

    A row equal to one read before passed every check of :func:`_member` that reads the row alone; the two that read
    the snapshot (a member id or an identity seen twice) run here in the same order, with the same messages.
    """
    key = (row.member_id, row.topics, row.group_instance_id, row.rack_id)
    try:
        found = known.get(key)
    except TypeError:  # a value that does not hash: read the row as it comes
        return _member(row, ts, members, seen_ids)
    if found is None or type(key[0]) is not str:
        found = _member(row, ts, members, seen_ids)
        known[key] = found
        return found
    identity, member_id, _ = found
    _check_unique(ts, member_id, identity, members, seen_ids)
    return found


def _check_unique(ts: Any, member_id: str, identity: str, members: Mapping[str, object], seen_ids: set[str]) -> None:
    """A member id seen once in a snapshot, and an identity (its group instance id, else its id) used once."""
    if member_id in seen_ids:
        msg = f"snapshot {ts}: member {member_id!r} appears twice"
        raise GroupDataError(msg)
    if identity in members:
        msg = f"snapshot {ts}: group_instance_id {identity!r} is used by two members"
        raise GroupDataError(msg)


def _member(
    row: MemberRow, ts: Any, members: Mapping[str, object], seen_ids: set[str]
) -> tuple[str, str, Subscription]:
    """A member row's identity, member id and subscription, checked."""
    member_id = row.member_id
    if is_missing(member_id) or not isinstance(member_id, str) or not member_id:
        msg = f"snapshot {ts}: a member row has a null or empty member_id"
        raise GroupDataError(msg)
    instance = None if is_missing(row.group_instance_id) else row.group_instance_id
    if instance == "":
        msg = f"snapshot {ts}: member {member_id!r} has an empty group_instance_id"
        raise GroupDataError(msg)
    identity = instance if instance is not None else member_id
    _check_unique(ts, member_id, identity, members, seen_ids)
    topics = () if row.topics is None else tuple(row.topics)
    for topic in topics:
        if is_missing(topic) or not isinstance(topic, str) or not topic:
            msg = f"snapshot {ts}: member {member_id!r} subscribes to a null or empty topic name"
            raise GroupDataError(msg)
    rack = None if is_missing(row.rack_id) or row.rack_id == "" else row.rack_id
    return identity, member_id, Subscription(topics, group_instance_id=instance, rack_id=rack)


def _count(history: TopicHistory, topic: str, ts: Any, member_id: str, last: Mapping[str, int]) -> int:
    invalid = history.invalid.get(topic)
    if invalid is not None:
        msg = f"member {member_id!r} subscribes to topic {topic!r}, whose row is not valid: {invalid}"
        raise GroupDataError(msg)
    known, count = history.count_at(topic, ts)
    if not known:
        msg = f"snapshot {ts}: member {member_id!r} subscribes to topic {topic!r}, which has no partition count then"
        raise GroupDataError(msg)
    if count is None or is_missing(count):
        msg = f"snapshot {ts}: topic {topic!r} has a null partition count"
        raise GroupDataError(msg)
    clash = history.clash_at(topic, ts)
    if clash is not None:
        counts = ", ".join("null" if c is None else str(c) for c in clash)
        msg = f"snapshot {ts}: topic {topic!r} has rows with one valid_from and different partition counts ({counts})"
        raise GroupDataError(msg)
    count = int(count)
    if count <= 0:
        msg = f"snapshot {ts}: topic {topic!r} has {count} partitions; a count must be positive"
        raise GroupDataError(msg)
    previous = last.get(topic)
    if previous is not None and count < previous:
        msg = f"snapshot {ts}: topic {topic!r} shrinks from {previous} to {count} partitions"
        raise GroupDataError(msg)
    return count


def check_group_id(group_id: str | None) -> str:
    if group_id is None or is_missing(group_id) or group_id == "":
        msg = "group_id is null or empty"
        raise GroupDataError(msg)
    return group_id
