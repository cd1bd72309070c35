"""weighted-sticky's user data: round trips, forward compatibility, and untrusted bytes refused with their offset."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import Assignment, Cluster, ProtocolError, Subscription, TopicPartition, WeightedStickyAssignor
from assignors._wire.weighted import (
    LoadUnit,
    decode_weighted_assignment_data,
    decode_weighted_user_data,
    encode_weighted_assignment_data,
    encode_weighted_user_data,
)
from assignors.testing import topic_names

TP = TopicPartition
_loads = st.one_of(st.none(), st.floats(min_value=0, max_value=1e12, allow_nan=False))


@st.composite
def _reports(draw: st.DrawFn) -> tuple[list[tuple[TP, float | None]], list[TP]]:
    topics = draw(st.lists(topic_names(), min_size=0, max_size=3, unique=True))
    loads: list[tuple[TP, float | None]] = []
    promised: list[TP] = []
    for topic in topics:
        for number in draw(st.lists(st.integers(0, 2**31 - 1), max_size=4, unique=True)):
            if draw(st.booleans()):
                loads.append((TP(topic, number), draw(_loads)))
            else:
                promised.append(TP(topic, number))
    return loads, promised


@given(report=_reports(), generation=st.integers(-1, 2**31 - 1), unit=st.sampled_from(LoadUnit))
def test_subscription_user_data_round_trips(
    report: tuple[list[tuple[TP, float | None]], list[TP]], generation: int, unit: LoadUnit
) -> None:
    """What a member encodes, the leader decodes: loads (None: not measured), generation, unit, promises."""
    loads, promised = report
    data = encode_weighted_user_data(loads, generation=generation, unit=unit, window_ms=30000, promised=promised)
    decoded = decode_weighted_user_data(data)
    assert sorted(decoded.loads, key=lambda e: e[0]) == sorted(loads, key=lambda e: e[0])
    assert (decoded.generation, decoded.unit, decoded.window_ms) == (generation, unit, 30000)
    assert sorted(decoded.promised) == sorted(promised)


@given(report=_reports())
def test_every_truncation_is_a_protocol_error_with_an_offset_inside_the_input(
    report: tuple[list[tuple[TP, float | None]], list[TP]],
) -> None:
    """Bytes cut anywhere never decode and never read past the end: ProtocolError at an offset within them."""
    loads, promised = report
    data = encode_weighted_user_data(loads, generation=4, promised=promised)
    for end in range(len(data)):
        with pytest.raises(ProtocolError) as error:
            decode_weighted_user_data(data[:end])
        assert 0 <= error.value.offset <= end


@given(garbage=st.binary(max_size=64))
def test_garbage_is_a_protocol_error_or_a_report(garbage: bytes) -> None:
    """Any bytes either decode or raise ProtocolError (nothing else escapes)."""
    try:
        decode_weighted_user_data(garbage)
    except ProtocolError as error:
        offset = error.offset
    else:
        return
    assert offset >= 0


def test_a_lying_array_length_is_refused_before_anything_is_allocated() -> None:
    """A count of two billion entries in a 20-byte blob is refused at the count's offset."""
    data = struct.pack(">hhii", 1, 0, 3, 0) + struct.pack(">i", 2**31 - 1)
    with pytest.raises(ProtocolError, match="offset 12") as error:
        decode_weighted_user_data(data)
    assert error.value.offset == 12
    entries = struct.pack(">hhii", 1, 0, 3, 0) + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t"
    with pytest.raises(ProtocolError, match=r"owned\.partitions"):
        decode_weighted_user_data(entries + struct.pack(">i", 10**9))


@pytest.mark.parametrize(
    ("load", "message"),
    [(float("nan"), "nan"), (float("inf"), "inf"), (-2.0, "-2.0")],
)
def test_a_bad_load_is_refused_with_its_offset(load: float, message: str) -> None:
    """A load must be finite and >= 0, or exactly -1.0 (not measured)."""
    data = encode_weighted_user_data([(TP("t", 0), 1.0)])
    at = len(data) - 4 - 4 - 8  # the load, before the empty released and promised arrays
    bad = data[:at] + struct.pack(">d", load) + data[at + 8 :]
    with pytest.raises(ProtocolError, match=message) as error:
        decode_weighted_user_data(bad)
    assert error.value.offset == at


def test_versions_an_older_one_is_refused_a_newer_ones_extra_fields_are_skipped() -> None:
    """Version 0 never existed; a version 2 member's appended fields are skipped by this version 1 reader."""
    data = encode_weighted_user_data([(TP("t", 0), 2.5)], generation=7)
    with pytest.raises(ProtocolError, match=r"version: 0 at offset 0"):
        decode_weighted_user_data(b"\x00\x00" + data[2:])
    newer = decode_weighted_user_data(b"\x00\x02" + data[2:] + b"future fields")
    assert newer.loads == ((TP("t", 0), 2.5),)
    assert newer.generation == 7


def test_a_partition_listed_twice_is_refused() -> None:
    """Two loads for one partition are a ProtocolError naming it."""
    data = encode_weighted_user_data([(TP("t", 0), 1.0), (TP("t", 0), 2.0)])
    with pytest.raises(ProtocolError, match="t-0"):
        decode_weighted_user_data(data)


@given(promised=st.lists(st.builds(TP, topic_names(), st.integers(0, 99)), unique=True, max_size=6))
def test_assignment_user_data_round_trips(promised: list[TP]) -> None:
    """The promise the leader sends a member comes back as sent."""
    assert sorted(decode_weighted_assignment_data(encode_weighted_assignment_data(promised)).promised) == sorted(
        promised
    )


def test_the_leader_uses_reported_loads_and_ignores_undecodable_or_other_units() -> None:
    """Members' reports weigh the partitions; garbage user data and a report in bytes/s (this leader counts
    records/s) are no report; a member sending none is accepted."""
    cluster = Cluster({"t": 4})
    hot = encode_weighted_user_data([(TP("t", 0), 90.0), (TP("t", 1), 10.0)], generation=1)
    cold = encode_weighted_user_data([(TP("t", 2), 10.0), (TP("t", 3), 10.0)], generation=1)
    other_unit = encode_weighted_user_data([(TP("t", 2), 1e9)], generation=1, unit=LoadUnit.BYTES)
    subs = {
        "a": Subscription(["t"], user_data=hot),
        "b": Subscription(["t"], user_data=cold),
        "c": Subscription(["t"], user_data=b"\x00\x01garbage"),
        "d": Subscription(["t"]),
    }
    result = WeightedStickyAssignor().assign(cluster, subs)
    assert result["a"].partitions == (TP("t", 0),)  # 90 alone; the three 10s go one each to b, c, d
    assert sorted(len(result[m].partitions) for m in "bcd") == [1, 1, 1]
    with_other = WeightedStickyAssignor().assign(cluster, {**subs, "c": Subscription(["t"], user_data=other_unit)})
    assert with_other["a"].partitions == (TP("t", 0),)


def test_a_member_reports_its_measured_loads_and_its_promises() -> None:
    """``report_loads`` and the assignment's promise go into the next subscription's user data; a partition it
    measured but no longer owns is reported apart (released: its load, never a claim)."""
    assignor = WeightedStickyAssignor()
    promise = encode_weighted_assignment_data([TP("t", 5)])
    assignor.on_assignment(Assignment([TP("t", 0), TP("t", 1)], user_data=promise), 3)
    assignor.report_loads({TP("t", 0): 12.0, TP("t", 7): 30.0}, window_ms=30000)
    decoded = decode_weighted_user_data(assignor.subscription_user_data(["t"]) or b"")
    assert decoded.loads == ((TP("t", 0), 12.0), (TP("t", 1), None))
    assert decoded.released == ((TP("t", 7), 30.0),)
    assert (decoded.generation, decoded.window_ms, decoded.promised) == (3, 30000, (TP("t", 5),))


def test_a_released_partitions_load_weighs_it_and_claims_nothing() -> None:
    """The member that gave a hot partition up reports its load; the leader weighs it by that, and (EAGER) the
    partition is nobody's claim."""
    cluster = Cluster({"t": 3})
    a = encode_weighted_user_data([(TP("t", 1), 5.0)], released=[(TP("t", 0), 50.0)], generation=2)
    b = encode_weighted_user_data([(TP("t", 2), 5.0)], generation=2)
    result = WeightedStickyAssignor().assign(cluster, {"a": Subscription(["t"], user_data=a),
                                                       "b": Subscription(["t"], user_data=b)})  # fmt: skip
    assert result["a"].partitions == (TP("t", 1), TP("t", 2)) or result["b"].partitions == (TP("t", 2), TP("t", 1))
    assert [len(result[m].partitions) for m in "ab"] in ([2, 1], [1, 2])
    assert TP("t", 0) in result["a"].partitions + result["b"].partitions
    alone = [m for m in "ab" if TP("t", 0) in result[m].partitions]
    assert len(result[alone[0]].partitions) == 1  # 50 alone; 5 + 5 together
