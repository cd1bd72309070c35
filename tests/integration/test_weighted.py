"""weighted-sticky in real groups on a real broker: the members measure what they consume and report it, the
leader evens the measured loads within the guarantee, and a rebalance within the tolerance moves nothing.

A producer writes 40 records/s to each of three hot partitions and 4 records/s to each of the nine others (twelve
in all). Three members join and consume for a measurement window; a fourth joins (one rebalance, with the loads
the first three measured); then a member subscribed only to another topic joins, so the group rebalances while
its loads are within the tolerance. Two groups: kafka-python members (COOPERATIVE), and kafka-python beside
aiokafka members (EAGER, aiokafka's only protocol).
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Mapping
from functools import partial
from typing import Any

import pytest
from confluent_kafka import Producer

from assignors import RebalanceProtocol, Subscription, TopicPartition
from assignors._builtin.weighted.weights import merge_reports, resolve_weights
from assignors._wire.weighted import decode_weighted_user_data
from assignors.testing import KafkaBroker
from helpers.group_log import GroupLog
from helpers.members import JOIN_TIMEOUT_S, PARTITIONS, AiokafkaMember, KafkaPythonMember, Led, Member
from integration.conftest import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

HOT = (0, 1, 2)
HOT_RATE, COLD_RATE = 40, 4  # records/s
WINDOW_S = 8.0  # the members' measurement window: long enough that the rates' noise stays well inside the tolerance
TOLERANCE = 0.1
STRATEGY = "weighted-sticky"


class SkewedProducer:
    """Writes :data:`HOT_RATE` records/s to each hot partition and :data:`COLD_RATE` to each other one, on a fixed
    schedule (a late tick is caught up, so a starved thread keeps the average), and remembers when it wrote what:
    a member's measurement is checked against what was written in its window, not against the nominal rates."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._written: dict[int, list[float]] = {p: [] for p in range(PARTITIONS)}  # monotonic times, per partition
        self.thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5, "log_level": 2})
        start = time.monotonic()
        tick = 0
        while not self.stop.is_set():
            now = time.monotonic()
            with self._lock:
                for partition in range(PARTITIONS):
                    if partition in HOT or tick % (HOT_RATE // COLD_RATE) == 0:
                        producer.produce(self.topic, value=b"x" * 100, partition=partition)
                        self._written[partition].append(now)
            producer.poll(0)
            tick += 1
            self.stop.wait(max(0.0, start + tick / HOT_RATE - time.monotonic()))
        producer.flush(10)

    def rate(self, partition: int, since: float, until: float) -> float:
        """Records/s written to ``partition`` in [since, until) (``time.monotonic`` times)."""
        with self._lock:
            written = sum(since <= at < until for at in self._written[partition])
        return written / (until - since)

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(20)


def weighted_kafka_python(
    name: str, bootstrap: str, topic: str, group: str, log: GroupLog, led: list[Led], protocol: Any
) -> KafkaPythonMember:
    """A kafka-python consumer running our weighted-sticky, bound so that it measures and reports its loads."""
    return KafkaPythonMember(name, bootstrap, topic, group, log, STRATEGY, led, protocol=protocol, window_s=WINDOW_S)


def weighted_aiokafka(
    name: str, bootstrap: str, topic: str, group: str, log: GroupLog, led: list[Led], protocol: Any
) -> AiokafkaMember:
    """An aiokafka consumer (EAGER, aiokafka's only protocol) running our weighted-sticky, bound likewise."""
    del protocol
    return AiokafkaMember(name, bootstrap, topic, group, log, STRATEGY, led, window_s=WINDOW_S)


def _settled(
    log: GroupLog, members: list[str], *, deadline_s: float = 60.0, quiet_s: float = 3.0
) -> dict[str, set[int]]:
    """Wait until ``members`` hold every partition between them, each some, and no listener fired for ``quiet_s``."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        events = log.snapshot()
        held = log.holdings()
        mine = {m: held.get(m, set()) for m in members}
        if (
            set().union(*mine.values()) == set(range(PARTITIONS))
            and all(mine.values())
            and events
            and time.monotonic() - events[-1].at >= quiet_s
        ):
            return mine
        time.sleep(0.2)
    pytest.fail(f"the group did not settle in {deadline_s} s; events: {log.snapshot()}")


def _holding(log: GroupLog, member: str, partitions: set[int]) -> None:
    """Wait until ``member`` holds ``partitions``."""
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    while log.holdings().get(member) != partitions:
        if time.monotonic() > deadline:
            pytest.fail(f"{member} did not get {partitions} in {JOIN_TIMEOUT_S} s; events: {log.snapshot()}")
        time.sleep(0.2)


def _leader_weights(subscriptions: Mapping[str, Subscription], topic: str) -> dict[int, float]:
    """The weights the leader used: the members' reports merged, unreported partitions at their topic's mean."""
    decoded = [decode_weighted_user_data(s.user_data) for s in subscriptions.values() if s.user_data]
    reports = merge_reports((d.generation, [*d.loads, *d.released]) for d in decoded)
    weights = resolve_weights({topic: PARTITIONS}, None, reports)
    return dict(enumerate(weights))


def _condition_c(holdings: Mapping[str, set[int]], weights: Mapping[int, float]) -> list[str]:
    """Every (u, p, v) with load(u) > load(v) + w(p) + tol (tol: the tolerance times the mean load)."""
    load = {m: math.fsum(weights[p] for p in held) for m, held in holdings.items()}
    tol = TOLERANCE * math.fsum(load.values()) / len(load)
    return [
        f"{u} ({load[u]:.1f}) holds {p} ({weights[p]:.1f}); {v} has {load[v]:.1f}"
        for u, held in holdings.items()
        for p in held
        for v in holdings
        if v != u and weights[p] > 0 and load[u] > load[v] + weights[p] + tol
    ]


@pytest.mark.parametrize(
    "kinds",
    [
        pytest.param(("kp", "kp", "kp", "kp"), id="kafka-python-cooperative"),
        pytest.param(("kp", "aio", "aio", "kp"), id="kafka-python-and-aiokafka-eager"),
    ],
)
def test_measured_loads_are_evened_and_a_rebalance_within_the_tolerance_moves_nothing(
    broker: KafkaBroker, topic: str, group: str, kinds: tuple[str, ...]
) -> None:
    """After the fourth member joins, the leader's measured loads satisfy condition C and no member holds two hot
    partitions; a later rebalance moves nothing; no partition is ever held by two members."""
    eager = "aio" in kinds
    protocol = RebalanceProtocol.EAGER if eager else RebalanceProtocol.COOPERATIVE
    other = f"other-{uuid.uuid4().hex[:12]}"
    create_topic(broker.bootstrap_servers, other, 1)
    log, other_log = GroupLog(), GroupLog()
    led: list[Led] = []
    classes = {"kp": weighted_kafka_python, "aio": weighted_aiokafka}
    start = {
        name: partial(classes[kind], name, broker.bootstrap_servers, topic, group, log, led, protocol)
        for name, kind in zip("abcd", kinds, strict=True)
    }
    producer = SkewedProducer(broker.bootstrap_servers, topic)
    members: dict[str, Member] = {}
    try:
        for name in "abc":
            members[name] = start[name]()
        _settled(log, ["a", "b", "c"])
        time.sleep(WINDOW_S)  # every partition measured over a whole window
        led.clear()
        members["d"] = start["d"]()
        evened = _settled(log, ["a", "b", "c", "d"])
        last = led[-1]
        weights = _leader_weights(last.subscriptions, topic)
        given = {m.split("-", 1)[0]: set(parts) for m, parts in last.assignment.items()}  # ids are client id-uuid
        assert given == evened  # what the last round assigned is what the members hold
        assert _condition_c(evened, weights) == []
        assert set(sorted(weights, key=weights.__getitem__)[-3:]) == set(HOT)  # the leader saw the hot ones so
        assert all(len(held & set(HOT)) <= 1 for held in evened.values()), evened
        true = {m: sum(HOT_RATE if p in HOT else COLD_RATE for p in held) for m, held in evened.items()}
        print(f"{kinds}: measured {weights}; held {evened}; written rates per member {true}")  # noqa: T201
        time.sleep(2.0)
        members["e"] = weighted_kafka_python("e", broker.bootstrap_servers, other, group, other_log, led, protocol)
        _holding(other_log, "e", {0})  # e's one partition, of ``other``
        again = _settled(log, ["a", "b", "c", "d"], quiet_s=4.0)
        seen = _leader_weights(led[-1].subscriptions, topic)
        print(f"{kinds}: measured again {seen}; held {again}")  # noqa: T201
        assert _condition_c(again, seen) == []
        # Within the tolerance, by the loads the leader saw this round, nothing moves. On a loaded machine a
        # member's measurement can fall behind by more than the tolerance (a poll loop starved for seconds, CI with
        # three brokers at once): the leader then evens what it saw, which the line above checks.
        if _condition_c(evened, seen) == []:
            assert again == evened, seen
        assert any(m.startswith("e-") for call in led for m in call.subscriptions)  # it rebalanced with e in it
        assert log.double_ownership() == []
    finally:
        for running in members.values():
            running.leave()
        producer.finish()
    assert {m.name: m.error for m in members.values()} == dict.fromkeys(members)


def test_a_member_measures_what_it_consumes(broker: KafkaBroker, topic: str, group: str) -> None:
    """A lone bound kafka-python member reports what its polls returned per second of the window, and its
    partitions' shares of that are their shares of what the producer wrote (hot and cold alike)."""
    log: GroupLog = GroupLog()
    led: list[Led] = []
    producer = SkewedProducer(broker.bootstrap_servers, topic)
    member = weighted_kafka_python("a", broker.bootstrap_servers, topic, group, log, led, RebalanceProtocol.COOPERATIVE)
    delivered: dict[int, list[float]] = {p: [] for p in range(PARTITIONS)}  # when each record reached the member
    measured_poll = member.consumer.poll  # the bound adapter's: it counts, then returns what the client polled

    def counting_poll(*args: Any, **kwargs: Any) -> Any:
        batches = measured_poll(*args, **kwargs)
        at = time.monotonic()
        for tp, records in batches.items():
            delivered[tp.partition].extend([at] * len(records))
        return batches

    member.consumer.poll = counting_poll
    try:
        _settled(log, ["a"])
        time.sleep(WINDOW_S + 1)
        adapter = member.consumer.config["partition_assignment_strategy"][0]
        rates = adapter.meter.rates()
        now = time.monotonic()  # the meter's clock: its window is the whole seconds from ceil(now - WINDOW_S)
        since = math.ceil(now - WINDOW_S)
        consumed = {p: sum(since <= at < now for at in delivered[p]) / (now - since) for p in range(PARTITIONS)}
        written = {p: producer.rate(p, since, now) for p in range(PARTITIONS)}
    finally:
        member.leave()
        producer.finish()
    assert member.error is None
    measured = {p: rates[TopicPartition(topic, p)] for p in range(PARTITIONS)}
    cold = [p for p in range(PARTITIONS) if p not in HOT]
    behind = {p: measured[p] / written[p] - 1 for p in range(PARTITIONS)}
    print(  # noqa: T201 - the figures docs/weighted.md quotes
        f"measured over {WINDOW_S:g} s: hot {[round(measured[p], 1) for p in HOT]} (written "
        f"{[round(written[p], 1) for p in HOT]}/s), cold {[round(measured[p], 1) for p in cold]} (written "
        f"{[round(written[p], 1) for p in cold]}/s); {min(behind.values()):+.1%} to {max(behind.values()):+.1%} "
        "of what was written"
    )
    # The meter is what the polls returned, per second of the window (the records of the few microseconds between
    # its clock and ours aside).
    assert all(math.isclose(measured[p], consumed[p], rel_tol=0.03) for p in range(PARTITIONS)), (measured, consumed)
    # What the polls return can trail what is written (a client starved of CPU falls behind, by as much on each
    # partition: one fetch serves them all), so what is checked against the producer is each partition's share.
    total_measured, total_written = sum(measured.values()), sum(written.values())
    shares = {p: (measured[p] / total_measured) / (written[p] / total_written) - 1 for p in range(PARTITIONS)}
    assert all(abs(shares[p]) <= 0.1 for p in HOT), shares
    assert all(abs(shares[p]) <= 0.35 for p in cold), shares  # ~30 records each: a few either side of the window
