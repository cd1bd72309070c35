"""A realistic, deterministic membership history for the demo and the benchmarks (pure Python).

Each group owns one to three topics and is observed every five minutes. Between
observations a seeded random process applies what platform teams see in production:
rolling restarts (static members come back with a new member id and the same
``group_instance_id``; dynamic members leave and rejoin), autoscaling waves, crashes,
partition increases, and subscription changes (some members add a topic, so
subscriptions differ for a while).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

__all__ = ["History", "generate_history"]

START = dt.datetime(2026, 1, 5, 8, 0)  # noqa: DTZ001 - Spark timestamps are naive, in UTC here
STEP = dt.timedelta(minutes=5)
RACKS = ("rack-a", "rack-b", "rack-c")

MembershipRow = tuple[str, dt.datetime, str, list[str], str | None, str | None]
TopicRow = tuple[str, int, dt.datetime | None]


@dataclass
class History:
    """Membership rows and topic rows, in the input schemas of the evaluation."""

    membership: list[MembershipRow] = field(default_factory=list)
    topics: list[TopicRow] = field(default_factory=list)


@dataclass
class _Member:
    member_id: str
    instance: str | None
    topics: list[str]
    rack: str | None


@dataclass
class _Group:
    name: str
    static: bool
    topics: list[str]
    counts: dict[str, int]
    members: list[_Member]
    serial: int = 0
    pending: list[str] = field(default_factory=list)  # queued events of a multi-step scenario


def _new_member(group: _Group, rnd: random.Random, topics: list[str]) -> _Member:
    group.serial += 1
    instance = f"{group.name}-instance-{group.serial}" if group.static else None
    return _Member(f"consumer-{rnd.getrandbits(48):012x}", instance, list(topics), rnd.choice(RACKS))


def generate_history(
    groups: int = 300, snapshots: int = 48, *, seed: int = 7, members: tuple[int, int] = (3, 12)
) -> History:
    """A history of ``groups`` groups with ``snapshots`` observations each.

    Args:
        groups: number of consumer groups.
        snapshots: observations per group (five minutes apart).
        seed: the random seed; the same arguments give the same history.
        members: the range of initial group sizes.
    """
    rnd = random.Random(seed)  # noqa: S311 - a reproducible simulation, not security
    history = History()
    for index in range(groups):
        group = _make_group(index, rnd, members, history)
        for step in range(snapshots):
            ts = START + step * STEP
            if step:
                _event(group, rnd, ts, history, members)
            history.membership.extend(
                (group.name, ts, m.member_id, list(m.topics), m.instance, m.rack) for m in group.members
            )
    return history


def _make_group(index: int, rnd: random.Random, members: tuple[int, int], history: History) -> _Group:
    name = f"group-{index:04d}"
    topic_count = rnd.choice((1, 1, 2, 3))
    topics = [f"{name}.topic-{t}" for t in range(topic_count + 1)]  # the last one is subscribed to later
    counts = {t: rnd.choice((6, 8, 12, 16, 24, 32, 48)) for t in topics}
    history.topics.extend((t, counts[t], None) for t in topics)
    group = _Group(name, rnd.random() < 0.5, topics, counts, [])  # noqa: PLR2004 - half the groups are static
    size = rnd.randint(*members)
    group.members = [_new_member(group, rnd, topics[:-1]) for _ in range(size)]
    return group


def _event(group: _Group, rnd: random.Random, ts: dt.datetime, history: History, bounds: tuple[int, int]) -> None:
    if group.pending:
        _apply(group, group.pending.pop(0), rnd, ts, history, bounds)
        return
    roll = rnd.random()
    if roll < 0.45:  # noqa: PLR2004 - most observations see no change
        return
    if roll < 0.60:  # noqa: PLR2004
        # A rolling restart: one member at a time.
        group.pending = [f"restart:{i}" for i in range(len(group.members))]
        _apply(group, group.pending.pop(0), rnd, ts, history, bounds)
        return
    if roll < 0.75:  # noqa: PLR2004
        wave = rnd.randint(1, 3)
        group.pending = ["scale-up"] * (wave - 1) + ["none", "none"] + ["scale-down"] * wave
        _apply(group, "scale-up", rnd, ts, history, bounds)
        return
    if roll < 0.88:  # noqa: PLR2004
        _apply(group, "crash", rnd, ts, history, bounds)
        return
    if roll < 0.94:  # noqa: PLR2004
        _apply(group, "partitions", rnd, ts, history, bounds)
        return
    _apply(group, "subscribe", rnd, ts, history, bounds)


def _apply(  # noqa: PLR0913, PLR0917 - the generator's state
    group: _Group, event: str, rnd: random.Random, ts: dt.datetime, history: History, bounds: tuple[int, int]
) -> None:
    del bounds
    current_topics = group.members[0].topics if group.members else group.topics[:-1]
    if event.startswith("restart:"):
        _restart(group, int(event.split(":")[1]), rnd)
    elif event == "scale-up":
        group.members.append(_new_member(group, rnd, current_topics))
    elif event in {"scale-down", "crash"}:
        if len(group.members) > 1:
            group.members.pop(rnd.randrange(len(group.members)))
    elif event == "partitions":
        topic = rnd.choice(current_topics)
        group.counts[topic] *= 2
        history.topics.append((topic, group.counts[topic], ts))
    elif event == "subscribe":
        extra = group.topics[-1]
        for member in group.members[: max(1, len(group.members) // 2)]:
            if extra not in member.topics:
                member.topics.append(extra)


def _restart(group: _Group, position: int, rnd: random.Random) -> None:
    if position >= len(group.members):
        return
    old = group.members[position]
    if group.static:  # back within the session timeout: same instance id, new member id
        new_id = f"consumer-{rnd.getrandbits(48):012x}"
        group.members[position] = _Member(new_id, old.instance, old.topics, old.rack)
    else:  # a dynamic member leaves; it rejoins as a new member (in its place, so the next position is the next member)
        group.members[position] = _new_member(group, rnd, old.topics)
