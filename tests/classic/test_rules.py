"""assignors.rebalance's classic rules: protocol choice, the coordinator's vote, the member side."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import (
    CooperativeStickyAssignor,
    InconsistentGroupProtocolError,
    InvalidSubscriptionError,
    RangeAssignor,
    RebalanceProtocol,
    TopicPartition,
)
from assignors.rebalance import (
    choose_protocol,
    receive_assignment,
    revoke_before_join,
    select_assignor,
)

TP = TopicPartition
EAGER, COOPERATIVE = RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE
CS = "cooperative-sticky"


@pytest.mark.parametrize(
    ("preferences", "chosen"),
    [
        ({"a": ["range"], "b": ["range"]}, "range"),
        ({"a": [CS, "range"], "b": ["range", CS]}, "range"),  # 1:1, the broker's order puts range first
        ({"a": [CS, "range"], "b": [CS, "range"], "c": ["range", CS]}, CS),  # 2:1
        ({"a": [CS, "range"], "b": [CS]}, CS),  # range is no candidate: b lacks it
        ({"a": ["sticky", "range"], "b": ["range", "sticky"]}, "sticky"),
        ({"a": ["roundrobin", CS], "b": [CS, "roundrobin"]}, "roundrobin"),
        ({"a": ["mine", "range"], "b": ["range", "mine"]}, "range"),  # built-in names before others on a tie
        ({"a": ["zeta", "alpha"], "b": ["alpha", "zeta"]}, "alpha"),  # then by name
    ],
)
def test_select_assignor_vote_table(preferences: dict[str, list[str]], chosen: str) -> None:
    """Candidates every member offers; each votes its first candidate; ties in Kafka brokers' order."""
    assert select_assignor(preferences) == chosen


def test_select_assignor_refuses_a_group_without_a_common_name() -> None:
    """No common name is Kafka's INCONSISTENT_GROUP_PROTOCOL, naming the member."""
    with pytest.raises(InconsistentGroupProtocolError, match="member 'b' offers \\['roundrobin'\\]") as caught:
        select_assignor({"a": ["range"], "b": ["roundrobin"]})
    assert caught.value.member == "b"
    with pytest.raises(InconsistentGroupProtocolError, match="at least one member"):
        select_assignor({})


NAMES = st.lists(st.sampled_from(["range", "roundrobin", "sticky", CS, "x"]), min_size=1, unique=True)


@given(st.dictionaries(st.text(max_size=3), NAMES, min_size=1), st.randoms(use_true_random=False))
def test_select_assignor_is_a_common_name_whatever_the_member_order(prefs: dict[str, list[str]], rnd: object) -> None:
    """The choice is offered by every member, and reordering the members never changes it."""
    try:
        chosen = select_assignor(prefs)
    except InconsistentGroupProtocolError:
        assert not set.intersection(*(set(p) for p in prefs.values()))
        return
    assert all(chosen in p for p in prefs.values())
    items = list(prefs.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    assert select_assignor(dict(items)) == chosen


def test_choose_protocol_table() -> None:
    """The highest protocol every configured assignor supports."""
    assert choose_protocol([RangeAssignor()]) is EAGER
    assert choose_protocol([CooperativeStickyAssignor()]) is COOPERATIVE
    assert choose_protocol([CooperativeStickyAssignor(), RangeAssignor()]) is EAGER
    with pytest.raises(InvalidSubscriptionError, match="at least one assignor"):
        choose_protocol([])


def test_member_side_of_both_protocols() -> None:
    """EAGER revokes all before joining; COOPERATIVE only dropped topics, then owned - assigned, and rejoins."""
    owned = [TP("t", 0), TP("t", 1), TP("u", 0)]
    assert revoke_before_join(EAGER, owned, ["t", "u"]) == tuple(owned)
    assert revoke_before_join(COOPERATIVE, owned, ["t"]) == (TP("u", 0),)
    update = receive_assignment(COOPERATIVE, [TP("t", 0), TP("t", 1)], [TP("t", 1), TP("t", 2)], ["t"])
    assert (update.revoked, update.added, update.rejoin) == ((TP("t", 0),), (TP("t", 2),), True)
    settled = receive_assignment(COOPERATIVE, [TP("t", 0)], [TP("t", 0), TP("t", 1)], ["t"])
    assert (settled.revoked, settled.added, settled.rejoin) == ((), (TP("t", 1),), False)
    eager = receive_assignment(EAGER, [], [TP("t", 0)], ["t"])
    assert (eager.added, eager.rejoin) == ((TP("t", 0),), False)
    assert receive_assignment(EAGER, [], [TP("v", 0)], ["t"]).rejoin  # an assignment off its subscription
