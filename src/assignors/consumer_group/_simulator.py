"""A heartbeat-level model of a consumer group speaking KIP-848's protocol, online upgrade included.

Deterministic discrete time: every member heartbeats at its own interval and reconciles
on its own; the coordinator computes a new target on the first heartbeat after the
group epoch moves. Driven by the classic simulator's events (:mod:`assignors.rebalance`).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from assignors._classic.events import AddPartitions, Crash, Event, Join, Leave, Restart, Subscribe
from assignors._core.errors import SimulationError
from assignors._core.model import Cluster, TopicPartition
from assignors.consumer_group import _classic
from assignors.consumer_group._classic import ClassicGroup
from assignors.consumer_group._client import Client, ScenarioLike, describe
from assignors.consumer_group._common import ServerAssignor
from assignors.consumer_group._coordinator import Coordinator, MemberRecord
from assignors.consumer_group._reconcile import MemberAssignmentState, MemberState
from assignors.consumer_group._timeline import ConsumerTimeline, Instant, remote_assignor

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from assignors._core.interface import ConsumerPartitionAssignor

__all__ = ["ConsumerGroupSimulator"]


class ConsumerGroupSimulator:
    """A consumer group through joins, leaves, crashes, restarts and resubscriptions, heartbeat by heartbeat.

    Members whose assignors are ``["consumer"]``, ``["uniform"]`` or ``["consumer-range"]``
    use ``group.protocol=consumer``; others are classic members. A group of classic members
    rebalances as a classic group; the first consumer-protocol member converts it online
    (the last classic assignment becomes the first target, classic members stay and follow
    the target through their rebalances, modelled as heartbeats at their own interval);
    when the last consumer-protocol member leaves, it converts back.

    Args:
        partitions: the topics and their partition counts (or a :class:`~assignors.Cluster`, whose partition racks
            the classic rebalances see).
        session_timeout_s: ``group.consumer.session.timeout.ms`` (and the classic one).
        heartbeat_interval_s: ``group.consumer.heartbeat.interval.ms``.
        classic_heartbeat_interval_s: the classic members' ``heartbeat.interval.ms``.
    """

    def __init__(
        self,
        partitions: Mapping[str, int] | Cluster,
        *,
        session_timeout_s: float = 45.0,
        heartbeat_interval_s: float = 5.0,
        classic_heartbeat_interval_s: float = 3.0,
    ) -> None:
        cluster = partitions if isinstance(partitions, Cluster) else Cluster(partitions)
        self.partitions = dict(cluster.partitions_per_topic)
        self._partition_racks = cluster.partition_racks
        self.session_timeout_s = session_timeout_s
        self.heartbeat_interval_s = heartbeat_interval_s
        self.classic_heartbeat_interval_s = classic_heartbeat_interval_s
        self.clients: dict[str, Client] = {}
        self.coordinator: Coordinator | None = None
        self.classic = ClassicGroup(cluster)
        self.timeline = ConsumerTimeline()
        self.now = 0.0
        self._queue: list[tuple[float, int, str, str, int]] = []
        self._seq = 0
        self._seen: dict[str, float] = {}  # member id -> last heartbeat

    @classmethod
    def from_scenario(cls, scenario: ScenarioLike, **options: float) -> ConsumerGroupSimulator:
        """A simulator for a scenario of ``assignors simulate`` (see :func:`assignors.rebalance.parse_scenario`)."""
        return cls(scenario.partitions, session_timeout_s=scenario.session_timeout_s, **options)

    # --- driving ----------------------------------------------------------------------

    def run(self, events: Iterable[Event], *, until: float | None = None) -> ConsumerTimeline:
        """Apply ``events`` in time order, then run until ``until`` (default: :meth:`settled_by`)."""
        ordered = sorted(events, key=lambda e: e.at)
        for event in ordered:
            self.apply(event)
        self.advance(self.settled_by(ordered) if until is None else until)
        return self.timeline

    def settled_by(self, events: Iterable[Event]) -> float:
        """Two session timeouts after the last event or restarted member's return: the group has settled by then."""
        ends = [e.at + (e.downtime_s if isinstance(e, Restart) else 0.0) for e in events]
        return max(ends, default=0.0) + 2 * self.session_timeout_s

    def apply(self, event: Event) -> None:
        """Run the heartbeats due until ``event.at``, then the event."""
        self.advance(event.at)
        if isinstance(event, Join):
            self._join(event.member, event.topics, event.assignors, event.instance_id, rack=event.rack)
        elif isinstance(event, Subscribe):
            self._subscribe(event.member, event.topics)
        elif isinstance(event, AddPartitions):
            self._add_partitions(event.topic, event.count)
        else:
            client = self._client(event.member)
            if isinstance(event, Leave):
                self._leave(client, "leave", static=client.instance_id is not None)
            elif isinstance(event, Crash):
                self._crash(client)
            elif isinstance(event, Restart):
                static = client.instance_id is not None
                self._leave(client, f"restart, back in {event.downtime_s:g}s", static=static, down=True)
                topics = event.topics if event.topics is not None else client.topics
                specs = event.assignors if event.assignors is not None else client.specs
                client.topics, client.specs = tuple(topics), tuple(specs)
                self._schedule(event.at + event.downtime_s, "back", client.handle, client.token)

    def advance(self, to: float) -> None:
        """Run every heartbeat, timeout and return due by ``to``."""
        while self._queue and self._queue[0][0] <= to:
            at, _, kind, handle, token = heapq.heappop(self._queue)
            self.now = at
            if kind == "heartbeat":
                self._heartbeat(handle, token)
            elif kind == "expire":
                self._expire(handle, token)
            elif kind == "back":
                self._back(handle, token)
        self.now = max(self.now, to)

    def _schedule(self, at: float, kind: str, key: str, token: int) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, kind, key, token))

    def _client(self, handle: str) -> Client:
        client = self.clients.get(handle)
        if client is None or not client.up:
            msg = f"member={handle!r} is not running"
            raise SimulationError(msg)
        return client

    # --- the group's type -------------------------------------------------------------

    @property
    def protocol(self) -> str:
        if self.coordinator is not None:
            return "consumer"
        return "classic" if self.classic.members else "empty"

    def _convert_to_consumer(self) -> None:
        """Online upgrade: the classic group's generation and last assignment become the epoch and the target."""
        coordinator = Coordinator(self.partitions, group_epoch=max(self.classic.generation, 0))
        for member in sorted(self.classic.members.values(), key=lambda m: m.member_id):
            member_id, epoch = member.member_id, coordinator.group_epoch
            state = MemberAssignmentState(MemberState.STABLE, epoch, epoch, frozenset(member.owned))
            client = self.clients[member.handle]
            down = not client.up or client.member_id != member_id  # away, or back under a new member id
            coordinator.adopt(
                MemberRecord(
                    member_id, member.topics, member.instance_id, None, classic=True, reconciliation=state, left=down
                )
            )
            if down:
                self._watch(member_id, client)
            else:
                self._seen[member_id] = self.now
                self._schedule(self.now + self.classic_heartbeat_interval_s, "heartbeat", client.handle, client.token)
        self.classic = ClassicGroup(self._cluster())
        self.coordinator = coordinator
        self._record(None, f"converted to a consumer group at epoch {coordinator.group_epoch}", settling=True)

    def _maybe_convert_back(self) -> None:
        coordinator = self.coordinator
        if coordinator is None:
            return
        if not coordinator.members:
            self.coordinator = None
            self.classic = ClassicGroup(self._cluster(), generation=coordinator.group_epoch)
            self._record(None, "empty")
            return
        if any(not r.classic for r in coordinator.members.values()):
            return
        self.coordinator = None
        self.classic = ClassicGroup(self._cluster(), generation=coordinator.group_epoch)
        for client in self.clients.values():
            if client.up:
                client.token += 1  # their heartbeat schedule ends; classic rebalances take over
        for record in coordinator.members.values():
            client = next(c for c in self.clients.values() if c.member_id == record.member_id)
            _classic.adopt(
                self.classic, record.member_id, client.handle, record.topics, client.joined_specs,
                instance_id=record.instance_id, rack=client.rack, owned=client.owned,
                down=None if client.up else client.restarts,
            )  # fmt: skip
            if not client.up:
                self._watch(record.member_id, client)
        self._record(None, f"converted back to a classic group at generation {self.classic.generation}", settling=True)
        self._classic_rebalance("the last consumer-protocol member left")

    # --- events -----------------------------------------------------------------------

    def _join(  # noqa: PLR0913 - a member's configuration
        self,
        handle: str,
        topics: Iterable[str],
        specs: Iterable[str | ConsumerPartitionAssignor],
        instance_id: str | None,
        *,
        rack: str | None = None,
        client: Client | None = None,
    ) -> None:
        if client is None:
            if handle in self.clients and self.clients[handle].up:
                msg = f"member={handle!r} is already running"
                raise SimulationError(msg)
            client = Client(handle, handle, tuple(topics), instance_id, tuple(specs), rack=rack)
            self.clients[handle] = client
        client.joined_specs = client.specs
        consumer, assignor = remote_assignor(client.specs)
        if consumer and self.coordinator is None and self.classic.members:
            self._convert_to_consumer()
        if self.coordinator is None and not consumer:
            self._classic_join(client)
            return
        if self.coordinator is None:
            self.coordinator = Coordinator(self.partitions, group_epoch=max(self.classic.generation, 0))
            self.classic = ClassicGroup(self._cluster())
        spec = client.specs[0] if consumer and client.specs else None
        if isinstance(spec, ServerAssignor) and assignor is not None:
            self.coordinator.configured[assignor] = spec  # e.g. UniformAssignor(stable_extras=False)
        what = self.coordinator.join(
            client.member_id, client.topics, instance_id=client.instance_id, assignor=assignor, classic=not consumer
        )
        self._seen[client.member_id] = self.now
        protocol = f"consumer, {assignor or 'server default'}" if consumer else "classic"
        self._record(client, f"{what} ({protocol}); group epoch {self.coordinator.group_epoch}")
        self._schedule(self.now, "heartbeat", client.handle, client.token)

    def _classic_join(self, client: Client) -> None:
        kept = _classic.join(
            self.classic, client.member_id, client.handle, client.topics, client.specs,
            instance_id=client.instance_id, rack=client.rack,
        )  # fmt: skip
        if kept is not None:
            self._set_owned(client, frozenset(kept.owned), "static member back, no rebalance")
        else:
            self._classic_rebalance(f"{client.handle} joined")

    def _leave(self, client: Client, why: str, *, static: bool, down: bool = False) -> None:
        """The member stops: drops what it consumes; a static member keeps its place for a session timeout."""
        client.up = False
        client.token += 1
        self._seen[client.member_id] = self.now  # the leave request restarts the session timer
        self._set_owned(client, frozenset(), why)
        keep_place = static and (down or client.consumer)
        if self.coordinator is not None:
            self.coordinator.leave(client.member_id, static=keep_place)
            if keep_place:
                self._schedule(self.now + self.session_timeout_s, "expire", client.member_id, self._expiry(client))
            else:
                self._maybe_convert_back()
        elif not keep_place:
            if self._in_classic_group(client.handle, client.member_id):
                self.classic.remove(client.handle)
            self._classic_rebalance(f"{client.handle} left")
        else:
            _classic.stop(self.classic, client.handle, client.member_id, client.restarts)
            self._schedule(self.now + self.session_timeout_s, "expire", client.member_id, self._expiry(client))

    def _crash(self, client: Client) -> None:
        """The process dies; the coordinator fences it a session timeout after its last heartbeat."""
        client.up = False
        client.token += 1
        self._set_owned(client, frozenset(), "crashed")
        if self.coordinator is None:  # a classic group hears from its members until now
            self._seen[client.member_id] = self.now
            _classic.stop(self.classic, client.handle, client.member_id, client.restarts)
        seen = self._seen.get(client.member_id, self.now)
        self._schedule(seen + self.session_timeout_s, "expire", client.member_id, self._expiry(client))

    def _watch(self, member_id: str, client: Client) -> None:
        """Fence a member that is away a session timeout after it was last heard of."""
        seen = self._seen.setdefault(member_id, self.now)
        self._schedule(seen + self.session_timeout_s, "expire", member_id, self._expiry(client))

    def _expiry(self, client: Client) -> int:
        return client.restarts

    def _back(self, handle: str, token: int) -> None:
        client = self.clients[handle]
        if client.up or token != client.token:
            return
        client.restarts += 1
        client.up = True
        client.token += 1
        client.member_id = f"{handle}~{client.restarts + 1}"  # its n-th process, as GroupSimulator names it
        self._join(handle, client.topics, client.specs, client.instance_id, client=client)

    def _subscribe(self, handle: str, topics: Iterable[str]) -> None:
        client = self._client(handle)
        client.topics = tuple(sorted(set(topics)))
        if self.coordinator is not None:
            self.coordinator.subscribe(client.member_id, client.topics)
            self._record(client, f"subscribed to {list(client.topics)}; group epoch {self.coordinator.group_epoch}")
        else:
            self.classic.members[client.handle].topics = client.topics
            self._classic_rebalance(f"{handle} subscribed to {list(client.topics)}")

    def _add_partitions(self, topic: str, count: int) -> None:
        grows = count != self.partitions.get(topic, 0)
        self.partitions[topic] = count
        self.classic.cluster = self._cluster()
        if self.coordinator is not None:
            self.coordinator.set_partitions(topic, count)
            self._record(None, f"{topic} has {count} partitions; group epoch {self.coordinator.group_epoch}")
        elif grows and any(topic in m.topics for m in self.classic.members.values()):
            # The leader's ConsumerCoordinator rejoins when the metadata of the group's subscribed topics changes.
            self._classic_rebalance(f"{topic} has {count} partitions")
        elif self.classic.members:
            self._record(None, f"{topic} has {count} partitions")  # no member's topic: no rebalance

    # --- heartbeats and timeouts -------------------------------------------------------

    def _heartbeat(self, handle: str, token: int) -> None:
        client = self.clients[handle]
        coordinator = self.coordinator
        if not client.up or token != client.token or coordinator is None:
            return
        if client.member_id not in coordinator.members:
            return
        self._seen[client.member_id] = self.now
        self._schedule(self.now + self.session_timeout_s, "expire", client.member_id, self._expiry(client))
        if coordinator.group_epoch > coordinator.assignment_epoch:
            coordinator.compute_target()
            self._record(None, f"target at epoch {coordinator.assignment_epoch} ({coordinator.assignor_name})")
        before = coordinator.members[client.member_id].reconciliation
        if client.eager and before.member_epoch != coordinator.assignment_epoch and client.owned:
            # A classic EAGER member rejoins for the new target: it revokes everything before joining.
            self._set_owned(client, frozenset(), "rejoins (classic EAGER): revokes everything")
        state = coordinator.heartbeat(client.member_id, client.owned)
        if state.assigned != client.owned:
            self._set_owned(client, state.assigned, f"heartbeat: {describe(state)}")
            self._schedule(self.now, "heartbeat", handle, token)  # acknowledge at once
        elif state != before:
            self._record(client, f"heartbeat: {describe(state)}")
        interval = self.classic_heartbeat_interval_s if not client.consumer else self.heartbeat_interval_s
        self._schedule(self.now + interval, "heartbeat", handle, token)

    def _expire(self, member_id: str, restarts: int) -> None:
        client = next((c for c in self.clients.values() if c.member_id == member_id), None)
        if client is None or client.restarts != restarts:
            return
        if self.now - self._seen.get(member_id, self.now) < self.session_timeout_s:
            return
        if self.coordinator is not None and member_id in self.coordinator.members:
            self.coordinator.remove(member_id)
            self._record(client, f"fenced: session timeout; group epoch {self.coordinator.group_epoch}")
            self._maybe_convert_back()
        elif self.coordinator is None and not client.up and self._in_classic_group(client.handle, member_id):
            self.classic.remove(client.handle)
            self._classic_rebalance(f"{client.handle} timed out")

    def _classic_rebalance(self, cause: str) -> None:
        dropped, rounds = _classic.rebalance(self.classic)  # members that are down cannot rejoin
        if dropped:
            cause += f"; {', '.join(dropped)} down, dropped from the group"
        if not rounds:
            self._record(None, f"empty ({cause})")
            return
        for generation, revoked, added in rounds:
            text = f"classic generation {generation} ({cause})"
            recorded = len(self.timeline.instants)
            for changes, gives_up in ((revoked, True), (added, False)):  # revocations come first in a round
                for handle, partitions in changes.items():
                    client = self.clients[handle]
                    if not client.up:
                        continue  # a static member away within its session timeout keeps its assignment
                    if gives_up:
                        self._set_owned(client, client.owned - set(partitions), text, partitions, ())
                    else:
                        self._set_owned(client, client.owned | set(partitions), text, (), partitions)
            if len(self.timeline.instants) == recorded:
                # A round in which no running member's partitions move is still a generation: Kafka's
                # GroupMetadataManager.prepareRebalance runs on every leave, session timeout, join and
                # downgrade (convertToClassicGroup), and ClassicGroup.initNextGeneration bumps the
                # generation whatever the assignment. Record it, or the timeline ends on the instant
                # before the rebalance (the leave, the crash, "converted back"), as the group was then.
                self._record(None, text)

    def _cluster(self) -> Cluster:
        return Cluster(self.partitions, partition_racks=self._partition_racks)

    def _in_classic_group(self, handle: str, member_id: str) -> bool:
        """The process ``member_id`` is still a member of the classic group (not dropped by a rebalance meanwhile)."""
        return _classic.current(self.classic, handle, member_id) is not None

    # --- recording --------------------------------------------------------------------

    def _set_owned(
        self,
        client: Client,
        owned: frozenset[TopicPartition],
        text: str,
        revoked: Iterable[TopicPartition] | None = None,
        added: Iterable[TopicPartition] | None = None,
    ) -> None:
        lost = tuple(sorted(client.owned - owned if revoked is None else revoked))
        gained = tuple(sorted(owned - client.owned if added is None else added))
        client.owned = owned
        self._record(client, text, lost, gained)

    def _record(
        self,
        client: Client | None,
        text: str,
        revoked: tuple[TopicPartition, ...] = (),
        added: tuple[TopicPartition, ...] = (),
        *,
        settling: bool = False,
    ) -> None:
        coordinator = self.coordinator
        if coordinator is not None:
            epochs = (coordinator.group_epoch, coordinator.assignment_epoch)
        else:
            epochs = (self.classic.generation, self.classic.generation)
        owned = self.owned()
        stable = self.stable() and not settling
        handle = client.handle if client is not None else None
        unowned = self.unowned()
        self.timeline.instants.append(
            Instant(self.now, handle, text, *epochs, revoked, added, owned, stable, unowned, self.protocol)
        )

    def owned(self) -> dict[str, frozenset[TopicPartition]]:
        """What each running member consumes now, by its handle."""
        return {c.handle: c.owned for c in sorted(self.clients.values(), key=lambda c: c.handle) if c.up}

    def stable(self) -> bool:
        """Every member is up and consumes exactly its reconciled assignment, and no target is pending."""
        coordinator = self.coordinator
        if coordinator is None:
            members = self.classic.members
            return all(c.up and c.owned == frozenset(members[c.handle].owned) for c in self._members())
        return coordinator.stable() and all(
            c.up and c.owned == coordinator.members[c.member_id].reconciliation.assigned for c in self._members()
        )

    def unowned(self) -> tuple[TopicPartition, ...]:
        """Partitions of topics that members of the group subscribe to that no running member consumes."""
        held = set().union(*(c.owned for c in self.clients.values() if c.up))
        return tuple(tp for tp in self.subscribed_partitions() if tp not in held)

    def _members(self) -> list[Client]:
        group = self.coordinator.members.values() if self.coordinator is not None else self.classic.members.values()
        ids = {m.member_id for m in group}
        return [c for c in self.clients.values() if c.member_id in ids]

    def subscribed_partitions(self) -> list[TopicPartition]:
        """Every partition of a topic some member in the group subscribes to."""
        topics = sorted({t for c in self._members() for t in c.topics})
        return [TopicPartition(t, p) for t in topics for p in range(self.partitions.get(t, 0))]
