"""``assignors collect --via admin``: the groups' history through the Admin API, polled (DESCRIBE on the groups).

Every ``--interval`` seconds: ``ListGroups`` (the consumer groups this principal may describe), then
``describe_consumer_groups`` (confluent-kafka's AdminClient: Kafka's ``DescribeGroups`` for a classic group,
``ConsumerGroupDescribe`` for a KIP-848 one), and the topics' partition counts from the cluster's metadata. A group
that is ``Stable`` and whose members or assignments differ from its last recorded snapshot gives a new snapshot: one
``membership`` and one ``actual`` row per member, as ``kafka-consumer-groups.sh --describe --members --verbose``
shows them.

What confluent-kafka 2.16's descriptions do not carry, and how the tables have it instead:

- the generation: Kafka's ``DescribeGroups`` response has none (a classic group's generation is in
  ``__consumer_offsets`` only), and the Python client does not expose ``ConsumerGroupDescribe``'s group and
  assignment epochs. ``generation`` is the count of this group's snapshots recorded by this route (1, 2, ...),
  continued across runs into the same ``--out``;
- the members' subscriptions (the classic member metadata, KIP-848's ``SubscribedTopicNames``): ``topics`` is the
  union of the topics assigned in the group at that snapshot, exact when the members subscribe to the same topics;
- the classic group's leader and the members' racks: null.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from assignors._core.errors import UsageError
from assignors.collect._client import ClientEvents
from assignors.collect._kafka import connect
from assignors.collect._tables import Progress

if TYPE_CHECKING:
    from assignors.collect._tables import TableWriter

__all__ = ["DEFAULT_INTERVAL", "AdminHistory", "collect_admin"]

DEFAULT_INTERVAL = 5.0
"""Seconds between two polls of ``--via admin --follow``: a group's state that lasts less may not be seen."""

_SERVER_ASSIGNORS = {"uniform": "uniform", "range": "consumer-range"}
_ONE_TICK = dt.timedelta(microseconds=1)
Row = dict[str, Any]
Signature = tuple[str, tuple[tuple[str, str | None, tuple[str, ...]], ...]]


@dataclass
class AdminHistory:
    """The snapshots of the groups' descriptions, as the tables' rows (written as :class:`TableWriter` drains them)."""

    groups: re.Pattern[str] | None = None
    stats: Counter[str] = field(default_factory=Counter)
    groups_seen: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    membership: list[Row] = field(default_factory=list)
    actual: list[Row] = field(default_factory=list)
    _last: dict[str, Signature] = field(default_factory=dict)
    _generation: dict[str, int] = field(default_factory=dict)
    _last_ts: dict[str, dt.datetime] = field(default_factory=dict)
    _counts: dict[str, list[tuple[dt.datetime | None, int]]] = field(default_factory=dict)
    _warned: set[str] = field(default_factory=set)
    _assigned: set[str] = field(default_factory=set)
    """Topics assigned in a snapshot: the only ones the topics table holds."""

    def resume(self, actual: list[Row], topics: list[Row]) -> None:
        """Go on from the tables a previous run wrote: each group's last snapshot and count, the topics' counts."""
        last: dict[str, dt.datetime] = {}
        for row in actual:
            group, ts = row["group_id"], row["snapshot_ts"]
            self._generation[group] = max(self._generation.get(group, 0), row["generation"])
            if group not in last or ts > last[group]:
                last[group] = ts
        for group, ts in last.items():
            rows = [r for r in actual if r["group_id"] == group and r["snapshot_ts"] == ts]
            protocol = rows[0]["protocol"] if rows else ""
            self._last[group] = _signature(
                protocol, [(r["member_id"], r["group_instance_id"], tuple(r["assigned"])) for r in rows]
            )
            self._last_ts[group] = ts
        for row in topics:
            self._counts.setdefault(row["topic"], []).append((row["valid_from"], row["partitions"]))
            self._assigned.add(row["topic"])
        self.stats["resumed snapshots"] = sum(
            len({r["snapshot_ts"] for r in actual if r["group_id"] == g}) for g in last
        )

    @property
    def groups_recorded(self) -> int:
        """Groups with a snapshot in the tables (this run's and the runs it continues)."""
        return len(self._generation)

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(message)

    def observe_counts(self, counts: dict[str, int], now: dt.datetime) -> None:
        """The topics' partition counts at this poll: a row when a count is new or changed."""
        for topic, count in sorted(counts.items()):
            rows = self._counts.setdefault(topic, [])
            if not rows:
                rows.append((None, count))
            elif rows[-1][1] != count:
                rows.append((now, count))

    def add(self, description: Any, now: dt.datetime) -> bool:
        """One group's description at ``now``: a snapshot when it is Stable and changed; whether one was taken."""
        group: str = description.group_id
        self.groups_seen.add(group)
        self.stats["descriptions"] += 1
        state = str(getattr(description.state, "name", description.state)).upper()
        if state != "STABLE" or not description.members:
            self.stats[f"groups not stable ({state.lower()})"] += 1
            return False
        consumer = str(getattr(getattr(description, "type", None), "name", "")).upper() == "CONSUMER"
        assignor = str(description.partition_assignor or "")
        protocol = _SERVER_ASSIGNORS.get(assignor, assignor) if consumer else assignor
        members = sorted(
            (
                str(member.member_id),
                member.group_instance_id or None,
                tuple(
                    f"{topic}-{number}"
                    for topic, number in sorted(
                        (tp.topic, tp.partition)
                        for tp in (member.assignment.topic_partitions if member.assignment else [])
                    )
                ),
            )
            for member in description.members
        )
        signature = _signature(protocol, members)
        if self._last.get(group) == signature:
            self.stats["unchanged"] += 1
            return False
        self._last[group] = signature
        generation = self._generation.get(group, 0) + 1
        self._generation[group] = generation
        last = self._last_ts.get(group)
        ts = now if last is None or now > last else last + _ONE_TICK
        self._last_ts[group] = ts
        topics = sorted({p.rsplit("-", 1)[0] for _, _, assigned in members for p in assigned})
        self._assigned.update(topics)
        for topic in topics:
            if topic not in self._counts:
                self.warn_once(
                    f"uncounted:{topic}",
                    f"no partition count for topic {topic!r}: the cluster's metadata does not show it (ask for "
                    f"DESCRIBE on TOPIC {topic}, or give the counts to evaluate with --topics)",
                )
        for member_id, instance, assigned in members:
            self.membership.append(
                {
                    "group_id": group,
                    "snapshot_ts": ts,
                    "member_id": member_id,
                    "topics": topics,
                    "group_instance_id": instance,
                    "rack_id": None,
                }
            )
            self.actual.append(
                {
                    "group_id": group,
                    "snapshot_ts": ts,
                    "generation": generation,
                    "protocol": protocol,
                    "leader": None,
                    "member_id": member_id,
                    "group_instance_id": instance,
                    "assigned": list(assigned),
                }
            )
        self.stats["snapshots"] += 1
        self.stats["records"] += 1
        return True

    def drain(self) -> tuple[list[Row], list[Row]]:
        membership, actual = self.membership, self.actual
        self.membership, self.actual = [], []
        return membership, actual

    def topics(self) -> list[Row]:
        return [
            {"topic": topic, "partitions": count, "valid_from": since}
            for topic, rows in sorted(self._counts.items())
            if topic in self._assigned
            for since, count in rows
        ]


def _signature(protocol: str, members: list[tuple[str, str | None, tuple[str, ...]]]) -> Signature:
    return protocol, tuple(sorted(members))


def _now() -> dt.datetime:
    return dt.datetime.now(tz=dt.UTC)


def _poll_once(admin: Any, history: AdminHistory, timeout: float) -> int:
    """One poll: list the groups, describe the consumer groups, read the topics' counts; snapshots taken."""
    from concurrent.futures import wait

    from confluent_kafka import KafkaException

    metadata = admin.list_topics(timeout=timeout)  # first: a cluster that does not answer raises here
    history.observe_counts(
        {name: len(topic.partitions) for name, topic in metadata.topics.items() if topic.error is None},
        _now(),
    )
    listed = admin.list_consumer_groups(request_timeout=timeout).result(timeout=timeout + 5)
    for error in listed.errors or ():
        history.warn_once(f"list:{error}", f"listing groups: {error}")
    ids = sorted(
        listing.group_id
        for listing in listed.valid or ()
        if not listing.is_simple_consumer_group and (history.groups is None or history.groups.search(listing.group_id))
    )
    if not ids:
        return 0
    futures = admin.describe_consumer_groups(ids, request_timeout=timeout)
    wait(list(futures.values()), timeout=timeout + 5)
    taken = 0
    for group, future in sorted(futures.items()):
        try:
            description = future.result(timeout=0)
        except KafkaException as error:
            kafka_error = error.args[0]
            if kafka_error.name() == "GROUP_AUTHORIZATION_FAILED":
                history.warn_once(
                    f"denied:{group}",
                    f"group {group!r}: not allowed to describe it (ask for DESCRIBE on GROUP {group})",
                )
            else:
                history.warn_once(f"error:{group}", f"group {group!r}: {kafka_error.str()}")
            continue
        except Exception as error:  # noqa: BLE001 - a future that did not finish in time: the next poll asks again
            history.warn_once(f"late:{group}", f"group {group!r}: no description within {timeout:g} s ({error!r})")
            continue
        taken += history.add(description, _now())
    return taken


def collect_admin(  # noqa: PLR0913 - the command's options
    settings: dict[str, str],
    history: AdminHistory,
    writer: TableWriter,
    *,
    follow: bool = False,
    interval: float = DEFAULT_INTERVAL,
    progress: TextIO | None = None,
    timeout: float = 10.0,
    announce: str = "",
) -> None:
    """Poll the groups' descriptions into the tables: once, or every ``interval`` seconds with ``follow``.

    With ``follow``, a cluster lost between two polls is waited for (a line says so); without, it is one line.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    events = ClientEvents()
    try:
        admin = AdminClient({**settings, **events.config()})
    except (KafkaException, ValueError) as error:
        first = error.args[0] if error.args else error
        msg = f"--properties: {first.str() if hasattr(first, 'str') else first}"
        raise UsageError(msg) from None
    out = progress or sys.stderr
    meter = Progress(out)
    connect(admin, settings, events, timeout)
    out.write(announce)
    finished = False
    try:
        down = False
        while True:
            began = time.monotonic()
            try:
                _poll_once(admin, history, timeout)
                if down:
                    out.write("  the cluster answers again: polling goes on\n")
                down = False
            except (KafkaException, TimeoutError):  # a future not done in time is concurrent.futures' TimeoutError
                admin.poll(0.05)
                if not follow:
                    raise UsageError(events.explain(settings, timeout)) from None
                if not down:
                    out.write(f"  {events.explain(settings, timeout)}: polling again every {interval:g} s\n")
                down = True
            writer.flush(history)
            meter.report(history, None)
            if not follow:
                break
            time.sleep(max(interval - (time.monotonic() - began), 0.0))
        finished = True
    except KeyboardInterrupt:
        finished = True  # Ctrl-C: the tables are what was asked for, empty or not
        raise
    finally:
        writer.flush(history)
        if not finished:
            writer.discard_if_empty()
