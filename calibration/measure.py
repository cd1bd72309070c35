"""What a group did at each step, measured from its members' own output.

- **pause** (partition-seconds): for every partition the group consumed before the step, the gaps between
  consecutive polls that fetched records of it (any member's), longer than :data:`GAP_THRESHOLD_S`, less the
  producer's interval (the gap a partition consumed without interruption shows anyway). A gap is the step's when it
  ends inside the step's window (from the step's first action to its end). Partitions the group did not consume
  before the step (new partitions, newly subscribed topics) are not counted: the evaluation counts them nowhere.
- **unowned** (partition-seconds, a cross-check from the listeners): per partition, the time between its owner
  giving it up (``revoked``/``lost``, or the owner's crash) and the next ``assigned`` of it.
- **moved**, **orphaned**: from the settled holdings before and after the step, as ``assignors.metrics.movement``
  counts them (a member is its name; a restarted static member keeps it).
- **revoked**: partitions named in ``revoked`` calls of members that are still in the group after the step.
- **rounds**: classic, the distinct generations of the ``assigned`` calls in the step; KIP-848, the most
  ``assigned`` calls one member had in the step (its reconciliations).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GAP_THRESHOLD_S", "Observed", "observe"]

GAP_THRESHOLD_S = 0.3
"""A gap between two fetches of a partition longer than this is a pause (the producer writes every 0.1 s)."""

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


def _holdings(step: Mapping[str, Any]) -> dict[Partition, str]:
    owner: dict[Partition, str] = {}
    for name, listed in step["holdings"].items():
        for topic, number in listed:
            owner[str(topic), int(number)] = name
    return owner


def _fetches(events: Sequence[Mapping[str, Any]]) -> dict[Partition, list[float]]:
    found: dict[Partition, list[float]] = {}
    for event in events:
        if event["e"] == "fetched":
            for topic, number in event["partitions"]:
                found.setdefault((str(topic), int(number)), []).append(float(event["t"]))
    for times in found.values():
        times.sort()
    return found


def _gap_pause(times: list[float], start: float, end: float, *, interval: float, open_end: bool) -> float:
    """Partition-seconds of the gaps longer than the threshold, the part of each inside [start, end], less the
    producer's interval; with ``open_end`` (the partition is held after the step) a silence lasting past ``end``
    counts up to ``end``."""
    first = bisect_right(times, start) - 1
    if first < 0:
        return 0.0  # never fetched before the step: not consumed, not paused
    last = bisect_right(times, end)
    ends = times[first + 1 : last]
    if open_end:
        ends = [*ends, times[last] if last < len(times) else end]
    total = 0.0
    previous = times[first]
    for t in ends:
        if t - previous > GAP_THRESHOLD_S:
            total += max(0.0, min(t, end) - max(previous, start) - interval)
        previous = t
    return total


def _unowned(
    events: Sequence[Mapping[str, Any]],
    partitions: set[Partition],
    start: float,
    end: float,
    crashes: Mapping[str, float],
) -> float:
    held: dict[Partition, str] = {}
    since: dict[Partition, float] = {}
    total = 0.0
    timeline = sorted(
        [*((float(e["t"]), e) for e in events if e["e"] in ("assigned", "revoked", "lost"))],
        key=lambda item: item[0],
    )
    crash_events = sorted((t, name) for name, t in crashes.items())
    ci = 0
    for t, event in timeline:
        while ci < len(crash_events) and crash_events[ci][0] <= t:
            when, name = crash_events[ci]
            for tp, owner in list(held.items()):
                if owner == name:
                    del held[tp]
                    since[tp] = when
            ci += 1
        for topic, number in event["partitions"]:
            tp = (str(topic), int(number))
            if event["e"] == "assigned":
                if tp in since and tp in partitions:
                    began = max(since.pop(tp), start)
                    if t > start:
                        total += max(0.0, min(t, end) - began)
                held[tp] = event["m"]
            elif held.get(tp) == event["m"]:
                del held[tp]
                since[tp] = t
    return total


def observe(run: Mapping[str, Any], *, interval: float) -> list[Observed]:
    """Every measured step of one group run (``GroupRun.to_json()``), in order."""
    steps = run["steps"]
    events = run["events"]
    fetches = _fetches(events)
    crashes = {name: float(m["ended_at"]) for name, m in run["members"].items() if m.get("crashed")}
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
        window = [e for e in events if start <= float(e["t"]) <= end]
        survivors = present - set(step.get("stopped", ()))  # a restarted static member's own close is no rebalance
        revoked = sum(len(e["partitions"]) for e in window if e["e"] == "revoked" and e["m"] in survivors)
        pause = 0.0
        paused = 0
        for tp in before:
            times = fetches.get(tp, [])
            part = _gap_pause(times, start, end, interval=interval, open_end=tp in after)
            if part > 0:
                paused += 1
            pause += part
        unowned = _unowned(events, set(before), start, end, crashes)
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
            )
        )
    return found


def partitions_between(times: Sequence[float], start: float, end: float) -> int:
    """How many of ``times`` fall in [start, end] (a helper for reports and tests)."""
    return bisect_right(times, end) - bisect_left(times, start)
