"""Load beyond partition counts: per-topic spread, weighted load and the pause cost of a rebalance.

:mod:`assignors.metrics` re-exports everything here; import it from there.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import itemgetter
from typing import TypeAlias

from assignors._core.errors import AssignorError
from assignors._core.model import (
    Assignment,
    MemberId,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    topic_partitions,
)

__all__ = [
    "CALIBRATION_SETTINGS",
    "CLIENT_PAUSE_FACTORS",
    "DEFAULT_HEARTBEAT_SECONDS",
    "DEFAULT_PAUSE_MODEL",
    "DEFAULT_REBALANCE_SECONDS",
    "KAFKA_DEFAULT",
    "KAFKA_DEFAULT_SETTINGS",
    "MEASURED",
    "InvalidWeightError",
    "PartitionWeights",
    "PauseModel",
    "PauseProtocol",
    "WeightedLoad",
    "Weights",
    "leader_share",
    "moved_partitions",
    "pause_partition_seconds",
    "rebalance_pause",
    "rejoined_partitions",
    "restart_pause",
    "topic_spreads",
    "weighted_load",
]

Weights: TypeAlias = Mapping[tuple[str, int | None], float]
"""Weight per partition: ``(topic, partition)``, or ``(topic, None)`` for every partition of the topic."""

DEFAULT_REBALANCE_SECONDS = 5.0
"""How long one rebalance round stops a group by default (join plus sync)."""
DEFAULT_HEARTBEAT_SECONDS = 5.0
"""KIP-848's default ``group.consumer.heartbeat.interval.ms`` (5,000 ms), in seconds."""

_topic_of = itemgetter(0)


class InvalidWeightError(AssignorError, ValueError):
    """A weight, or a pause-cost duration, is not a finite number >= 0; the message names the key or field."""


def _partitions(value: Assignment | Iterable[TopicPartition]) -> Iterable[TopicPartition]:
    return value.partitions if isinstance(value, Assignment) else value


def topic_spreads(
    assignment: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
    subscriptions: Mapping[MemberId, Subscription | Collection[str]] | None = None,
) -> dict[str, int]:
    """Per topic, ``max - min`` of its subscribers' counts of that topic's partitions.

    The subscribers of topic ``t`` are the members whose subscription lists ``t``
    (``subscriptions`` maps a member to a :class:`~assignors.Subscription` or its topic
    names); a subscriber holding nothing of ``t`` counts 0. Without ``subscriptions``
    every member of ``assignment`` counts as a subscriber of every topic assigned to
    anyone (right for identical subscriptions). Topics are every subscribed or assigned
    topic; the result is sorted by topic name.

    >>> from assignors import TopicPartition as TP
    >>> topic_spreads({"a": [TP("o", 0), TP("o", 1), TP("p", 0)], "b": [TP("p", 1)], "c": []})
    {'o': 2, 'p': 1}
    >>> topic_spreads({"a": [TP("o", 0), TP("o", 1)], "b": [TP("p", 0)]}, {"a": ["o"], "b": ["p"]})
    {'o': 0, 'p': 0}
    """
    counts = {member: Counter(map(_topic_of, _partitions(value))) for member, value in assignment.items()}
    subscribers: dict[str, set[MemberId]] = {}
    if subscriptions is None:
        everyone = set(counts)
        for per_member in counts.values():
            for topic in per_member:
                subscribers[topic] = everyone
    else:
        for member, subscription in subscriptions.items():
            names = subscription.topics if isinstance(subscription, Subscription) else subscription
            for topic in names:
                subscribers.setdefault(topic, set()).add(member)
        for member, per_member in counts.items():  # a holder that does not subscribe still holds what it holds
            for topic in per_member:
                subscribers.setdefault(topic, set()).add(member)
    spreads: dict[str, int] = {}
    for topic in sorted(subscribers):
        held = [counts[member][topic] if member in counts else 0 for member in subscribers[topic]]
        spreads[topic] = max(held) - min(held)
    return spreads


@dataclass(frozen=True, slots=True)
class WeightedLoad:
    """Load as the sum of the weights of each member's partitions.

    Attributes:
        members: number of members (empty ones included).
        total: sum of every member's load.
        max_load: the heaviest member's load (0.0 with no members).
        min_load: the lightest member's load.
        spread: ``max_load - min_load``.
        max_mean_ratio: ``max_load / (total / members)``: 1.0 is perfectly even, 2.0 means the
            heaviest member carries twice the average; 1.0 when ``total`` is 0 or there are no
            members (everyone carries the same nothing).
    """

    members: int
    total: float
    max_load: float
    min_load: float
    spread: float
    max_mean_ratio: float


def _check_weight(key: tuple[str, int | None], weight: float) -> float:
    value = float(weight)
    if not math.isfinite(value) or value < 0:
        topic, partition = key
        where = f"topic {topic!r}" + ("" if partition is None else f" partition {partition}")
        msg = f"weight of {where} is {weight!r}; a weight must be a finite number >= 0"
        raise InvalidWeightError(msg)
    return value


def weighted_load(
    assignment: Mapping[MemberId, Assignment | Iterable[TopicPartition]], weights: Weights, *, default: float = 0.0
) -> WeightedLoad:
    """Measure an assignment with a weight per partition (e.g. bytes/s from your metrics).

    Sums are exact (``math.fsum``), so the figures do not depend on the order of members or
    partitions. A partition ``t-p`` weighs ``weights[("t", p)]`` when present, else ``weights[("t", None)]``
    (the topic's weight, for each of its partitions), else ``default``. A member's load is the
    sum of its partitions' weights.

    Raises:
        InvalidWeightError: a weight (or ``default``) that is negative, NaN or infinite, naming
            its topic and partition.

    >>> from assignors import TopicPartition as TP
    >>> a = {"x": [TP("hot", 0), TP("cold", 0)], "y": [TP("cold", 1), TP("cold", 2)]}
    >>> weighted_load(a, {("hot", None): 10.0, ("cold", None): 1.0, ("cold", 2): 3.0})
    WeightedLoad(members=2, total=15.0, max_load=11.0, min_load=4.0, spread=7.0, max_mean_ratio=1.4666666666666666)
    """
    fallback = _check_weight(("(default)", None), default)
    for key, value in weights.items():
        _check_weight(key, value)
    return _summary([_load(partitions, weights, fallback) for partitions in assignment.values()])


def _load(partitions: Assignment | Iterable[TopicPartition], weights: Weights, fallback: float) -> float:
    """One member's load: its partitions' weights as :func:`weighted_load` reads them, summed exactly."""
    parts: list[float] = []
    for tp in _partitions(partitions):
        weight = weights.get((tp[0], tp[1]))
        parts.append(weights.get((tp[0], None), fallback) if weight is None else weight)
    return math.fsum(parts)  # exact sums: independent of the order of members and partitions


def _summary(loads: list[float]) -> WeightedLoad:
    if not loads:
        return WeightedLoad(0, 0.0, 0.0, 0.0, 0.0, 1.0)
    total = math.fsum(loads)
    high, low = max(loads), min(loads)
    ratio = high * len(loads) / total if total > 0 else 1.0
    return WeightedLoad(len(loads), total, high, low, high - low, ratio)


class PartitionWeights:
    """Weights checked once and read once per partition, to measure many assignments of the same topics.

    ``PartitionWeights(weights, partitions_per_topic).load(assignment)`` equals
    ``weighted_load(assignment, weights, default=default)`` for every assignment: each partition of
    ``partitions_per_topic`` gets the weight ``weighted_load`` would read for it (its own, else its topic's, else
    ``default``), so a load is one C-level ``math.fsum`` over a lookup, and exact sums do not depend on how the
    same weights are summed. A partition outside ``partitions_per_topic`` is read as ``weighted_load`` reads it.
    The replay measures every strategy's assignment at a snapshot, and every snapshot that keeps the topics and
    weights, with one of these.

    Raises:
        InvalidWeightError: as :func:`weighted_load` does, when built.
    """

    __slots__ = ("_fallback", "_table", "_weights")

    def __init__(self, weights: Weights, partitions_per_topic: Mapping[str, int], *, default: float = 0.0) -> None:
        self._fallback = _check_weight(("(default)", None), default)
        for key, value in weights.items():
            _check_weight(key, value)
        self._weights: dict[tuple[str, int | None], float] = dict(weights)
        table: dict[TopicPartition, float] = {}
        for topic, count in partitions_per_topic.items():
            every = weights.get((topic, None), self._fallback)
            for tp in topic_partitions(topic, count):
                weight = weights.get((topic, tp[1]))
                table[tp] = every if weight is None else weight
        self._table = table

    @property
    def weights(self) -> Mapping[tuple[str, int | None], float]:
        """The weights given (checked), as :func:`weighted_load` and :func:`moved_weight` read them."""
        return self._weights

    def load(self, assignment: Mapping[MemberId, Assignment | Iterable[TopicPartition]]) -> WeightedLoad:
        """:func:`weighted_load` of ``assignment`` with these weights."""
        weight_of = self._table.__getitem__
        loads: list[float] = []
        for value in assignment.values():
            partitions = value.partitions if isinstance(value, Assignment) else value
            if type(partitions) is not tuple and type(partitions) is not list:
                partitions = tuple(partitions)  # one-shot iterables are read once
            try:
                loads.append(math.fsum(map(weight_of, partitions)))
            except (KeyError, TypeError):  # a partition of another topic, or not a TopicPartition
                loads.append(_load(partitions, self._weights, self._fallback))
        return _summary(loads)

    def moved(
        self,
        before: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
        after: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
        *,
        members_after: Collection[MemberId] | None = None,
    ) -> float:
        """:func:`~assignors.metrics.moved_weight` of ``before`` to ``after`` with these weights (and default).

        The weights were checked when these were built, and each moved partition is one lookup: the replay weighs
        every rebalance's moves with one of these.
        """
        parts: list[float] = []
        for tp in moved_partitions(before, after, members_after):
            weight = self._table.get(tp)
            parts.append(_load((tp,), self._weights, self._fallback) if weight is None else weight)  # another topic's
        return math.fsum(parts)


def moved_partitions(
    before: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
    after: Mapping[MemberId, Assignment | Iterable[TopicPartition]],
    members_after: Collection[MemberId] | None = None,
) -> list[TopicPartition]:
    """The partitions owned in ``before`` by a member present at ``after`` (``members_after``, by default the members
    of ``after``) that another member owns in ``after``: what :func:`~assignors.metrics.movement` counts as
    ``moved``, for :func:`~assignors.metrics.moved_weight` and :meth:`PartitionWeights.moved` to weigh."""
    present = after.keys() if members_after is None else members_after
    if not isinstance(present, Collection) or isinstance(present, str):
        present = set(present)
    new_owner: dict[TopicPartition, MemberId] = {}
    for member, value in after.items():
        new_owner.update(dict.fromkeys(_partitions(value), member))
    moved: list[TopicPartition] = []
    for member, value in before.items():
        if member in present:
            moved.extend(tp for tp in _partitions(value) if new_owner.get(tp, member) != member)
    return moved


class PauseProtocol(Enum):
    """How a group rebalances, for :func:`pause_partition_seconds`: the two classic protocols and KIP-848's."""

    EAGER = "EAGER"
    COOPERATIVE = "COOPERATIVE"
    CONSUMER = "CONSUMER"


def _pause_protocol(protocol: RebalanceProtocol | PauseProtocol | str) -> PauseProtocol:
    if isinstance(protocol, PauseProtocol):
        return protocol
    name = protocol.name if isinstance(protocol, RebalanceProtocol) else str(protocol).upper()
    try:
        return PauseProtocol[name]
    except KeyError:
        msg = f"protocol {protocol!r} is not one of EAGER, COOPERATIVE, CONSUMER"
        raise InvalidWeightError(msg) from None


def _check_seconds(field: str, value: float) -> float:
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        msg = f"{field} is {value!r}; it must be a finite number of seconds >= 0"
        raise InvalidWeightError(msg)
    return seconds


def pause_partition_seconds(
    protocol: RebalanceProtocol | PauseProtocol | str,
    *,
    moved: int,
    survivors_owned: int,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> float:
    """Partition-seconds not consumed because of one rebalance, comparable across protocols.

    With ``R = rebalance_seconds`` (one join-and-sync round) and ``H = heartbeat_seconds``:

    - EAGER: every partition the surviving members owned before stops for the whole
      rebalance: ``survivors_owned * R`` (``survivors_owned`` is ``Movement.revoked(EAGER)``:
      moved + retained + released).
    - COOPERATIVE (KIP-429): only the partitions that change owner stop, for the two rounds
      a cooperative rebalance that moves anything takes: ``moved * 2 * R``.
    - CONSUMER (KIP-848): a moved partition waits about one heartbeat for its old owner to
      release it: ``moved * H``.

    Partitions whose owner left (orphaned) are not counted: they wait for the departure to
    be noticed under every protocol alike, so they do not tell strategies apart.

    Raises:
        InvalidWeightError: an unknown protocol, a negative count or a duration that is
            negative, NaN or infinite, naming the field.

    >>> pause_partition_seconds("EAGER", moved=3, survivors_owned=12)
    60.0
    >>> pause_partition_seconds("COOPERATIVE", moved=3, survivors_owned=12)
    30.0
    >>> pause_partition_seconds("CONSUMER", moved=3, survivors_owned=12, heartbeat_seconds=3)
    9.0
    """
    kind = _pause_protocol(protocol)
    rebalance = _check_seconds("rebalance_seconds", rebalance_seconds)
    heartbeat = _check_seconds("heartbeat_seconds", heartbeat_seconds)
    for field, count in (("moved", moved), ("survivors_owned", survivors_owned)):
        if count < 0:
            msg = f"{field} is {count}; a partition count must be >= 0"
            raise InvalidWeightError(msg)
    if kind is PauseProtocol.EAGER:
        return survivors_owned * rebalance
    if kind is PauseProtocol.COOPERATIVE:
        return moved * 2 * rebalance
    return moved * heartbeat


# -- the calibrated pause model (make calibrate, docs/calibration.md) ----------------------------------------------
KAFKA_DEFAULT_SETTINGS: Mapping[str, tuple[str, float]] = {
    "heartbeat_seconds": ("heartbeat.interval.ms", 3.0),
    "session_seconds": ("session.timeout.ms", 45.0),
    "consumer_heartbeat_seconds": ("group.consumer.heartbeat.interval.ms", 5.0),
    "consumer_session_seconds": ("group.consumer.session.timeout.ms", 45.0),
}
"""Each interval of :class:`PauseModel`: the Kafka setting that holds it and the setting's documented default (s)."""
CALIBRATION_SETTINGS: Mapping[str, float] = {
    "heartbeat_seconds": 1.0,
    "session_seconds": 10.0,
    "consumer_heartbeat_seconds": 2.0,
    "consumer_session_seconds": 10.0,
}
"""The intervals ``make calibrate`` runs its groups at (``calibration.scenarios.SETTINGS`` takes them from here):
:class:`PauseModel`'s measured factors are in units of these."""

MEASURED = "measured"
"""A :class:`PauseModel` parameter's source: ``make calibrate``'s measurement (docs/calibration.md)."""
KAFKA_DEFAULT = "Kafka's default"
"""A :class:`PauseModel` parameter's source: the Kafka setting's documented default."""


_MODEL_FIELDS: tuple[str, ...] = (
    "heartbeat_seconds",
    "session_seconds",
    "consumer_heartbeat_seconds",
    "consumer_session_seconds",
    "eager_heartbeats",
    "cooperative_heartbeats",
    "cooperative_orphan_heartbeats",
    "consumer_move_heartbeats",
    "consumer_orphan_heartbeats",
    "fetch_seconds",
    "eager_orphan_heartbeats",
    "cooperative_kept_heartbeats",
    "static_rejoin_seconds",
    "eager_crash_heartbeats",
)
"""Every field of :class:`PauseModel`, in order: the intervals (Kafka's defaults), then the measured factors."""

_DEFAULT_SOURCES: tuple[tuple[str, str], ...] = (
    *((name, f"{KAFKA_DEFAULT} {key}={round(value * 1000)}") for name, (key, value) in KAFKA_DEFAULT_SETTINGS.items()),
    *((name, MEASURED) for name in _MODEL_FIELDS if name not in KAFKA_DEFAULT_SETTINGS),
)


@dataclass(frozen=True, slots=True)
class PauseModel:
    """What a rebalance costs, per protocol, from the settings that drive it and factors measured on real groups.

    Every duration a partition waits is a number of the interval that paces it, plus a fixed part:

    - classic (EAGER and COOPERATIVE): members learn of a rebalance on their next heartbeat
      (``heartbeat.interval.ms``, :attr:`heartbeat_seconds`); EAGER stops every partition the surviving members
      owned until the last of them rejoins (each member revokes when it learns): after a join or a LeaveGroup
      the members learn of it close together (:attr:`eager_heartbeats`; they heartbeat in step, measured up to 14
      heartbeats after the rebalance before), after a crash (a session timeout) up to a heartbeat apart, each
      member's partitions waiting from its own heartbeat to the last member's (:attr:`eager_crash_heartbeats`);
      COOPERATIVE stops a moved partition for :attr:`cooperative_heartbeats` (revoked in the first
      round, assigned in the second), and every partition kept by a member that gave others up while another
      member gave none up for :attr:`cooperative_kept_heartbeats` (the giver rejoins the second round at once and
      waits there for the others' next heartbeat; 0 for Kafka's Java consumer, which keeps fetching them; a client
      that stops fetching while it rejoins, such as kafka-python, pays it); a partition whose owner sent LeaveGroup
      waits for the survivors to rejoin (:attr:`eager_orphan_heartbeats`, or :attr:`cooperative_orphan_heartbeats`),
      one whose owner crashed waits ``session.timeout.ms`` (:attr:`session_seconds`) first.
    - CONSUMER (KIP-848): the old owner releases a moved partition on its next heartbeat and the new owner takes it
      on its next (:attr:`consumer_move_heartbeats` of the broker's ``group.consumer.heartbeat.interval.ms``,
      :attr:`consumer_heartbeat_seconds`); a departed member's partitions go to the next member that heartbeats
      (:attr:`consumer_orphan_heartbeats`), after the broker's ``group.consumer.session.timeout.ms``
      (:attr:`consumer_session_seconds`) when it crashed.
    - :attr:`fetch_seconds`: every partition that changes hands also waits for its new owner's first fetch.
    - A static member back within its session timeout causes no rebalance (no membership change shows it): its own
      partitions wait while it is down and then :attr:`static_rejoin_seconds` (:func:`restart_pause`).
    - Not priced: the broker's ``group.initial.rebalance.delay.ms`` delays only an empty group's first join (the
      evaluation's first snapshot, which costs nothing).
    - A membership change the broker sees as several rebalances (a deploy wave: the leaves land first, the joins
      after; see docs/calibration.md) is priced as each of them: one :func:`rebalance_pause` call per rebalance.

    The factors (``*_heartbeats``, :attr:`fetch_seconds`) are measured (``make calibrate``); the intervals default to
    Kafka's defaults. ``sources`` names where each value came from (:data:`MEASURED`, :data:`KAFKA_DEFAULT`, a user
    option, the cluster's records); :meth:`with_settings` replaces intervals and records the source.
    """

    heartbeat_seconds: float = KAFKA_DEFAULT_SETTINGS["heartbeat_seconds"][1]
    session_seconds: float = KAFKA_DEFAULT_SETTINGS["session_seconds"][1]
    consumer_heartbeat_seconds: float = KAFKA_DEFAULT_SETTINGS["consumer_heartbeat_seconds"][1]
    consumer_session_seconds: float = KAFKA_DEFAULT_SETTINGS["consumer_session_seconds"][1]
    # measured: `make calibrate` on Kafka 4.4.0 (docs/calibration.md), groups of 6-9 members at the intervals of
    # CALIBRATION_SETTINGS, Kafka's Java consumer's groups; each factor is in units of the interval that paces it;
    # written by `python -m calibration.fit --write` (calibration/fit.py), pooled over the runs in calibration/history/
    # measured as today (calibration.fit.measured_as_today: the five of 2026-11-29); docs/calibration.md shows the run
    # after them
    eager_heartbeats: float = 0.034
    cooperative_heartbeats: float = 0.973
    cooperative_orphan_heartbeats: float = 0.547
    consumer_move_heartbeats: float = 0.651
    consumer_orphan_heartbeats: float = 0.651
    fetch_seconds: float = 0.057
    sources: tuple[tuple[str, str], ...] = _DEFAULT_SOURCES
    # added after `sources`, so that every earlier field keeps its place
    eager_orphan_heartbeats: float = 0.511
    cooperative_kept_heartbeats: float = 0.0
    static_rejoin_seconds: float = 0.246
    eager_crash_heartbeats: float = 0.331

    def __post_init__(self) -> None:
        for name in _MODEL_FIELDS:
            _check_seconds(name, getattr(self, name))

    def source(self, field: str) -> str:
        """Where the value of ``field`` came from."""
        return dict(self.sources).get(field, "given")

    def with_settings(self, source: str, **values: float) -> PauseModel:
        """A copy with ``values`` replaced (e.g. ``heartbeat_seconds=1.0``), each recorded as coming from ``source``.

        Raises:
            InvalidWeightError: an unknown field, or a value that is not a finite number >= 0, naming it.
        """
        unknown = sorted(set(values) - set(_MODEL_FIELDS))
        if unknown:
            msg = f"PauseModel has no field {unknown[0]!r}; its fields are {', '.join(_MODEL_FIELDS)}"
            raise InvalidWeightError(msg)
        fields = {name: getattr(self, name) for name in _MODEL_FIELDS}
        fields.update({name: _check_seconds(name, value) for name, value in values.items()})
        sources = dict(self.sources)
        sources.update(dict.fromkeys(values, source))
        return PauseModel(**fields, sources=tuple(sorted(sources.items())))

    def for_client(self, client: str) -> PauseModel:
        """A copy with ``client``'s own measured factors (:data:`CLIENT_PAUSE_FACTORS`) where its poll loop makes them
        differ from Kafka's Java consumer's; the same model for ``"java"`` and any client not measured.

        >>> DEFAULT_PAUSE_MODEL.for_client("java") == DEFAULT_PAUSE_MODEL
        True
        """
        factors = CLIENT_PAUSE_FACTORS.get(client)
        return self.with_settings(f"{MEASURED} ({client})", **factors) if factors else self

    def parameters(self) -> dict[str, tuple[float, str]]:
        """Every parameter: its value and its source, in field order."""
        return {name: (getattr(self, name), self.source(name)) for name in _MODEL_FIELDS}


CLIENT_PAUSE_FACTORS: Mapping[str, Mapping[str, float]] = {
    "aiokafka": {
        "eager_crash_heartbeats": 0.119,
        "eager_heartbeats": 0.063,
        "eager_orphan_heartbeats": 0.439,
        "static_rejoin_seconds": 0.63,
    },
    "kafka-python": {
        "cooperative_heartbeats": 1.11,
        "cooperative_kept_heartbeats": 0.955,
        "cooperative_orphan_heartbeats": 0.609,
        "static_rejoin_seconds": 1.017,
    },
}
"""Per Python client (this project's adapters), the factors ``make calibrate`` measured on its own groups where they
differ from Kafka's Java consumer's (:meth:`PauseModel.for_client`): kafka-python stops fetching the partitions it
keeps while it rejoins a cooperative rebalance's second round, and both take longer than Kafka's Java consumer to
bring a restarted static member back."""

DEFAULT_PAUSE_MODEL = PauseModel()
"""The calibrated model at Kafka's default settings."""


def rebalance_pause(  # noqa: PLR0913 - the counts of one rebalance
    protocol: RebalanceProtocol | PauseProtocol | str,
    model: PauseModel = DEFAULT_PAUSE_MODEL,
    *,
    moved: int,
    survivors_owned: int,
    orphaned: int = 0,
    crashed: int = 0,
    rejoined: int = 0,
    retained_revoking: int | None = None,
) -> float:
    """Partition-seconds not consumed because of one rebalance, by :class:`PauseModel` (``make calibrate``).

    ``moved`` and ``survivors_owned`` are as :func:`pause_partition_seconds` takes them; ``orphaned`` counts the
    partitions of members that left with a LeaveGroup (a graceful close) and ``crashed`` those of members that
    stopped without one (their session timed out). Unlike :func:`pause_partition_seconds`, orphaned partitions
    count: how long they wait depends on the protocol. ``rejoined`` counts, of ``survivors_owned``, the partitions
    of members that started the rebalance themselves (their subscription changed): under EAGER such a member
    revokes at once and waits, like an orphan, for the others to learn of the rebalance on their next heartbeat
    (:attr:`PauseModel.eager_orphan_heartbeats`; the others revoke together, a rejoin's
    :attr:`~PauseModel.eager_heartbeats`). Under COOPERATIVE such a member revokes nothing for it but waits in the
    join for the others' next heartbeat, as the ``retained_revoking`` partitions below wait in the second round:
    ``rejoined`` then counts the partitions it keeps (:func:`rejoined_partitions` gives either count), each priced at
    :attr:`~PauseModel.cooperative_kept_heartbeats`. KIP-848 has no join to wait in. 0 (the default) prices every
    survivor alike. Under EAGER the survivors of a rebalance that a crash started (``crashed`` > 0) wait
    :attr:`~PauseModel.eager_crash_heartbeats`, of any other :attr:`~PauseModel.eager_heartbeats`.

    Under COOPERATIVE, ``retained_revoking`` (:attr:`Movement.retained_revoking <assignors.metrics.Movement>`)
    counts the partitions kept by members that rejoin the second round at once and wait there for the others' next
    heartbeat: each waits :attr:`~PauseModel.cooperative_kept_heartbeats` (0 for Kafka's Java consumer, which keeps
    fetching while it rejoins; about one heartbeat for kafka-python, which does not). None (the default) counts
    every partition the survivors keep in a rebalance that moves something: an upper bound, for a caller that
    knows only the totals.

    Raises:
        InvalidWeightError: an unknown protocol, a negative count, or ``rejoined`` or ``retained_revoking`` over
            ``survivors_owned``, naming the field.

    >>> model = PauseModel(heartbeat_seconds=1.0, consumer_heartbeat_seconds=2.0, eager_heartbeats=0.5,
    ...                    eager_orphan_heartbeats=0.5,
    ...                    consumer_move_heartbeats=1.0, consumer_orphan_heartbeats=0.5, fetch_seconds=0.0)
    >>> rebalance_pause("EAGER", model, moved=2, survivors_owned=10, orphaned=4)
    7.0
    >>> rebalance_pause("EAGER", model.with_settings("doc", eager_crash_heartbeats=0.8, session_seconds=10.0),
    ...                 moved=2, survivors_owned=10, crashed=4)
    50.0
    >>> rebalance_pause("CONSUMER", model, moved=2, survivors_owned=10, orphaned=4)
    8.0
    >>> rebalance_pause("EAGER", model.with_settings("doc", eager_orphan_heartbeats=1.0), moved=0, survivors_owned=10,
    ...                 rejoined=4)
    7.0
    >>> waits = model.with_settings("doc", cooperative_heartbeats=1.0, cooperative_kept_heartbeats=1.0)
    >>> rebalance_pause("COOPERATIVE", waits, moved=2, survivors_owned=10, retained_revoking=3)
    5.0
    >>> rebalance_pause("COOPERATIVE", waits, moved=2, survivors_owned=10)
    10.0
    >>> rebalance_pause("COOPERATIVE", waits, moved=0, survivors_owned=10, rejoined=4, retained_revoking=0)
    4.0
    """
    kind = _pause_protocol(protocol)
    counts = (("moved", moved), ("survivors_owned", survivors_owned), ("orphaned", orphaned), ("crashed", crashed))
    parts = (("rejoined", rejoined), ("retained_revoking", retained_revoking or 0))
    for field, count in (*counts, *parts):
        if count < 0:
            msg = f"{field} is {count}; a partition count must be >= 0"
            raise InvalidWeightError(msg)
    for field, part in parts:
        if part > survivors_owned:
            msg = f"{field} is {part}; it counts some of survivors_owned ({survivors_owned})"
            raise InvalidWeightError(msg)
    m = model
    fetch = m.fetch_seconds
    if kind is PauseProtocol.CONSUMER:
        hand_over = m.consumer_orphan_heartbeats * m.consumer_heartbeat_seconds + fetch
        return (
            moved * (m.consumer_move_heartbeats * m.consumer_heartbeat_seconds + fetch)
            + orphaned * hand_over
            + crashed * (m.consumer_session_seconds + hand_over)
        )
    if kind is PauseProtocol.EAGER:
        rejoin = (m.eager_crash_heartbeats if crashed else m.eager_heartbeats) * m.heartbeat_seconds + fetch
        orphan = m.eager_orphan_heartbeats * m.heartbeat_seconds + fetch
        return (
            (survivors_owned - rejoined) * rejoin
            + (orphaned + rejoined) * orphan
            + crashed * (m.session_seconds + orphan)
        )
    orphan = m.cooperative_orphan_heartbeats * m.heartbeat_seconds + fetch
    if retained_revoking is None:
        retained_revoking = max(0, survivors_owned - moved) if moved else 0
    kept = (retained_revoking + rejoined) * m.cooperative_kept_heartbeats * m.heartbeat_seconds
    return (
        moved * (m.cooperative_heartbeats * m.heartbeat_seconds + fetch)
        + kept
        + orphaned * orphan
        + crashed * (m.session_seconds + orphan)
    )


def rejoined_partitions(
    protocol: RebalanceProtocol | PauseProtocol | str,
    before: Mapping[str, Sequence[TopicPartition]],
    after: Mapping[str, Sequence[TopicPartition]],
    topics_before: Mapping[str, Sequence[str]],
    topics_now: Mapping[str, Sequence[str]],
) -> int:
    """:func:`rebalance_pause`'s ``rejoined`` for one rebalance of a classic group, from its members' holdings and
    subscriptions before and after (keyed by the members' identities).

    The members whose subscription changed start the rebalance themselves. Under EAGER it counts everything they
    owned (they revoke it all at once); under COOPERATIVE what they keep (they revoke nothing for it but wait in
    the join, :func:`rebalance_pause`), less what :attr:`Movement.retained_revoking <assignors.metrics.Movement>`
    counts already (a member that also gives partitions up rejoins the second round too, and its kept partitions
    wait once: ``make calibrate`` measured 1.1-1.8 s for them, about one heartbeat); under KIP-848's CONSUMER
    protocol it is not priced (0). When only a partition
    count changed (the same members, the same subscriptions), the group's leader starts it: an average member's
    share of those partitions (:func:`leader_share`).

    Raises:
        InvalidWeightError: an unknown protocol.

    ``a`` adds topic ``u`` and keeps both its partitions; then it also gives ``t-1`` up (``retained_revoking``
    counts its ``t-0``); then nothing but a partition count changed (the leader's share of 4 kept by 2 members):

    >>> from assignors import TopicPartition as TP
    >>> before = {"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2), TP("t", 3)]}
    >>> kept = {"a": [TP("t", 0), TP("t", 1), TP("u", 0)], "b": [TP("t", 2), TP("t", 3)]}
    >>> gave = {"a": [TP("t", 0), TP("u", 0)], "b": [TP("t", 1), TP("t", 2), TP("t", 3)]}
    >>> was, now = {"a": ("t",), "b": ("t",)}, {"a": ("t", "u"), "b": ("t",)}
    >>> tuple(rejoined_partitions(p, before, kept, was, now) for p in ("EAGER", "COOPERATIVE", "CONSUMER"))
    (2, 2, 0)
    >>> tuple(rejoined_partitions(p, before, gave, was, now) for p in ("EAGER", "COOPERATIVE"))
    (2, 0)
    >>> rejoined_partitions("COOPERATIVE", before, before, was, was)
    2
    """
    kind = _pause_protocol(protocol)
    if kind is PauseProtocol.CONSUMER:
        return 0

    def differ(identity: str, topics: Sequence[str]) -> bool:
        was = topics_before[identity]
        return was != topics and tuple(was) != tuple(topics)  # a list and a tuple of the same topics are the same

    changed = [i for i, topics in topics_now.items() if i in topics_before and differ(i, topics)]
    recounted = bool(before) and not changed and topics_now.keys() == topics_before.keys()  # a partition count
    if not changed and not recounted:  # members joined or left: nobody rejoined on their own (most rebalances)
        return 0
    if kind is PauseProtocol.EAGER:
        counts = {identity: len(owned) for identity, owned in before.items()}
    else:  # what each member present before and after keeps
        counts = {}
        for identity, owned in before.items():
            if identity in after:
                now = set(after[identity])
                counts[identity] = sum(1 for tp in owned if tp in now)
        # a member that also gives partitions up waits once: Movement.retained_revoking counts what it keeps, when
        # another member gives nothing up
        if any(count == len(before[identity]) for identity, count in counts.items()):
            counts = {i: count if count == len(before[i]) else 0 for i, count in counts.items()}
    if recounted:
        return leader_share(sum(counts.get(i, 0) for i in before if i in after), len(before))
    return sum(counts.get(i, 0) for i in changed)


def leader_share(survivors_owned: int, members: int) -> int:
    """Of ``survivors_owned``, the partitions a classic group's leader holds, expected, when the group rebalances
    because a partition count changed (the same members, the same subscriptions): ``rebalance_pause``'s
    ``rejoined`` for that rebalance.

    Only the leader watches the metadata it assigned with (Kafka's ConsumerCoordinator keeps that snapshot on the
    leader alone), so it rejoins at once, revoking under EAGER, and the others when their next heartbeat tells them.
    Which member leads is the coordinator's choice (the first to join), so an average member's share, rounded.

    Raises:
        InvalidWeightError: a negative count, naming it.

    >>> leader_share(24, 6), leader_share(28, 6), leader_share(0, 0)
    (4, 5, 0)
    """
    for field, count in (("survivors_owned", survivors_owned), ("members", members)):
        if count < 0:
            msg = f"{field} is {count}; a count must be >= 0"
            raise InvalidWeightError(msg)
    return (survivors_owned + members // 2) // members if members else 0


def restart_pause(model: PauseModel = DEFAULT_PAUSE_MODEL, *, restarted: int, downtime_seconds: float) -> float:
    """Partition-seconds not consumed while static members restart within their session timeout (KIP-345).

    Such a restart is no rebalance: the member comes back under its ``group.instance.id`` and gets its partitions
    back, and nobody else stops. Its ``restarted`` partitions wait its ``downtime_seconds`` (from its close to its
    new process's start) plus :attr:`PauseModel.static_rejoin_seconds` (the new consumer's start-up, its join and
    first fetch). The same under every protocol.

    Raises:
        InvalidWeightError: a negative count or a duration that is negative, NaN or infinite, naming the field.

    >>> restart_pause(PauseModel(static_rejoin_seconds=0.5), restarted=4, downtime_seconds=2.0)
    10.0
    """
    if restarted < 0:
        msg = f"restarted is {restarted}; a partition count must be >= 0"
        raise InvalidWeightError(msg)
    return restarted * (_check_seconds("downtime_seconds", downtime_seconds) + model.static_rejoin_seconds)
