"""A realistic, deterministic membership history for the demo and the benchmarks (pure Python).

Each group owns one to three topics and is observed every five minutes. Between
observations a seeded random process applies what platform teams see in production:
rolling restarts (static members come back with a new member id and the same
``group_instance_id``; dynamic members leave and rejoin), autoscaling waves, crashes,
partition increases, and subscription changes (some members add a topic, so
subscriptions differ for a while).

Three kinds of group make each metric of the evaluation matter:

- ``classic``: the mix above, half of them with static members;
- ``scale-out``: two topics of equal size, one hot and one cold, starting small and
  scaling out in waves: where an assignor that balances counts but not topics gives one
  consumer the hot topic (``topic_spread``, ``weighted_max_load``);
- ``static-core``: long-lived static members that never leave, beside dynamic members
  that come and go (a rolling restart of the static ones must not move anything).

Topic weights (``History.weights``, in KB/s per partition) are hot or cold per topic; a
hot topic may have one partition five times hotter than the rest, and some topics double
their traffic part-way through the history (a row with ``valid_from``).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

__all__ = ["DEFAULT_GROUPS", "DEFAULT_SNAPSHOTS", "History", "generate_history"]

START = dt.datetime(2026, 1, 5, 8, 0)  # noqa: DTZ001 - Spark timestamps are naive, in UTC here
STEP = dt.timedelta(minutes=5)
RACKS = ("rack-a", "rack-b", "rack-c")
HOT_KBPS = (400.0, 800.0, 1600.0)
COLD_KBPS = (2.0, 5.0, 10.0)
DEFAULT_GROUPS = 300
"""The demo's groups (``assignors demo --groups``)."""
DEFAULT_SNAPSHOTS = 48
"""The demo's snapshots per group (``assignors demo --snapshots``)."""

MembershipRow = tuple[str, dt.datetime, str, list[str], str | None, str | None]
TopicRow = tuple[str, int, dt.datetime | None]
WeightRow = tuple[str, int | None, float, dt.datetime | None]


@dataclass
class History:
    """Membership, topic and weight rows, in the input schemas of the evaluation."""

    membership: list[MembershipRow] = field(default_factory=list)
    topics: list[TopicRow] = field(default_factory=list)
    weights: list[WeightRow] = field(default_factory=list)


@dataclass
class _Member:
    member_id: str
    instance: str | None
    topics: list[str]
    rack: str | None
    permanent: bool = False  # a long-lived static member: never crashes or scales down


@dataclass
class _Group:
    name: str
    kind: str
    static: bool
    topics: list[str]
    counts: dict[str, int]
    members: list[_Member]
    serial: int = 0
    pending: list[str] = field(default_factory=list)  # queued events of a multi-step scenario


def _new_member(group: _Group, rnd: random.Random, topics: list[str], *, static: bool | None = None) -> _Member:
    group.serial += 1
    is_static = group.static if static is None else static
    instance = f"{group.name}-instance-{group.serial}" if is_static else None
    return _Member(f"consumer-{rnd.getrandbits(48):012x}", instance, list(topics), rnd.choice(RACKS))


def generate_history(
    groups: int = DEFAULT_GROUPS,
    snapshots: int = DEFAULT_SNAPSHOTS,
    *,
    seed: int = 7,
    members: tuple[int, int] = (3, 12),
) -> History:
    """A history of ``groups`` groups with ``snapshots`` observations each.

    Args:
        groups: number of consumer groups.
        snapshots: observations per group (five minutes apart).
        seed: the random seed; the same arguments give the same history.
        members: the range of initial group sizes (scale-out groups start at its low end).
    """
    rnd = random.Random(seed)  # noqa: S311 - a reproducible simulation, not security
    history = History()
    for index in range(groups):
        group = _make_group(index, rnd, members, history)
        _weights(group, rnd, snapshots, history)
        for step in range(snapshots):
            ts = START + step * STEP
            if step:
                _event(group, rnd, ts, history)
            history.membership.extend(
                (group.name, ts, m.member_id, list(m.topics), m.instance, m.rack) for m in group.members
            )
    return history


def _make_group(index: int, rnd: random.Random, members: tuple[int, int], history: History) -> _Group:
    name = f"group-{index:04d}"
    kind = rnd.choice(("classic", "classic", "scale-out", "static-core"))
    if kind == "scale-out":
        count = rnd.choice((12, 24, 48))
        topics = [f"{name}.orders", f"{name}.payments", f"{name}.audit"]  # audit is subscribed to later
        counts = dict.fromkeys(topics, count)
        size = max(1, members[0])
    else:
        topic_count = rnd.choice((1, 1, 2, 3))
        topics = [f"{name}.topic-{t}" for t in range(topic_count + 1)]  # the last one is subscribed to later
        counts = {t: rnd.choice((6, 8, 12, 16, 24, 32, 48)) for t in topics}
        size = rnd.randint(*members)
    history.topics.extend((t, counts[t], None) for t in topics)
    static = kind == "classic" and rnd.random() < 0.5  # noqa: PLR2004 - half the classic groups are static
    group = _Group(name, kind, static, topics, counts, [])
    group.members = [_new_member(group, rnd, topics[:-1]) for _ in range(size)]
    if kind == "static-core":
        for member in group.members[: max(1, size // 2)]:
            group.serial += 1
            member.instance, member.permanent = f"{name}-core-{group.serial}", True
    return group


def _weights(group: _Group, rnd: random.Random, snapshots: int, history: History) -> None:
    """Per-topic KB/s: the first topic of a scale-out group is hot and the second cold; others by chance."""
    for position, topic in enumerate(group.topics):
        hot = position == 0 if group.kind == "scale-out" else rnd.random() < 0.4  # noqa: PLR2004
        weight = rnd.choice(HOT_KBPS if hot else COLD_KBPS)
        history.weights.append((topic, None, weight, None))
        if hot and rnd.random() < 0.3:  # noqa: PLR2004 - one hot key lands on partition 0
            history.weights.append((topic, 0, weight * 5, None))
        if snapshots > 1 and rnd.random() < 0.2:  # noqa: PLR2004 - traffic doubles part-way through
            history.weights.append((topic, None, weight * 2, START + rnd.randrange(1, snapshots) * STEP))


def _event(group: _Group, rnd: random.Random, ts: dt.datetime, history: History) -> None:
    if group.pending:
        _apply(group, group.pending.pop(0), rnd, ts, history)
        return
    roll = rnd.random()
    if roll < 0.45:  # noqa: PLR2004 - most observations see no change
        return
    if roll < 0.60:  # noqa: PLR2004
        # A rolling restart: one member at a time, each named by its member id.
        group.pending = [f"restart:{m.member_id}" for m in group.members]
        _apply(group, group.pending.pop(0), rnd, ts, history)
        return
    if roll < 0.75 or (group.kind == "scale-out" and roll < 0.85):  # noqa: PLR2004
        wave = rnd.randint(1, 3) if group.kind != "scale-out" else rnd.randint(2, 4)
        group.pending = ["scale-up"] * (wave - 1) + ["none", "none"] + ["scale-down"] * wave
        _apply(group, "scale-up", rnd, ts, history)
        return
    if roll < 0.88:  # noqa: PLR2004
        _apply(group, "crash", rnd, ts, history)
        return
    if roll < 0.94:  # noqa: PLR2004
        _apply(group, "partitions", rnd, ts, history)
        return
    _apply(group, "subscribe", rnd, ts, history)


def _apply(group: _Group, event: str, rnd: random.Random, ts: dt.datetime, history: History) -> None:
    current_topics = group.members[0].topics if group.members else group.topics[:-1]
    if event.startswith("restart:"):
        _restart(group, event.removeprefix("restart:"), rnd)
    elif event == "scale-up":
        group.members.append(_new_member(group, rnd, current_topics, static=group.static))
    elif event in {"scale-down", "crash"}:
        candidates = [i for i, m in enumerate(group.members) if not m.permanent]
        if len(group.members) > 1 and candidates:
            group.members.pop(rnd.choice(candidates))
    elif event == "partitions":
        topic = rnd.choice(current_topics)
        group.counts[topic] *= 2
        history.topics.append((topic, group.counts[topic], ts))
    elif event == "subscribe":
        extra = group.topics[-1]
        for member in group.members[: max(1, len(group.members) // 2)]:
            if extra not in member.topics:
                member.topics.append(extra)


def _restart(group: _Group, member_id: str, rnd: random.Random) -> None:
    """Restart the member with ``member_id`` in place (it may have left since the restart was planned)."""
    position = next((i for i, m in enumerate(group.members) if m.member_id == member_id), None)
    if position is None:
        return
    old = group.members[position]
    if old.instance is not None:  # back within the session timeout: same instance id, new member id
        new_id = f"consumer-{rnd.getrandbits(48):012x}"
        group.members[position] = _Member(new_id, old.instance, old.topics, old.rack, old.permanent)
    else:  # a dynamic member leaves; it rejoins as a new member (in its place)
        group.members[position] = _new_member(group, rnd, old.topics, static=False)
