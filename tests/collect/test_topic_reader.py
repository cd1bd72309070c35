"""``collect``'s read loop decides the end of a partition: only at or past the end the read started with, and an
end past the last record handed over only once reading again from that record comes to the same end.

In CI a read ended with exit 0, 35 records short, when the broker was killed mid-read: an end of partition was
taken for the end of the read. These cases feed the reader's ``handle`` the events a consumer hands over, without a
broker; the real-broker cases are in test_collect_secured.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

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


@dataclass
class _Record:
    """A record without a key (the reader counts it and moves on)."""

    number: int
    at: int

    def error(self) -> None:
        return None

    def partition(self) -> int:
        return self.number

    def offset(self) -> int:
        return self.at

    def timestamp(self) -> tuple[int, int]:
        return (0, 0)

    def key(self) -> None:
        return None

    def value(self) -> None:
        return None


@dataclass
class _Consumer:
    """Remembers where the reader asked to read from again."""

    seeks: list[tuple[int, int]] = field(default_factory=list)

    def seek(self, partition: object) -> None:
        self.seeks.append((partition.partition, partition.offset))  # type: ignore[attr-defined]


def _reader(high: dict[int, int], *, check_ends: bool = True) -> _TopicReader:
    reader = _TopicReader.__new__(_TopicReader)
    reader.consumer, reader.check_ends = _Consumer(), check_ends
    reader.topic, reader.settings, reader.partitions = "copies", {}, sorted(high)
    reader.high, reader.target = dict(high), dict(high)
    reader.position, reader.read_to = dict.fromkeys(high, 0), dict.fromkeys(high, 0)
    reader.checking, reader.done = {}, set()
    return reader


def _records(reader: _TopicReader, number: int, offsets: Iterable[int]) -> None:
    for offset in offsets:
        assert reader.handle(_Record(number, offset), HistoryBuilder())


def test_an_end_below_the_starting_high_watermark_does_not_end_the_read() -> None:
    reader = _reader({0: 40})
    _records(reader, 0, range(6))
    assert reader.handle(_End(0, 6), HistoryBuilder())
    assert not reader.at_end()
    assert reader.position == {0: 6}
    _records(reader, 0, range(6, 40))
    assert reader.handle(_End(0, 40), HistoryBuilder())
    assert reader.at_end()
    assert reader.consumer.seeks == []  # every record handed over: nothing to check


def test_an_end_past_the_records_handed_over_is_read_again_and_the_records_missed_come() -> None:
    """The CI case: 5 records handed over, then the end reported at 40. The reader asks for offset 5 again; the
    records missed come, then the end again: the read ends with all 40."""
    reader = _reader({0: 40})
    _records(reader, 0, range(5))
    reader.handle(_End(0, 40), HistoryBuilder())
    assert not reader.at_end()
    assert reader.consumer.seeks == [(0, 5)]
    _records(reader, 0, range(5, 40))
    reader.handle(_End(0, 40), HistoryBuilder())
    assert reader.at_end()
    assert reader.consumer.seeks == [(0, 5)]


def test_an_end_past_the_last_record_counts_control_records_once_confirmed() -> None:
    """A transaction's commit marker is the partition's last offset: the end is reported past the last record; read
    again from there, the same end and no record: the end."""
    reader = _reader({0: 6, 1: 0})
    _records(reader, 0, (0, 2, 4))  # markers at 1, 3, 5
    reader.handle(_End(0, 6), HistoryBuilder())
    assert reader.consumer.seeks == [(0, 5)]
    reader.handle(_End(0, 6), HistoryBuilder())
    assert not reader.at_end()  # partition 1, empty, has not answered yet
    reader.handle(_End(1, 0), HistoryBuilder())
    assert reader.at_end()
    assert reader.consumer.seeks == [(0, 5)]


def test_following_checks_no_end() -> None:
    reader = _reader({0: 40}, check_ends=False)
    _records(reader, 0, range(5))
    reader.handle(_End(0, 40), HistoryBuilder())
    assert reader.consumer.seeks == []
    assert reader.position == {0: 40}


@given(
    high=st.integers(0, 60),
    events=st.lists(st.one_of(st.integers(0, 60).map(lambda at: ("end", at)), st.just(("record", 0))), max_size=30),
)
def test_the_read_ends_only_past_the_starting_high_watermark_and_every_gap_read_again(
    high: int, events: list[tuple[str, int]]
) -> None:
    """Whatever ends librdkafka reports between the records: the read ends only at an end at or past the starting
    high watermark, and either every offset before it was handed over as a record, or the end was reported twice
    with the reader asking, in between, for the offset after the last record and getting no record since (the gap:
    control records only)."""
    reader = _reader({0: high})
    handed: list[int] = []
    ends: list[int] = []
    for kind, at in events:
        if reader.at_end():
            break
        if kind == "record":
            offset = reader.read_to[0] + 1 if reader.read_to[0] % 3 == 2 else reader.read_to[0]  # a marker skipped
            reader.handle(_Record(0, offset), HistoryBuilder())
            handed.append(offset)
        else:
            reader.handle(_End(0, at), HistoryBuilder())
            ends.append(at)
    if reader.at_end():
        end = ends[-1]
        assert end >= high
        past_last = handed[-1] + 1 if handed else 0
        # a record after the reader asked to read again would put the last record past where it asked
        assert past_last >= end or (ends.count(end) >= 2 and reader.consumer.seeks[-1:] == [(0, past_last)])
