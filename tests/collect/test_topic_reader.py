"""``collect``'s read loop decides the end of a partition: only at or past the end the read started with.

librdkafka can report the end of a partition below its high watermark (confluentinc/librdkafka#3411; seen here
when the broker was killed mid-read): ``collect`` then went on as if it had read everything and exited 0. These
cases feed the reader's ``handle`` the events a consumer hands over, without a broker.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("confluent_kafka", reason="needs the collect extra")

from confluent_kafka import KafkaError

from assignors.collect._kafka import _TopicReader
from assignors.offsets_topic import HistoryBuilder


@dataclass
class _End:
    """The end-of-partition event as confluent-kafka hands it over: an error, and the offset the fetch stood at."""

    number: int
    at: int

    def error(self) -> KafkaError:
        return KafkaError(KafkaError._PARTITION_EOF)

    def partition(self) -> int:
        return self.number

    def offset(self) -> int:
        return self.at


def _reader(high: dict[int, int]) -> _TopicReader:
    reader = _TopicReader.__new__(_TopicReader)
    reader.topic, reader.settings, reader.partitions = "copies", {}, sorted(high)
    reader.high, reader.target = dict(high), dict(high)
    reader.position = dict.fromkeys(high, 0)
    reader.done = set()
    return reader


def test_an_end_below_the_starting_high_watermark_does_not_end_the_read() -> None:
    reader = _reader({0: 40})
    assert reader.handle(_End(0, 6), HistoryBuilder())
    assert not reader.at_end()
    assert reader.position == {0: 6}
    assert reader.handle(_End(0, 40), HistoryBuilder())
    assert reader.at_end()


def test_an_end_past_the_last_record_counts_control_records() -> None:
    """A transaction's commit marker is the partition's last offset: the end is reported past it."""
    reader = _reader({0: 6, 1: 0})
    reader.handle(_End(0, 6), HistoryBuilder())
    assert not reader.at_end()  # partition 1, empty, has not answered yet
    reader.handle(_End(1, 0), HistoryBuilder())
    assert reader.at_end()


@given(high=st.integers(0, 1000), at=st.integers(0, 1000))
def test_the_read_ends_exactly_when_the_end_reaches_the_starting_high_watermark(high: int, at: int) -> None:
    reader = _reader({0: high})
    reader.handle(_End(0, at), HistoryBuilder())
    assert reader.at_end() == (at >= high)
