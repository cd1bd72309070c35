"""``CoordinatorTable`` and ``coordinator_member_order``'s default, on broker-like histories.

The table's order is checked against Kafka's own ``TimelineHashMap`` in tests/java/test_java_order.py; here it is the
reference for what a single call without a group's history can know.
"""

from __future__ import annotations

import random
import string

from hypothesis import given
from hypothesis import strategies as st

from assignors._core.util import java_sorted
from assignors.consumer_group import CoordinatorTable, coordinator_member_order
from assignors.consumer_group._java_order import java_map_order, java_string_hash, timeline_length


def _member_id(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_letters + string.digits + "-_", k=22))  # as Kafka 4 clients make them


def _history(rng: random.Random) -> tuple[CoordinatorTable, list[str]]:
    """3 to 30 members join one by one, up to 5 leave and are replaced; half the time the computation is the last
    join's, else a later one's (every member held)."""
    table = CoordinatorTable()
    held: list[str] = []
    for _ in range(rng.randint(3, 30)):
        table.update(held)
        held = [*held, _member_id(rng)]
    for _ in range(rng.randint(0, 5)):
        gone = rng.choice(held)
        held = [m for m in held if m != gone]
        table.update(held)
        held = [*held, _member_id(rng)]
    if rng.random() < 0.5:
        table.update(held)
    return table, held


def test_without_a_history_the_default_table_is_the_brokers_order_far_more_often_than_string_order() -> None:
    """On 3,000 broker-like histories the default (a table holding the members, added in Java's string order) puts
    the members in the coordinator's order in 2,458 (82%); members put in Java's string order, in 681 (23%): the
    table's slots are the broker's whatever order the members came in."""
    rng = random.Random(7)  # noqa: S311 - drawn test data
    histories = [_history(rng) for _ in range(3000)]
    default = string_order = 0
    for table, members in histories:
        brokers = coordinator_member_order(members, table)
        default += coordinator_member_order(members) == brokers
        string_order += java_map_order(java_sorted(members), java_string_hash) == brokers
    assert (default, string_order) == (2458, 681)


@given(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=40), st.randoms(use_true_random=False))
def test_a_table_holding_the_members_in_string_order_is_the_default(members: list[str], rng: random.Random) -> None:
    """Whatever order the ids come in, the default is a table updated once with them; a table never shrinks."""
    table = CoordinatorTable()
    shuffled = list(members)
    rng.shuffle(shuffled)
    table.update(shuffled)
    assert coordinator_member_order(shuffled, table) == coordinator_member_order(members)
    assert coordinator_member_order(iter(shuffled)) == coordinator_member_order(members)  # any iterable, read once
    length = table.length
    table.update(members[: len(members) // 2])
    assert table.length == length == timeline_length(len(members))
    assert sorted(coordinator_member_order(members, table)) == sorted(members)
