"""WeightedStickyAssignor (``"weighted-sticky"``, COOPERATIVE and EAGER): sticky, balancing load instead of counts."""

from __future__ import annotations

import logging
import math
from itertools import chain
from typing import TYPE_CHECKING, ClassVar, Final, NamedTuple

from assignors._builtin.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors._builtin.sticky.claims import Claim, resolve_claims
from assignors._builtin.weighted.balance import weighted_assign
from assignors._builtin.weighted.weights import check_weight, checked_mapping, merge_reports, resolve_weights
from assignors._core.base import AbstractPartitionAssignor
from assignors._core.errors import ProtocolError
from assignors._core.load import InvalidWeightError
from assignors._core.model import DEFAULT_GENERATION, Assignment, RebalanceProtocol, Subscription, TopicPartition
from assignors._wire.weighted import (
    LoadUnit,
    WeightedUserData,
    decode_weighted_assignment_data,
    decode_weighted_user_data,
    encode_weighted_assignment_data,
    encode_weighted_user_data,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

    from assignors._builtin.weighted.weights import PartitionWeights
    from assignors._core.model import Cluster, MemberId, Topic

__all__ = ["DEFAULT_TOLERANCE", "WEIGHTED_STICKY_ASSIGNOR_NAME", "WeightedStickyAssignor"]

logger = logging.getLogger(__name__)

WEIGHTED_STICKY_ASSIGNOR_NAME: Final = "weighted-sticky"

DEFAULT_TOLERANCE = 0.1
"""The default tolerance, as a fraction of the mean member load (docs/weighted.md says where it comes from)."""


class _Weights(NamedTuple):
    """One weight per partition (topic by topic), whether they are all equal, and their exact total."""

    values: list[float]
    equal: bool
    total: float

    @classmethod
    def of(cls, values: list[float]) -> _Weights:
        return cls(values, not values or min(values) == max(values), math.fsum(values))


class WeightedStickyAssignor(AbstractPartitionAssignor):
    """Sticky, but balancing what partitions cost (a weight each) rather than how many there are.

    Weights come from ``weights`` (a mapping by ``TopicPartition``, ``(topic, None)`` for a whole topic,
    or a callable; finite numbers >= 0), else from the loads the members report in their
    subscriptions (the client adapters measure each partition's consumption rate), else a default
    (the mean of the topic's known weights). With all weights equal the result is exactly the
    ``sticky`` assignment (``cooperative-sticky``'s when members report owned partitions).

    Otherwise, every member keeps its valid claims, the rest goes out heaviest first to the
    least-loaded subscriber, and partitions move until **condition C** holds: no member ``u``
    holds a partition ``p`` of positive weight with another subscriber ``v`` of its topic such that
    ``load(u) > load(v) + w(p) + tol``, where ``tol = tolerance x mean member load``. With identical
    subscriptions the heaviest load is then at most the lightest plus one partition's weight plus
    ``tol``. Nothing moves when the members' current partitions already satisfy C.

    Under COOPERATIVE a partition another member still owns is withheld; the assignment's user data
    tells its receiver, which reports it back, so the follow-up round finishes the hand-over and
    moves nothing else.

    Runtime complexity: ``O(P log P)`` (``P`` partitions), plus ``O(n + C log M)`` per move.

    >>> from assignors import Cluster, Subscription, TopicPartition as TP
    >>> hot = {TP("t", 0): 10.0, TP("t", 1): 4.0, TP("t", 2): 3.0, TP("t", 3): 3.0}
    >>> members = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    >>> result = WeightedStickyAssignor(hot).assign(Cluster({"t": 4}), members)
    >>> {m: [str(tp) for tp in a.partitions] for m, a in result.items()}
    {'a': ['t-0'], 'b': ['t-1', 't-2', 't-3']}
    """

    name: ClassVar[str] = WEIGHTED_STICKY_ASSIGNOR_NAME
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def __init__(
        self,
        weights: PartitionWeights | None = None,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        unit: LoadUnit | str = LoadUnit.RECORDS,
    ) -> None:
        """Args:
            weights: a weight per partition (see the class docstring); None: the members' reports.
            tolerance: how uneven loads may be before anything moves, as a fraction of the mean
                member load (finite, >= 0).
            unit: what the members measure: ``"records"`` or ``"bytes"`` per second.

        Raises:
            InvalidWeightError: a weight, a key or the tolerance that is not valid, naming it.
        """
        self._given: dict[tuple[str, int | None], float] | Callable[[TopicPartition], float | None] | None
        if weights is None or callable(weights):
            self._given = weights
        else:
            self._given = checked_mapping(weights)
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < math.inf:
            msg = f"tolerance={tolerance!r} must be a finite number >= 0 (a fraction of the mean member load)"
            raise InvalidWeightError(msg)
        self.tolerance = float(tolerance)
        try:
            self.unit = LoadUnit[unit.upper()] if isinstance(unit, str) else LoadUnit(unit)
        except (KeyError, ValueError):
            msg = f"unit={unit!r} must be 'records' or 'bytes'"
            raise InvalidWeightError(msg) from None
        self._partitions: tuple[TopicPartition, ...] = ()
        self._generation = DEFAULT_GENERATION
        self._promised: tuple[TopicPartition, ...] = ()
        self._loads: dict[TopicPartition, float] = {}
        self._window_ms = 0
        self._promising: dict[MemberId, list[TopicPartition]] = {}
        self._promised_last: dict[MemberId, list[TopicPartition]] = {}  # as leader, in the last assign
        self._cached: tuple[tuple[tuple[Topic, int], ...], _Weights] | None = None

    # --- the member's side -------------------------------------------------------------------------------------

    def report_loads(self, loads: Mapping[TopicPartition, float], *, window_ms: int = 0) -> None:
        """Set the loads this member measured (in ``unit`` per second), sent with its next subscription: for its
        partitions, and for partitions it gave up within the window (so that the leader of the round that hands
        them over still knows what they weigh). The client adapters call it before each join.

        Raises:
            InvalidWeightError: a load that is not a finite number >= 0, naming the partition.
        """
        self._loads = {tp: check_weight(tp, value) for tp, value in loads.items()}
        self._window_ms = max(0, int(window_ms))

    def subscription_user_data(self, topics: Collection[str]) -> bytes | None:
        """Version 1 weighted user data: the last assignment with its loads, the generation, the promises."""
        wanted = set(topics)
        loads = [(tp, self._loads.get(tp)) for tp in self._partitions if tp.topic in wanted]
        mine = set(self._partitions)
        released = [(tp, load) for tp, load in sorted(self._loads.items()) if tp not in mine and tp.topic in wanted]
        return encode_weighted_user_data(
            loads,
            released=released,
            generation=self._generation,
            unit=self.unit,
            window_ms=self._window_ms,
            promised=[tp for tp in self._promised if tp.topic in wanted],
        )

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        """Remember the assignment, its generation and what it promises this member."""
        self._partitions = assignment.partitions
        self._generation = generation_id
        self._promised = ()
        if assignment.user_data:
            try:
                self._promised = decode_weighted_assignment_data(assignment.user_data).promised
            except ProtocolError as error:
                logger.warning("undecodable weighted assignment user data, no promise taken: %s", error)

    # --- the leader's side -------------------------------------------------------------------------------------

    def assign(self, cluster: Cluster, subscriptions: Mapping[MemberId, Subscription]) -> dict[MemberId, Assignment]:
        """Assign (see the class docstring); members promised a partition still owned get it in their user data."""
        self._promising = {}
        result = super().assign(cluster, subscriptions)
        for member, promised in self._promising.items():
            result[member] = Assignment(result[member].partitions, user_data=encode_weighted_assignment_data(promised))
        self._promised_last, self._promising = self._promising, {}
        return result

    def _assign_partitions(
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
    ) -> Mapping[MemberId, Sequence[TopicPartition]]:
        decoded = {member: self._decode(member, s) if s.user_data else None for member, s in subscriptions.items()}
        claims: dict[MemberId, Claim] = {}
        for member, subscription in subscriptions.items():
            data = decoded[member]
            if subscription.owned_partitions:
                generation = subscription.generation_id
                if generation == DEFAULT_GENERATION and data is not None:
                    generation = data.generation
                claims[member] = Claim(subscription.owned_partitions, generation)
            elif data is not None and data.loads:
                claims[member] = Claim(data.partitions, data.generation)
        cooperative = any(s.owned_partitions for s in subscriptions.values())
        reports = merge_reports((d.generation, chain(d.loads, d.released)) for d in decoded.values() if d is not None)
        if self._given is None and not reports:
            return self._as_sticky(cluster, subscriptions, claims, cooperative=cooperative)
        weights = self._weights(partitions_per_topic, reports)
        if weights.equal:
            return self._as_sticky(cluster, subscriptions, claims, cooperative=cooperative)
        return self._weighted(
            cluster, partitions_per_topic, subscriptions, claims=claims, decoded=decoded, weights=weights,
            cooperative=cooperative,
        )  # fmt: skip

    def _weights(self, partitions_per_topic: Mapping[Topic, int], reports: dict[TopicPartition, float]) -> _Weights:
        """The weights (:func:`resolve_weights`); a mapping's, with no reports, are kept for the same topics."""
        if reports or not isinstance(self._given, dict):
            return _Weights.of(resolve_weights(partitions_per_topic, self._given, reports))
        key = tuple(partitions_per_topic.items())
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, _Weights.of(resolve_weights(partitions_per_topic, self._given, reports)))
        return self._cached[1]

    def _decode(self, member: MemberId, subscription: Subscription) -> WeightedUserData | None:
        if not subscription.user_data:
            return None
        try:
            data = decode_weighted_user_data(subscription.user_data)
        except ProtocolError as error:
            logger.warning("member %r: undecodable weighted user data, treated as no report: %s", member, error)
            return None
        if data.unit is not self.unit:
            logger.warning("member %r reports %s/s, this assignor %s/s: its loads are ignored", member,
                           data.unit.name.lower(), self.unit.name.lower())  # fmt: skip
            return WeightedUserData(self.unit, data.generation, 0, tuple((tp, None) for tp, _ in data.loads),
                                    data.promised)  # fmt: skip
        return data

    def _as_sticky(
        self,
        cluster: Cluster,
        subscriptions: Mapping[MemberId, Subscription],
        claims: Mapping[MemberId, Claim],
        *,
        cooperative: bool,
    ) -> dict[MemberId, tuple[TopicPartition, ...]]:
        """All weights equal: exactly the sticky assignment (cooperative-sticky's when partitions are still owned)."""
        plain = {
            member: Subscription(
                s.topics,
                owned_partitions=claims[member].partitions if member in claims else (),
                generation_id=claims[member].generation if member in claims else DEFAULT_GENERATION,
                rack_id=s.rack_id,
                group_instance_id=s.group_instance_id,
            )
            for member, s in subscriptions.items()
        }
        inner = CooperativeStickyAssignor() if cooperative else StickyAssignor()
        return {member: a.partitions for member, a in inner.assign(cluster, plain).items()}

    def _weighted(  # noqa: PLR0913 - the parts of one assignment
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[Topic, int],
        subscriptions: Mapping[MemberId, Subscription],
        *,
        claims: Mapping[MemberId, Claim],
        decoded: Mapping[MemberId, WeightedUserData | None],
        weights: _Weights,
        cooperative: bool,
    ) -> dict[MemberId, list[TopicPartition]]:
        by_list: dict[tuple[str, ...], frozenset[Topic]] = {}
        member_topics: dict[MemberId, frozenset[Topic]] = {}
        for member, subscription in subscriptions.items():
            topics = by_list.get(subscription.topics)
            if topics is None:
                topics = by_list[subscription.topics] = frozenset(partitions_per_topic.keys() & subscription.topics)
            member_topics[member] = topics
        valid, claimed, _ = resolve_claims(partitions_per_topic, member_topics, claims)
        if cooperative and (self._promised_last or any(d is not None and d.promised for d in decoded.values())):
            self._keep_promises(partitions_per_topic, member_topics, decoded, claimed, valid)
        eligible = sum(1 for topics in member_topics.values() if topics)
        tolerance = self.tolerance * weights.total / eligible if eligible else 0.0
        racks = None
        if cluster.partition_racks:
            member_racks = {
                m: s.rack_id for m, s in subscriptions.items() if s.rack_id is not None and member_topics[m]
            }
            racks = (member_racks, cluster.racks_of) if member_racks else None
        kept, new = weighted_assign(
            partitions_per_topic, member_topics, valid, weights.values, tolerance=tolerance, racks=racks
        )
        if not cooperative or not claimed:
            return {m: kept[m] + new[m] for m in subscriptions}
        result: dict[MemberId, list[TopicPartition]] = {}
        for member in subscriptions:
            withheld = [tp for tp in new[member] if tp in claimed] if new[member] else None
            if withheld:
                self._promising[member] = withheld
                result[member] = kept[member] + [tp for tp in new[member] if tp not in claimed]
            else:
                result[member] = kept[member] + new[member]
        return result

    def _keep_promises(
        self,
        partitions_per_topic: Mapping[Topic, int],
        member_topics: Mapping[MemberId, frozenset[Topic]],
        decoded: Mapping[MemberId, WeightedUserData | None],
        claimed: set[TopicPartition],
        valid: dict[MemberId, list[TopicPartition]],
    ) -> None:
        """A partition handed to a member in the last round, that nobody claims now, is that member's to keep.

        The member says so in its user data. A member that says nothing is taken at this instance's word when it
        led the last round: an instance that stands for every member (``assignors.rebalance.rebalance``) is never
        given the assignments' user data. Only partitions nobody claims are kept this way, so an identical input
        (whose withheld partitions are still claimed) gives an identical output.
        """
        promised: dict[TopicPartition, str | None] = {}
        for member in sorted(decoded):
            data = decoded[member]
            said = data.promised if data is not None and data.promised else self._promised_last.get(member, ())
            for tp in said:
                if (
                    tp in claimed
                    or tp.topic not in member_topics[member]
                    or tp.partition >= partitions_per_topic[tp.topic]
                ):
                    continue
                promised[tp] = member if tp not in promised else None  # promised twice: to nobody
        for tp, receiver in promised.items():
            if receiver is not None:
                valid.setdefault(receiver, []).append(tp)

    def __repr__(self) -> str:
        given = "" if self._given is None else "weights=..., "
        return f"{type(self).__name__}({given}tolerance={self.tolerance!r})"
