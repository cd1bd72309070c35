"""Records to tables: fold ``__consumer_offsets`` records into ``membership``, ``actual`` and ``topics`` rows.

A classic group's snapshot is one GroupMetadata record (one completed generation, or a
static member's replacement within one). A KIP-848 group's snapshot is the group's state
after each type-6 record (a new target assignment epoch), folded from the records of
types 3-8 and 16 before it in offset order. Rows are plain dicts whose keys are the
tables' columns, so the pure-Python collector and the Spark job share them.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assignors._core.errors import ProtocolError
from assignors.offsets_topic._decode import decode_record
from assignors.offsets_topic._records import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRecordTombstone,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    GroupMetadata,
    GroupTombstone,
    LegacyConsumerGroupRecord,
    OffsetCommit,
    Record,
    TopicIdPartitions,
    UnknownRecord,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["HistoryBuilder", "TopicCounts", "timestamp_of"]

_log = logging.getLogger(__name__)


_ONE_TICK = dt.timedelta(microseconds=1)
_SERVER_ASSIGNORS = {"uniform": "uniform", "range": "consumer-range"}
"""KIP-848 server-side assignor names as the replay's strategy names (Kafka's default is uniform)."""


def _by_time(observation: tuple[dt.datetime | None, int]) -> tuple[bool, float, int]:
    """Observations without a time first, then by time (aware datetimes only)."""
    ts, count = observation
    return (ts is not None, ts.timestamp() if ts is not None else 0.0, count)


def _unknown_kind(record_type: int) -> str:
    """What Kafka writes under a key type this decoder does not read (``CoordinatorRecordType``)."""
    if 9 <= record_type <= 15:  # noqa: PLR2004 - KIP-932
        return "a share group's record, KIP-932"
    if record_type >= 17:  # noqa: PLR2004 - KIP-1071
        return "a streams group's record, KIP-1071, or a newer type"
    return "not a type Kafka 4.x writes"


def timestamp_of(ms: int) -> dt.datetime:
    """A record's CreateTime (ms since the epoch) as an aware UTC datetime."""
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


Row = dict[str, Any]


class TopicCounts:
    """User-supplied partition counts over time: per topic, the latest row with ``valid_from <= ts`` applies."""

    def __init__(self, rows: Iterable[tuple[str, int, dt.datetime | None]] = ()) -> None:
        self.rows: dict[str, list[tuple[dt.datetime | None, int]]] = {}
        for topic, partitions, valid_from in rows:
            self.rows.setdefault(topic, []).append((valid_from, partitions))
        for entries in self.rows.values():
            entries.sort(key=lambda e: _by_time((e[0], e[1])))

    def count_at(self, topic: str, ts: dt.datetime | None) -> int | None:
        count = None
        for valid_from, partitions in self.rows.get(topic, ()):
            if valid_from is None or (ts is not None and valid_from <= ts):
                count = partitions
        return count


@dataclass
class _ConsumerGroupState:
    """A KIP-848 group folded so far (the last value per record key)."""

    topic_names: dict[str, str] = field(default_factory=dict)
    members: dict[str, ConsumerGroupMemberMetadata] = field(default_factory=dict)
    targets: dict[str, tuple[TopicIdPartitions, ...]] = field(default_factory=dict)
    regexes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    current: dict[str, tuple[frozenset[_Partition], frozenset[_Partition]]] = field(default_factory=dict)
    """Each member's partitions at its last current-assignment record (type 8): assigned, pending revocation."""
    given_up: dict[_Partition, tuple[str, str, int]] = field(default_factory=dict)
    """Partitions a member gave up and nobody holds yet: the kind (``consumer_move``: its member revoked it, put it
    pending revocation; ``consumer_orphan``: its member left), who gave it up, and when (ms)."""


_Partition = tuple[str, int]
"""A KIP-848 partition as its records name it: (topic id, partition)."""


@dataclass
class HistoryBuilder:
    """Fold records, in offset order per ``__consumer_offsets`` partition, into table rows.

    Args:
        groups: keep only groups whose id matches (``re.search``).
        since: skip snapshots before this time.
        topic_counts: user-supplied partition counts; they become the ``topics`` table and
            a recorded partition beyond them is a warning.
        topic_ids: topic id (as Kafka prints it) -> name, for KIP-848 records without a
            type-4 record naming them (Kafka 4.1+ writes none).
        resolve_topic_ids: called once, when an id is named neither by a type-4 record nor by
            ``topic_ids``, for more names (``assignors collect`` reads the cluster's metadata).
    """

    groups: re.Pattern[str] | None = None
    since: dt.datetime | None = None
    topic_counts: TopicCounts = field(default_factory=TopicCounts)
    topic_ids: Mapping[str, str] = field(default_factory=dict)
    resolve_topic_ids: Callable[[], Mapping[str, str]] | None = None
    membership: list[Row] = field(default_factory=list)
    actual: list[Row] = field(default_factory=list)
    handovers: list[Row] = field(default_factory=list)
    """KIP-848 hand-overs (the ``handovers`` table): per partition that changed members, the seconds from its member
    giving it up (revoking it, or leaving) to the record of the member that got it."""
    stats: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    """Records decoded, by record class (``GroupMetadata``, ``ConsumerGroupMemberMetadata``, ... ``UnknownRecord``)."""
    unknown_types: Counter[int] = field(default_factory=Counter)
    """Records of key types this decoder does not read (share groups 9-15, streams groups 17+), by type."""
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    groups_seen: set[str] = field(default_factory=set)
    _observed: dict[str, list[tuple[dt.datetime | None, int]]] = field(default_factory=dict)
    _ids_by_name: dict[str, str] = field(default_factory=dict)
    """The topic id the records gave each topic name (the latest), for the ``topics`` table's ``topic_id``."""
    _unsized: set[str] = field(default_factory=set)
    _exact: set[str] = field(default_factory=set)
    _last_ts: dict[str, dt.datetime] = field(default_factory=dict)
    _consumer_groups: dict[str, _ConsumerGroupState] = field(default_factory=dict)
    _warned: set[str] = field(default_factory=set)

    def add_raw(self, key: bytes, value: bytes | None, timestamp_ms: int | None, where: str = "") -> Record | None:
        """Decode and add one record; an undecodable one is counted and kept in ``errors`` (None returned)."""
        try:
            record = decode_record(key, value)
        except ProtocolError as error:
            self.stats["undecodable"] += 1
            self.errors.append(f"{where or 'record'}: {error}")
            return None
        self.add(record, timestamp_ms)
        return record

    def add(self, record: Record, timestamp_ms: int | None) -> None:
        """Add one decoded record written at ``timestamp_ms`` (its CreateTime; None when unknown)."""
        self.stats["records"] += 1
        self.kinds[type(record).__name__] += 1
        if isinstance(record, UnknownRecord):
            self.stats["other record types"] += 1
            self.unknown_types[record.record_type] += 1
            self._warn_once(
                f"type:{record.record_type}",
                f"records of key type {record.record_type} ({_unknown_kind(record.record_type)}) are not read; "
                "they were counted and skipped",
            )
            return
        if isinstance(record, OffsetCommit):
            self.stats["offset commits"] += 1
            return
        if self.groups is not None and not self.groups.search(record.group_id):
            self.stats["filtered out"] += 1
            return
        self.groups_seen.add(record.group_id)
        if isinstance(record, GroupTombstone):
            self.stats["group tombstones"] += 1
        elif isinstance(record, GroupMetadata):
            self._classic(record, timestamp_ms)
        elif isinstance(record, LegacyConsumerGroupRecord):
            self.stats["legacy KIP-848 records"] += 1
            self._warn_once(
                "legacy",
                "KIP-848 records that do not decode with Kafka 3.8+ layouts (Kafka 3.7's early-access layout) "
                f"were skipped, first in group {record.group_id!r}: {record.reason}",
            )
        else:
            self._consumer_group(record, timestamp_ms)

    # --- classic groups -----------------------------------------------------------------

    def _classic(self, record: GroupMetadata, timestamp_ms: int | None) -> None:
        self.stats["group metadata"] += 1
        if not record.members:  # an Empty group: a new one is written with protocol type "" before its first join
            self.stats["empty generations"] += 1
            return
        if record.protocol_type != "consumer":
            self.stats["non-consumer groups"] += 1
            return
        broken = next((m.error for m in record.members if m.error is not None), None)
        if broken is not None:
            self.stats["snapshots with undecodable members"] += 1
            self.errors.append(f"group {record.group_id!r} generation {record.generation}: {broken}")
            return
        ms = timestamp_ms if timestamp_ms is not None else record.current_state_timestamp
        ts = self._snapshot_ts(record.group_id, ms)
        if ts is None:
            return
        self.stats["snapshots"] += 1
        for member in sorted(record.members, key=lambda m: m.member_id):
            subscription = member.subscription
            topics = sorted(subscription.topics) if subscription is not None else []
            assigned = sorted(member.assignment.partitions) if member.assignment is not None else []
            self.membership.append(
                {
                    "group_id": record.group_id,
                    "snapshot_ts": ts,
                    "member_id": member.member_id,
                    "topics": topics,
                    "group_instance_id": member.group_instance_id,
                    "rack_id": subscription.rack_id if subscription is not None else None,
                }
            )
            self.actual.append(
                {
                    "group_id": record.group_id,
                    "snapshot_ts": ts,
                    "generation": record.generation,
                    "protocol": record.protocol,
                    "leader": record.leader,
                    "member_id": member.member_id,
                    "group_instance_id": member.group_instance_id,
                    "assigned": [str(tp) for tp in assigned],
                }
            )
            owned = subscription.owned_partitions if subscription is not None else ()
            self._observe(record.group_id, ts, [(tp.topic, tp.partition) for tp in (*assigned, *owned)], topics)

    def _snapshot_ts(self, group: str, ms: int | None) -> dt.datetime | None:
        """The snapshot's time, strictly after the group's previous one (a tie moves 1 microsecond on)."""
        if ms is None or ms < 0:
            self.stats["snapshots without a timestamp"] += 1
            self._warn_once("no-ts", f"records without a timestamp were skipped, first in group {group!r}")
            return None
        ts = timestamp_of(ms)
        if self.since is not None and ts < self.since:
            self.stats["before --since"] += 1
            return None
        last = self._last_ts.get(group)
        if last is not None and ts <= last:
            ts = last + _ONE_TICK
        self._last_ts[group] = ts
        return ts

    def _observe(
        self, group: str, ts: dt.datetime, partitions: Iterable[tuple[str, int]], subscribed: Iterable[str]
    ) -> None:
        highest: dict[str, int] = {}
        for topic, partition in partitions:
            highest[topic] = max(highest.get(topic, -1), partition)
            supplied = self.topic_counts.count_at(topic, ts)
            if supplied is not None and partition >= supplied:
                self._warn_once(
                    f"beyond:{topic}:{supplied}",
                    f"group {group!r} at {ts.isoformat()} was assigned {topic}-{partition}, beyond the "
                    f"{supplied} partitions given for {topic!r}: the counts given are too low for that time",
                )
        for topic, partition in highest.items():
            self._observed.setdefault(topic, []).append((ts, partition + 1))
        self._unsized.update(t for t in subscribed if t not in highest)

    # --- KIP-848 groups -----------------------------------------------------------------

    def _consumer_group(self, record: Record, timestamp_ms: int | None) -> None:
        self.stats["KIP-848 records"] += 1
        group = getattr(record, "group_id", "")
        state = self._consumer_groups.setdefault(group, _ConsumerGroupState())
        if isinstance(record, ConsumerGroupRecordTombstone):
            self._tombstone(state, record, timestamp_ms)
        elif isinstance(record, ConsumerGroupPartitionMetadata):
            state.topic_names = {t.topic_id: t.topic_name for t in record.topics}
            ts = timestamp_of(timestamp_ms) if timestamp_ms is not None and timestamp_ms >= 0 else None
            for topic in record.topics:
                self._observed.setdefault(topic.topic_name, []).append((ts, topic.num_partitions))
                self._exact.add(topic.topic_name)
        elif isinstance(record, ConsumerGroupMemberMetadata):
            state.members[record.member_id] = record
        elif isinstance(record, ConsumerGroupTargetAssignmentMember):
            state.targets[record.member_id] = record.partitions
        elif isinstance(record, ConsumerGroupRegularExpression):
            state.regexes[record.regular_expression] = record.topics
        elif isinstance(record, ConsumerGroupTargetAssignmentMetadata):
            self._consumer_group_snapshot(group, state, record.assignment_epoch, timestamp_ms)
        elif isinstance(record, ConsumerGroupCurrentMemberAssignment):
            self._hand_over(state, record, timestamp_ms)
        elif not isinstance(record, ConsumerGroupMetadata):
            msg = f"unexpected record {record!r}"  # pragma: no cover - every record type is handled above
            raise TypeError(msg)

    def _hand_over(
        self, state: _ConsumerGroupState, record: ConsumerGroupCurrentMemberAssignment, ms: int | None
    ) -> None:
        """A member's current assignment (type 8): what it revoked is given up now; what it got that another gave up
        is a hand-over, from then to now (Kafka's GroupMetadataManager writes one such record per member epoch)."""
        assigned = frozenset((e.topic_id, p) for e in record.assigned_partitions for p in e.partitions)
        pending = frozenset((e.topic_id, p) for e in record.partitions_pending_revocation for p in e.partitions)
        member = record.member_id
        had, had_pending = state.current.get(member, (frozenset(), frozenset()))
        state.current[member] = (assigned, pending)
        if ms is None or ms < 0:
            return
        # told to revoke (pending revocation), or released without that step: given up now
        for partition in sorted((pending - had_pending) | ((had | had_pending) - assigned - pending)):
            state.given_up.setdefault(partition, ("consumer_move", member, ms))
        for partition in sorted(assigned - had):
            found = state.given_up.pop(partition, None)
            if found is None or found[1] == member:
                continue
            kind, _, since = found
            at = timestamp_of(ms)
            if self.since is not None and at < self.since:
                continue
            self.handovers.append(
                {
                    "group_id": record.group_id,
                    "assigned_ts": at,
                    "member_id": member,
                    "partition": f"{self._topic_name(state, partition[0], record.group_id)}-{partition[1]}",
                    "kind": kind,
                    "seconds": (ms - since) / 1000,
                }
            )

    def _tombstone(self, state: _ConsumerGroupState, record: ConsumerGroupRecordTombstone, ms: int | None) -> None:
        member = record.member_id or ""
        if record.record_type == 5:  # noqa: PLR2004 - ConsumerGroupMemberMetadata
            state.members.pop(member, None)
        elif record.record_type == 7:  # noqa: PLR2004 - ConsumerGroupTargetAssignmentMember
            state.targets.pop(member, None)
        elif record.record_type == 8:  # noqa: PLR2004 - ConsumerGroupCurrentMemberAssignment: the member left
            held, pending = state.current.pop(member, (frozenset(), frozenset()))
            for partition in sorted(held | pending):
                if ms is not None and ms >= 0:
                    state.given_up.setdefault(partition, ("consumer_orphan", member, ms))
        elif record.record_type == 16:  # noqa: PLR2004 - ConsumerGroupRegularExpression
            state.regexes.pop(record.regular_expression or "", None)
        elif record.record_type == 4:  # noqa: PLR2004 - ConsumerGroupPartitionMetadata
            state.topic_names = {}

    def _topic_name(self, state: _ConsumerGroupState, topic_id: str, group: str) -> str:
        name = state.topic_names.get(topic_id) or self.topic_ids.get(topic_id)
        if name is None and self.resolve_topic_ids is not None:
            resolve, self.resolve_topic_ids = self.resolve_topic_ids, None  # asked once
            self.topic_ids = {**resolve(), **self.topic_ids}  # the names given win
            name = self.topic_ids.get(topic_id)
        if name is None:
            self._warn_once(
                f"id:{topic_id}",
                f"topic id {topic_id} (group {group!r}) has no name in the records; give its name "
                "(a topic-ids file or the live cluster's metadata), it is kept as the id",
            )
            return topic_id
        self._ids_by_name[name] = topic_id
        return name

    def _consumer_group_snapshot(self, group: str, state: _ConsumerGroupState, epoch: int, ms: int | None) -> None:
        if not state.members:
            self.stats["empty generations"] += 1
            return
        ts = self._snapshot_ts(group, ms)
        if ts is None:
            return
        self.stats["snapshots"] += 1
        assignors = Counter(m.server_assignor or "uniform" for m in state.members.values())
        server = min(assignors, key=lambda name: (-assignors[name], name))
        protocol = _SERVER_ASSIGNORS.get(server, server)
        for member_id in sorted(state.members):
            member = state.members[member_id]
            topics = set(member.subscribed_topic_names)
            if member.subscribed_topic_regex is not None:
                topics.update(state.regexes.get(member.subscribed_topic_regex, ()))
            assigned = sorted(
                (self._topic_name(state, entry.topic_id, group), partition)
                for entry in state.targets.get(member_id, ())
                for partition in entry.partitions
            )
            self.membership.append(
                {
                    "group_id": group,
                    "snapshot_ts": ts,
                    "member_id": member_id,
                    "topics": sorted(topics),
                    "group_instance_id": member.instance_id,
                    "rack_id": member.rack_id,
                }
            )
            self.actual.append(
                {
                    "group_id": group,
                    "snapshot_ts": ts,
                    "generation": epoch,
                    "protocol": protocol,
                    "leader": None,
                    "member_id": member_id,
                    "group_instance_id": member.instance_id,
                    "assigned": [f"{topic}-{partition}" for topic, partition in assigned],
                }
            )
            self._observe(group, ts, assigned, topics)

    # --- output -------------------------------------------------------------------------

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(message)
            _log.warning("%s", message)

    def drain(self) -> tuple[list[Row], list[Row]]:
        """The membership and actual rows added since the last call (for incremental writing)."""
        membership, actual = self.membership, self.actual
        self.membership, self.actual = [], []
        return membership, actual

    def drain_handovers(self) -> list[Row]:
        """The ``handovers`` rows added since the last call."""
        rows, self.handovers = self.handovers, []
        return rows

    def topics(self) -> list[Row]:
        """The ``topics`` table: the counts given, else what the records reveal.

        Without a given count, a topic's rows are the running maximum of the partitions the
        records show (owned or assigned partitions are a lower bound; a KIP-848 type-4 record
        gives the count), one row each time it grows, the first valid from always. A topic that
        KIP-848 records named by id carries that id (``topic_id``) on every row.
        """
        rows = self._topic_rows()
        for row in rows:
            row["topic_id"] = self._ids_by_name.get(row["topic"])
        return rows

    def _topic_rows(self) -> list[Row]:
        rows: list[Row] = []
        for topic in sorted(set(self._observed) | self._unsized | set(self.topic_counts.rows)):
            if topic in self.topic_counts.rows:
                rows.extend(
                    {"topic": topic, "partitions": count, "valid_from": valid_from}
                    for valid_from, count in self.topic_counts.rows[topic]
                )
                continue
            highest: dict[dt.datetime | None, int] = {}
            for ts, count in self._observed.get(topic, ()):
                highest[ts] = max(highest.get(ts, 0), count)
            best = 0
            for ts, count in sorted(highest.items(), key=_by_time):
                if count > best:
                    rows.append({"topic": topic, "partitions": count, "valid_from": ts if best else None})
                    best = count
        return rows

    def lower_bound_topics(self) -> list[str]:
        """Topics whose count comes only from assigned or owned partitions (exact only if every partition was seen)."""
        return sorted(t for t in self._observed if t not in self._exact and t not in self.topic_counts.rows)

    def unsized_topics(self) -> list[str]:
        """Topics subscribed to whose partition count the records do not show (give them with ``--topics``)."""
        return sorted(t for t in self._unsized if t not in self._observed and t not in self.topic_counts.rows)
