"""What a group did at each step, measured from its members' own output.

- **pause** (partition-seconds): per partition the group consumed before the step, every hand-over that starts in
  the step: from the moment its holder gave it up (a ``revoked`` or ``lost`` call, or the holder's crash or stop)
  to the first poll of its next holder that fetched records of it; plus stalls while held: gaps between two
  fetches of it by its holder longer than :data:`STEP_STALL_S`, less the producer's interval. Partitions the group did
  not consume before the step (new partitions, newly subscribed topics) are not counted: the evaluation counts
  them nowhere. Fetch gaps alone would count every poll's jitter on a loaded machine; a hand-over is an event.
- **unowned** (partition-seconds, a cross-check from the listeners alone): the same hand-overs, ending at the next
  ``assigned`` call instead of the first fetch.
- **moved**, **orphaned**: from the settled holdings before and after the step, as ``assignors.metrics.movement``
  counts them (a member is its name; a restarted static member keeps it).
- **revoked**: partitions named in ``revoked`` calls of members that are in the group before and after the step
  and did not stop in it.
- **rounds**: classic, the distinct generations of the ``assigned`` calls in the step; KIP-848, the most
  ``assigned`` calls one member had in the step (its reconciliations).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_STEADY_STALLS", "STALL_S", "STEP_STALL_S", "Observed", "observe", "stall_share", "steady_stalls"]

STALL_S = 1.0
"""While a group is settled, a gap between two fetches of a partition by the member holding it longer than this is a
stall (the producer writes every 0.1 s; on two loaded cores the gaps of a consumed partition stay under about 0.7 s):
what :func:`steady_stalls` counts."""
STEP_STALL_S = 0.75
"""In a step, a fetch gap of a kept partition longer than this counts as its pause (less the producer's interval).
The fetch gaps of kept partitions inside the steps of 2026-11-30's run: Java's 0.6-0.7 s 211 times, 0.7-0.8 s 21
times, 0.8-1.0 s 11 times; kafka-python's mostly under 0.5 s, but where its member stopped fetching, waiting in a
cooperative rebalance it had joined on its own (its subscription changed, or as the leader it saw a partition count
change) for the others' next heartbeat: 0.43-1.84 s in the two runs of 2026-11-30, as the others' heartbeats
fell. Counted from :data:`STALL_S` on, the waits of 0.78-0.97 s were 0; those under this threshold still are."""

MAX_STEADY_STALLS = 0.01
"""A run whose settled groups stalled more than this share of their partition-seconds (:func:`steady_stalls`) is
refused (``python -m calibration`` exits 1): its pauses measure the machine's load. Healthy runs stall 0.0-0.2%;
two runs of all eight strategies at once on a slow day (2026-11-29) stalled 9.6% and 5.9% and measured every pause
about twice as long."""

Partition = tuple[str, int]


@dataclass(frozen=True)
class Observed:
    """One step of one group, as measured."""

    index: int
    pause: float
    unowned: float
    moved: int
    orphaned: int
    revoked: int
    rounds: int
    settled: bool
    seconds: float
    """From the step's first action to the group's last listener call."""
    paused_partitions: int
    survivors_owned: int = 0
    """Partitions held before the step by members still in the group after it."""
    crashed: int = 0
    """Of ``orphaned``, the partitions of members that crashed (no LeaveGroup)."""
    kept: int = 0
    """Partitions held before and after the step by the same member (``survivors_owned - moved``)."""
    pause_kept: float = 0.0
    """Of ``pause``, the kept partitions' part."""
    pause_moved: float = 0.0
    """Of ``pause``, the moved partitions' part."""
    pause_orphaned: float = 0.0
    """Of ``pause``, the orphaned partitions' part (the crashed ones' included)."""
    restarted: int = 0
    """Of ``kept``, the partitions of static members that stopped and came back in the step (no rebalance)."""
    pause_restarted: float = 0.0
    """Of ``pause_kept``, the restarted partitions' part."""
    downtime: float = 0.0
    """Partition-seconds of the restarted partitions' downtime: each counts its member's seconds from the step's
    start to the member's new start (the time it was down, whatever the client)."""
    spread: float = 0.0
    """Seconds between the first and the last survivor's first ``revoked`` call: how far apart the members learned of
    the rebalance (on their heartbeats); an eager member's partitions wait from its revoke until the last one's."""
    since: float | None = None
    """Seconds from the step before's settle to this step's: what the evaluation sees of the time between two
    rebalances (the membership table's snapshot times). None when either did not settle."""
    kept_revoking: int = 0
    """Of ``kept``, the partitions of survivors that gave some up while another survivor gave none up
    (``assignors.metrics.Movement.retained_revoking``, from the members' holdings)."""
    pause_kept_revoking: float = 0.0
    """Of ``pause_kept``, the ``kept_revoking`` partitions' part."""


def _holdings(step: Mapping[str, Any]) -> dict[Partition, str]:
    owner: dict[Partition, str] = {}
    for name, listed in step["holdings"].items():
        for topic, number in listed:
            owner[str(topic), int(number)] = name
    return owner


def _timeline(
    events: Sequence[Mapping[str, Any]], ends: Mapping[str, float]
) -> dict[Partition, list[tuple[float, int, str]]]:
    """Per partition, its events in time order: (t, kind, member) with kind 0 release, 1 assigned, 2 fetched.

    A member's end (its crash or stop, ``ends``) releases what it still holds then.
    """
    found: dict[Partition, list[tuple[float, int, str]]] = {}
    kinds = {"revoked": 0, "lost": 0, "assigned": 1, "fetched": 2}
    for event in events:
        kind = kinds.get(event["e"])
        if kind is None:
            continue
        for topic, number in event["partitions"]:
            found.setdefault((str(topic), int(number)), []).append((float(event["t"]), kind, str(event["m"])))
    for member, t in ends.items():
        for line in found.values():
            line.append((t, 0, member))
    for line in found.values():
        line.sort()
    return found


def _quiet(events: Sequence[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """Intervals longer than :data:`STALL_S` in which no member of the group fetched anything: the broker or the
    producer stalled (or every member was rebalancing, which the hand-overs count)."""
    times = sorted(float(e["t"]) for e in events if e["e"] == "fetched")
    return [(a, b) for a, b in itertools.pairwise(times) if b - a > STALL_S]


def _overlap(a: float, b: float, intervals: Sequence[tuple[float, float]]) -> float:
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y in intervals)


def _hand_overs(  # noqa: C901 - one partition's story
    line: Sequence[tuple[float, int, str]],
    start: float,
    end: float,
    *,
    interval: float,
    quiet: Sequence[tuple[float, float]] = (),
) -> tuple[float, float]:
    """(pause, unowned) of one partition for hand-overs that start in [start, end] and stalls inside it.

    A stall's part that falls in a ``quiet`` interval of the whole group is not this partition's.
    """
    holder: str | None = None
    released: float | None = None  # when the last holder gave it up, until the next holder's first fetch
    assigned_at: float | None = None
    last_fetch: float | None = None
    pause = unowned = 0.0
    for t, kind, member in line:
        if kind == 0:
            if member == holder:
                if released is None:
                    released = t
                holder, assigned_at = None, None
            continue
        if kind == 1:
            if released is not None and start <= released <= end and holder is None:
                unowned += t - released
            holder, assigned_at, last_fetch = member, t, None
            continue
        if member != holder:
            continue  # a fetch already in flight when its poll's member gave the partition up
        if released is not None and assigned_at is not None:
            if start <= released <= end:
                pause += t - released
            released = None
        elif last_fetch is not None and t - last_fetch > STEP_STALL_S and start <= t <= end:
            began = max(last_fetch, start)
            pause += max(0.0, t - began - _overlap(began, t, quiet) - interval)
        last_fetch = t
    if released is not None and start <= released <= end:
        pause += end - released  # not consumed again before the step ended
    return pause, unowned


def observe(run: Mapping[str, Any], *, interval: float) -> list[Observed]:  # noqa: PLR0915 - one step at a time
    """Every measured step of one group run (``GroupRun.to_json()``), in order."""
    steps = run["steps"]
    events = run["events"]
    ends = {name: float(m["ended_at"]) for name, m in run["members"].items() if m.get("ended_at") is not None}
    lines = _timeline(events, ends)
    quiet = _quiet(events)
    found: list[Observed] = []
    measured = 0
    for index, step in enumerate(steps):
        if not step["measured"]:
            continue
        measured += 1
        previous = steps[index - 1] if index else None
        start, end = float(step["t0"]), float(step["end"])
        after = _holdings(step)
        before = _holdings(previous) if previous is not None else {}
        present = set(step["members"])
        moved = sum(1 for tp, owner in before.items() if owner in present and tp in after and after[tp] != owner)
        orphaned = sum(1 for owner in before.values() if owner not in present)
        survivors_owned = sum(1 for owner in before.values() if owner in present)
        crashed = sum(1 for owner in before.values() if owner in set(step.get("crashed", ())))
        window = [e for e in events if start <= float(e["t"]) <= end]
        survivors = present - set(step.get("stopped", ()))  # a restarted static member's own close is no rebalance
        revoked = sum(len(e["partitions"]) for e in window if e["e"] == "revoked" and e["m"] in survivors)
        learned: dict[str, float] = {}
        for e in window:
            if e["e"] == "revoked" and e["m"] in survivors:
                learned.setdefault(e["m"], float(e["t"]))
        pause = unowned = 0.0
        paused = 0
        restarting = {
            name
            for name in set(step.get("stopped", ())) & present
            if start <= float(run["members"].get(name, {}).get("started_at") or -1.0) <= end
        }
        revoking = _kept_revoking(previous, after, present) if previous is not None else set()
        parts = {"kept": 0.0, "moved": 0.0, "orphaned": 0.0, "restarted": 0.0, "revoking": 0.0}
        restarted = 0
        downtime = 0.0
        for tp, owner in before.items():
            part, gone = _hand_overs(lines.get(tp, ()), start, end, interval=interval, quiet=quiet)
            paused += part > 0
            pause += part
            unowned += gone
            kind = "orphaned" if owner not in present else "kept" if after.get(tp) == owner else "moved"
            parts[kind] += part
            if tp in revoking:
                parts["revoking"] += part
            if kind == "kept" and owner in restarting:
                parts["restarted"] += part
                restarted += 1
                downtime += float(run["members"][owner]["started_at"]) - start
        gens = {e["gen"] for e in window if e["e"] == "assigned" and e.get("gen") is not None}
        per_member: dict[str, int] = {}
        for e in window:
            if e["e"] == "assigned":
                per_member[e["m"]] = per_member.get(e["m"], 0) + 1
        consumer = run.get("protocol") == "consumer"
        rounds = max(per_member.values(), default=0) if consumer else len(gens)
        settled_at = step.get("settled_at")
        seconds = (float(settled_at) - start) if settled_at is not None else end - start
        found.append(
            Observed(
                measured,
                round(pause, 3),
                round(unowned, 3),
                moved,
                orphaned,
                revoked,
                rounds,
                settled_at is not None,
                round(max(seconds, 0.0), 3),
                paused,
                survivors_owned,
                crashed,
                survivors_owned - moved,
                round(parts["kept"], 3),
                round(parts["moved"], 3),
                round(parts["orphaned"], 3),
                restarted,
                round(parts["restarted"], 3),
                round(downtime, 3),
                round(max(learned.values()) - min(learned.values()), 3) if learned else 0.0,
                _since(previous, step),
                len(revoking),
                round(parts["revoking"], 3),
            )
        )
    return found


def _kept_revoking(previous: Mapping[str, Any], after: Mapping[Partition, str], present: set[str]) -> set[Partition]:
    """The partitions kept by the members of ``previous`` still ``present`` that gave some up, when another such
    member gave none up (``assignors.metrics.Movement.retained_revoking``, as a set)."""
    held = previous["holdings"]
    kept_by_revokers: set[Partition] = set()
    steady = False
    for name in previous["members"]:
        if name not in present:
            continue
        parts = {(str(topic), int(number)) for topic, number in held.get(name, ())}
        kept = {tp for tp in parts if after.get(tp) == name}
        if kept == parts:
            steady = True
        else:
            kept_by_revokers |= kept
    return kept_by_revokers if steady else set()


def _since(previous: Mapping[str, Any] | None, step: Mapping[str, Any]) -> float | None:
    """Seconds between the settles of ``previous`` and ``step`` (None when either did not settle)."""
    if previous is None or previous.get("settled_at") is None or step.get("settled_at") is None:
        return None
    return round(float(step["settled_at"]) - float(previous["settled_at"]), 3)


def first_fetch_delays(run: Mapping[str, Any]) -> list[float]:
    """Seconds from each ``assigned`` call that ended a hand-over to the new holder's first fetch of the partition."""
    ends = {name: float(m["ended_at"]) for name, m in run["members"].items() if m.get("ended_at") is not None}
    found: list[float] = []
    for line in _timeline(run["events"], ends).values():
        pending: tuple[str, float] | None = None
        released = False
        for t, kind, member in line:
            if kind == 0:
                released = True
            elif kind == 1:
                pending = (member, t) if released else None
                released = False
            elif pending is not None and member == pending[0]:
                found.append(t - pending[1])
                pending = None
    return found


def steady_stalls(run: Mapping[str, Any], *, interval: float) -> tuple[float, float]:
    """(stalled, watched) partition-seconds of one group run while it was settled: from each measured step's settle
    (its last listener call) to the step's end, once the group had formed, every partition its holder kept, the gaps
    between two of its fetches longer than :data:`STALL_S` (less the producer's ``interval``). Nothing happens to the
    group then, so a stall is the machine's: the broker, the producer or the member could not keep up. Healthy runs
    stall about 0% of ``watched``; a run whose members' pauses the load inflated does not."""
    fetched: dict[tuple[str, Partition], list[float]] = {}
    for event in run["events"]:
        if event["e"] == "fetched":
            for topic, number in event["partitions"]:
                fetched.setdefault((str(event["m"]), (str(topic), int(number))), []).append(float(event["t"]))
    for times in fetched.values():
        times.sort()
    stalled = watched = 0.0
    formed = False
    for step in run["steps"]:
        settled_at = step.get("settled_at")
        # the group's formation (the set-up, or a first step from empty) is not watched: a KIP-848 group of members
        # that joined at once goes on reconciling after its first quiet (2026-11-29: every stall of a run whose
        # classic groups stalled 0.0% was in the KIP-848 groups' formation, 5-7% of theirs, none after)
        was_formed, formed = formed, formed or bool(step.get("holdings"))
        if settled_at is None or not step["measured"] or not was_formed:
            continue
        start, end = float(settled_at), float(step["end"])
        if end <= start:
            continue
        for tp, holder in _holdings(step).items():
            times = fetched.get((holder, tp), [])
            inside = [t for t in times if start < t < end]
            points = [start, *inside, end]
            watched += end - start
            stalled += sum(max(0.0, b - a - interval) for a, b in itertools.pairwise(points) if b - a > STALL_S)
    return stalled, watched


def stall_share(runs: Sequence[Mapping[str, Any]], *, interval: float) -> float:
    """The share of the settled groups' partition-seconds that stalled (:func:`steady_stalls` over ``runs``), 0.0
    when nothing was watched: what ``python -m calibration`` refuses a run on (:data:`MAX_STEADY_STALLS`)."""
    stalled = watched = 0.0
    for run in runs:
        part, whole = steady_stalls(run, interval=interval)
        stalled, watched = stalled + part, watched + whole
    return round(stalled / watched, 5) if watched else 0.0
