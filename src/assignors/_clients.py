"""What the client adapters share: the assignor they wrap, checked for the protocol the client runs, the
partition counts a client's cluster metadata knows, and the consumption rates a member measures (for
assignors that balance load, such as ``weighted-sticky``)."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from assignors._builtin.registry import get_assignor
from assignors._core.errors import ConfigurationError
from assignors._core.model import Cluster, RebalanceProtocol, Subscription, TopicPartition

if TYPE_CHECKING:
    from assignors._core.interface import ConsumerPartitionAssignor


def resolve(assignor: ConsumerPartitionAssignor | str) -> ConsumerPartitionAssignor:
    """The assignor itself, or a fresh built-in one for a name."""
    return get_assignor(assignor) if isinstance(assignor, str) else assignor


def require_protocol(assignor: ConsumerPartitionAssignor, protocol: RebalanceProtocol, client: str) -> None:
    """Refuse an assignor that cannot run ``protocol``, the one the ``client`` consumer will run."""
    if protocol not in assignor.supported_protocols:
        msg = f"{client} runs {protocol.name}; assignor {assignor.name!r} does not support {protocol.name}"
        raise ConfigurationError(msg)


def cluster_of(metadata: Any, subscriptions: Iterable[Subscription]) -> Cluster:
    """The partition counts ``metadata`` (a client's ClusterMetadata) knows for the subscribed topics."""
    counts: dict[str, int] = {}
    for topic in sorted({t for s in subscriptions for t in s.topics}):
        partitions = metadata.partitions_for_topic(topic)
        if partitions:
            counts[topic] = max(partitions) + 1
    return Cluster(counts)


DEFAULT_WINDOW_S = 30.0
"""How far back a member's measured consumption rate looks, by default (seconds)."""
MIN_MEASURED_S = 1.0
"""A partition owned for less than this has no rate yet: it is reported as not measured."""


class RateMeter:
    """Each partition's consumption rate over a sliding window, in records and in bytes per second.

    The adapters count what each poll returns (:meth:`record`); a partition's rate is what it
    delivered in the last ``window_s`` seconds over the time it was owned within them, so a
    partition assigned 5 s ago is measured over 5 s, not 30. Counts go into one-second buckets,
    so memory is bounded by ``window_s`` buckets per owned partition.

    >>> clock = iter([0.0, 0.0, 10.0, 20.0]).__next__
    >>> meter = RateMeter(window_s=30.0, clock=clock)
    >>> from assignors import TopicPartition as TP
    >>> meter.assigned([TP("t", 0)])
    >>> meter.record(TP("t", 0), 100, 4000)
    >>> meter.record(TP("t", 0), 100, 4000)
    >>> meter.rates()
    {TopicPartition(topic='t', partition=0): 10.0}
    """

    def __init__(self, window_s: float = DEFAULT_WINDOW_S, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not math.isfinite(window_s) or window_s < MIN_MEASURED_S:
            msg = f"window_s={window_s!r} must be a finite number of seconds >= {MIN_MEASURED_S}"
            raise ConfigurationError(msg)
        self.window_s = window_s
        self._clock = clock
        self._since: dict[TopicPartition, float] = {}
        self._until: dict[TopicPartition, float] = {}  # when it was given up (absent: owned)
        self._buckets: dict[TopicPartition, deque[list[int]]] = {}  # [second, records, bytes]

    def assigned(self, partitions: Iterable[TopicPartition]) -> None:
        """This member owns ``partitions`` now: new ones start being measured; one it gave up keeps its rate (over
        the time it was owned) until it falls out of the window, so the leader of the round that hands it over
        still knows what it weighs."""
        now = self._clock()
        owned = set(partitions)
        for tp in list(self._since):
            if tp in owned:
                if self._until.pop(tp, None) is not None:  # owned again: measured afresh
                    del self._since[tp]
                    self._buckets.pop(tp, None)
            elif tp not in self._until:
                self._until[tp] = now
            elif self._until[tp] < now - self.window_s:
                del self._since[tp], self._until[tp]
                self._buckets.pop(tp, None)
        for tp in owned:
            self._since.setdefault(tp, now)

    def record(self, tp: TopicPartition, records: int, size: int) -> None:
        """``records`` records of ``size`` bytes in all were consumed from ``tp`` just now."""
        second = int(self._clock())
        buckets = self._buckets.setdefault(tp, deque())
        if buckets and buckets[-1][0] == second:
            buckets[-1][1] += records
            buckets[-1][2] += size
        else:
            buckets.append([second, records, size])
            horizon = second - self.window_s
            while buckets and buckets[0][0] < horizon:
                buckets.popleft()

    def rates(self, *, in_bytes: bool = False) -> dict[TopicPartition, float]:
        """Records (or bytes) per second of each partition owned for at least ``MIN_MEASURED_S`` seconds of the
        window, including partitions given up within it."""
        now = self._clock()
        horizon = math.ceil(now - self.window_s)  # the first whole one-second bucket inside the window
        column = 2 if in_bytes else 1
        result: dict[TopicPartition, float] = {}
        for tp in sorted(self._since):
            elapsed = min(now, self._until.get(tp, now)) - max(self._since[tp], horizon)
            if elapsed < MIN_MEASURED_S:
                continue
            total = sum(b[column] for b in self._buckets.get(tp, ()) if b[0] >= horizon)
            result[tp] = total / elapsed
        return result


def report_measured_loads(inner: object, meter: RateMeter | None) -> None:
    """Before a join: hand an assignor that takes loads (``report_loads``) what ``meter`` measured."""
    report = getattr(inner, "report_loads", None)
    if meter is None or report is None:
        return
    in_bytes = int(getattr(inner, "unit", 0)) == 1
    report(meter.rates(in_bytes=in_bytes), window_ms=int(meter.window_s * 1000))


def record_size(record: Any) -> int:
    """A consumed record's key and value bytes, as both clients' ConsumerRecord carries them (-1: none)."""
    key = getattr(record, "serialized_key_size", 0) or 0
    value = getattr(record, "serialized_value_size", 0) or 0
    return max(0, key) + max(0, value)


def measuring(inner: object, window_s: float) -> RateMeter | None:
    """A meter for an assignor that takes loads (``report_loads``), else None: nothing to measure."""
    return RateMeter(window_s) if getattr(inner, "report_loads", None) is not None else None


def note_assigned(meter: RateMeter | None, partitions: Iterable[TopicPartition]) -> None:
    """Tell ``meter`` (if any) what its member owns now."""
    if meter is not None:
        meter.assigned(partitions)


def count_batches(meter: RateMeter, batches: Any) -> None:
    """Count what one poll returned: a mapping of a client's TopicPartition to its records."""
    for tp, records in batches.items():
        meter.record(TopicPartition(tp.topic, tp.partition), len(records), sum(map(record_size, records)))


def measure_kafka_python(
    inner: object, consumer: Any, window_s: float, owned: Iterable[TopicPartition]
) -> RateMeter | None:
    """For an assignor that takes loads, a meter of what ``consumer`` (a ``KafkaConsumer``) consumes, which owns
    ``owned`` now: its ``poll`` (which its iterator calls too) is wrapped to count. None for other assignors."""
    meter = measuring(inner, window_s)
    if meter is None:
        return None
    meter.assigned(owned)
    poll = consumer.poll

    def measured_poll(*args: Any, **kwargs: Any) -> Any:
        batches = poll(*args, **kwargs)
        count_batches(meter, batches)
        return batches

    consumer.poll = measured_poll
    return meter


def measure_aiokafka(inner: object, consumer: Any, window_s: float) -> RateMeter | None:
    """For an assignor that takes loads, a meter of what ``consumer`` (an ``AIOKafkaConsumer``) consumes: its
    ``getmany`` and ``getone`` (which its iterator calls) are wrapped to count. None for other assignors."""
    meter = measuring(inner, window_s)
    if meter is None:
        return None
    getmany, getone = consumer.getmany, consumer.getone

    async def measured_getmany(*args: Any, **kwargs: Any) -> Any:
        batches = await getmany(*args, **kwargs)
        count_batches(meter, batches)
        return batches

    async def measured_getone(*args: Any, **kwargs: Any) -> Any:
        record = await getone(*args, **kwargs)
        meter.record(TopicPartition(record.topic, record.partition), 1, record_size(record))
        return record

    consumer.getmany = measured_getmany
    consumer.getone = measured_getone
    return meter
