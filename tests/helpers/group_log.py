"""A thread-safe log of rebalance-listener events, and the checks the integration scenarios make on it."""

from __future__ import annotations

import faulthandler
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pytest


@dataclass(frozen=True)
class Event:
    at: float
    consumer: str
    kind: str  # "assigned", "revoked" or "lost"
    partitions: tuple[int, ...]


@dataclass
class GroupLog:
    """Every listener call of every consumer, in the order they happened.

    Consumers in this process ``record`` theirs; each of ``sources`` returns the new events of a consumer in
    another process, stamped by its own CLOCK_MONOTONIC reading (the clock of ``time.monotonic()``).
    """

    events: list[Event] = field(default_factory=list)
    sources: list[Callable[[], list[Event]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, consumer: str, kind: str, partitions: Iterable[int]) -> None:
        with self._lock:
            self.events.append(Event(time.monotonic(), consumer, kind, tuple(sorted(partitions))))

    def add(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def snapshot(self) -> list[Event]:
        """The events so far in time order (a copy: consumers keep appending from their threads)."""
        with self._lock:
            for source in self.sources:
                self.events.extend(source())
            return sorted(self.events, key=lambda event: event.at)

    def holdings(self) -> dict[str, set[int]]:
        """What each consumer holds after the last event."""
        held: dict[str, set[int]] = {}
        for event in self.snapshot():
            mine = held.setdefault(event.consumer, set())
            if event.kind == "assigned":
                mine.update(event.partitions)
            else:
                mine.difference_update(event.partitions)
        return held

    def double_ownership(self) -> list[str]:
        """Every moment a consumer was given a partition another consumer still held."""
        held: dict[str, set[int]] = {}
        problems: list[str] = []
        for event in self.snapshot():
            mine = held.setdefault(event.consumer, set())
            if event.kind != "assigned":
                mine.difference_update(event.partitions)
                continue
            for other, theirs in held.items():
                both = theirs & set(event.partitions)
                if other != event.consumer and both:
                    problems.append(f"{event.consumer} got {sorted(both)} while {other} held them")
            mine.update(event.partitions)
        return problems

    def full_revocations(self, consumers: Iterable[str]) -> list[Event]:
        """Revocations of everything a consumer held (what EAGER does on every rebalance)."""
        watched = set(consumers)
        held: dict[str, set[int]] = {}
        found: list[Event] = []
        for event in self.snapshot():
            mine = held.setdefault(event.consumer, set())
            if event.kind == "assigned":
                mine.update(event.partitions)
                continue
            if event.consumer in watched and mine and set(event.partitions) >= mine:
                found.append(event)
            mine.difference_update(event.partitions)
        return found


def settled(
    log: GroupLog, sizes: dict[str, int], *, partitions: int, deadline_s: float = 60.0, quiet_s: float = 2.0
) -> dict[str, set[int]]:
    """Wait until each consumer in ``sizes`` holds that many partitions, all ``partitions`` are covered and no
    listener has fired for ``quiet_s``; return the holdings, or fail the test after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        events = log.snapshot()
        held = log.holdings()
        mine = {member: held.get(member, set()) for member in sizes}
        last = events[-1].at if events else 0.0
        if (
            set().union(*mine.values()) == set(range(partitions))
            and {member: len(held) for member, held in mine.items()} == sizes
            and time.monotonic() - last >= quiet_s
        ):
            return mine
        time.sleep(0.2)
    pytest.fail(f"the group did not settle on {sizes} in {deadline_s} s; events: {log.snapshot()}\n{_stacks()}")


def _stacks() -> str:
    """Every thread's Python stack: where the in-process members are waiting when a group does not settle."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        faulthandler.dump_traceback(out, all_threads=True)
        out.seek(0)
        return out.read()
