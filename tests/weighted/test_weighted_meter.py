"""The adapters' rate meter: rates over a sliding window of whole seconds, given-up partitions kept until they
leave the window, the adapters measuring only for an assignor that takes loads."""

from __future__ import annotations

import pytest

from assignors import ConfigurationError, TopicPartition, WeightedStickyAssignor, get_assignor
from assignors._clients import RateMeter, measure_kafka_python, report_measured_loads

TP = TopicPartition


class Clock:
    def __init__(self) -> None:
        self.now = 100.25

    def __call__(self) -> float:
        return self.now


def test_a_steady_partition_is_measured_at_its_rate_whatever_the_fraction_of_a_second() -> None:
    """40 records every second for a minute, read at a quarter past: 40/s over a 30 s window, no edge bias."""
    clock = Clock()
    meter = RateMeter(30.0, clock=clock)
    meter.assigned([TP("t", 0)])
    for _ in range(60):
        clock.now += 1.0
        meter.record(TP("t", 0), 40, 4000)
    assert meter.rates() == {TP("t", 0): pytest.approx(40.0, rel=0.04)}
    assert meter.rates(in_bytes=True) == {TP("t", 0): pytest.approx(4000.0, rel=0.04)}


def test_a_new_partition_is_measured_over_the_time_it_was_owned_and_not_before_a_second() -> None:
    """Owned for half a second: not measured; for 5 s of a 30 s window: what it delivered over 5 s."""
    clock = Clock()
    meter = RateMeter(30.0, clock=clock)
    meter.assigned([TP("t", 0)])
    clock.now += 0.5
    assert meter.rates() == {}
    for _ in range(5):
        meter.record(TP("t", 0), 10, 0)
        clock.now += 1.0
    assert meter.rates()[TP("t", 0)] == pytest.approx(10.0, rel=0.15)


def test_a_partition_given_up_keeps_its_rate_until_it_leaves_the_window() -> None:
    """Given up, a partition is still reported over the time it was owned; a window later it is forgotten."""
    clock = Clock()
    meter = RateMeter(10.0, clock=clock)
    meter.assigned([TP("t", 0), TP("t", 1)])
    for _ in range(10):
        clock.now += 1.0
        meter.record(TP("t", 0), 50, 0)
        meter.record(TP("t", 1), 5, 0)
    meter.assigned([TP("t", 1)])
    clock.now += 2.0
    assert meter.rates()[TP("t", 0)] == pytest.approx(50.0, rel=0.15)
    clock.now += 20.0
    meter.assigned([TP("t", 1)])
    assert TP("t", 0) not in meter.rates()


def test_a_window_under_a_second_is_refused() -> None:
    """The window must hold at least one whole bucket."""
    with pytest.raises(ConfigurationError, match="window_s"):
        RateMeter(0.5)


def test_only_an_assignor_that_takes_loads_is_measured_for() -> None:
    """Binding sticky changes nothing (no meter, poll untouched); binding weighted-sticky wraps poll and reports."""

    class Consumer:
        def poll(self, **_: object) -> dict[object, list[object]]:
            return {}

    plain = Consumer()
    assert measure_kafka_python(get_assignor("sticky"), plain, 30.0, ()) is None
    assert "poll" not in vars(plain)
    inner = WeightedStickyAssignor()
    consumer = Consumer()
    meter = measure_kafka_python(inner, consumer, 30.0, ())
    assert meter is not None
    assert "poll" in vars(consumer)
    report_measured_loads(inner, meter)  # nothing measured yet: an empty report, accepted
