"""Simulator scenarios as JSON (``assignors simulate --scenario FILE``).

A scenario is an object::

    {
      "session_timeout_s": 10,
      "topics": {"orders": 6},
      "events": [
        {"at": 0, "join": "a", "topics": ["orders"], "assignors": ["cooperative-sticky"], "instance_id": "a-1"},
        {"at": 5, "crash": "a"},
        {"at": 6, "restart": "b", "downtime_s": 3, "assignors": ["cooperative-sticky"]},
        {"at": 7, "subscribe": "b", "topics": ["orders", "payments"]},
        {"at": 8, "add_partitions": "orders", "count": 12},
        {"at": 9, "leave": "b"}
      ]
    }

Join takes optional ``assignors`` (default ``["range"]``), ``instance_id`` and ``rack``;
restart takes optional ``assignors`` and ``topics``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NoReturn

from assignors._errors import InvalidSubscriptionError
from assignors._group import (
    AddPartitions,
    Crash,
    Event,
    GroupSimulator,
    Join,
    Leave,
    Note,
    Restart,
    SimulatedRebalance,
    Subscribe,
    Timeline,
)
from assignors._model import INT32_MAX, is_partition_count

__all__ = ["Scenario", "parse_scenario", "timeline_json"]

_KINDS = ("join", "leave", "crash", "restart", "subscribe", "add_partitions")
_FIELDS = {
    "join": {"topics", "assignors", "instance_id", "rack"},
    "leave": set(),
    "crash": set(),
    "restart": {"downtime_s", "assignors", "topics"},
    "subscribe": {"topics"},
    "add_partitions": {"count"},
}


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed scenario: the group's topics, its session timeout and its events."""

    partitions: dict[str, int]
    session_timeout_s: float
    events: tuple[Event, ...]

    def run(self) -> Timeline:
        """Simulate the scenario from an empty group."""
        return GroupSimulator(self.partitions, session_timeout_s=self.session_timeout_s).run(self.events)


def _fail(where: str, problem: str) -> NoReturn:
    msg = f"{where}: {problem}"
    raise InvalidSubscriptionError(msg)


def _number(value: object, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < minimum:
        _fail(where, f"{value!r} must be a number >= {minimum:g}")
    return float(value)


def _name(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        _fail(where, f"{value!r} must be a non-empty string")
    return value


def _names(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        _fail(where, f"{value!r} must be a list of strings")
    return tuple(_name(item, f"{where}[{index}]") for index, item in enumerate(value))


def _optional_name(value: object, where: str) -> str | None:
    return None if value is None else _name(value, where)


def _event(raw: object, where: str) -> Event:
    if not isinstance(raw, dict):
        _fail(where, "must be an object")
    kinds = [kind for kind in _KINDS if kind in raw]
    if len(kinds) != 1:
        _fail(where, f"needs exactly one of {', '.join(_KINDS)}")
    kind = kinds[0]
    unknown = sorted(set(raw) - {"at", kind} - _FIELDS[kind])
    if unknown:
        _fail(where, f"unknown field(s) {unknown} for {kind}")
    at = _number(raw.get("at"), f"{where}.at")
    subject = _name(raw[kind], f"{where}.{kind}")
    if kind == "join":
        assignors = _names(raw.get("assignors", ["range"]), f"{where}.assignors")
        return Join(
            at,
            subject,
            _names(raw.get("topics"), f"{where}.topics"),
            assignors,
            instance_id=_optional_name(raw.get("instance_id"), f"{where}.instance_id"),
            rack=_optional_name(raw.get("rack"), f"{where}.rack"),
        )
    if kind == "leave":
        return Leave(at, subject)
    if kind == "crash":
        return Crash(at, subject)
    if kind == "restart":
        return Restart(
            at,
            subject,
            _number(raw.get("downtime_s"), f"{where}.downtime_s"),
            assignors=None if raw.get("assignors") is None else _names(raw["assignors"], f"{where}.assignors"),
            topics=None if raw.get("topics") is None else _names(raw["topics"], f"{where}.topics"),
        )
    if kind == "subscribe":
        return Subscribe(at, subject, _names(raw.get("topics"), f"{where}.topics"))
    return AddPartitions(at, subject, _count(raw.get("count"), f"{where}.count"))


def _count(value: object, where: str) -> int:
    if not is_partition_count(value):
        _fail(where, f"{value!r} must be an integer in 0..{INT32_MAX}")
    return value


def parse_scenario(data: object) -> Scenario:
    """Validate a scenario loaded from JSON.

    Raises:
        InvalidSubscriptionError: naming the field, e.g. ``events[2].topics``.
    """
    if not isinstance(data, dict):
        _fail("scenario", "must be a JSON object")
    unknown = sorted(set(data) - {"session_timeout_s", "topics", "events"})
    if unknown:
        _fail("scenario", f"unknown field(s) {unknown}")
    topics = data.get("topics")
    if not isinstance(topics, dict):
        _fail("topics", "must be an object of topic name to partition count")
    partitions: dict[str, int] = {}
    for topic, count in topics.items():
        partitions[_name(topic, "topics")] = _count(count, f"topics.{topic}")
    timeout = _number(data.get("session_timeout_s", 10.0), "session_timeout_s")
    if timeout <= 0:
        _fail("session_timeout_s", "must be positive")
    events = data.get("events")
    if not isinstance(events, list):
        _fail("events", "must be a list")
    return Scenario(partitions, timeout, tuple(_event(raw, f"events[{i}]") for i, raw in enumerate(events)))


def _strs(partitions: Any) -> list[str]:
    return [str(tp) for tp in sorted(partitions)]


def timeline_json(timeline: Timeline) -> list[dict[str, Any]]:
    """The timeline as JSON-ready objects (partitions as ``"topic-partition"`` strings)."""
    out: list[dict[str, Any]] = []
    for entry in timeline.entries:
        if isinstance(entry, Note):
            out.append({"at": entry.at, "note": entry.text})
            continue
        assert isinstance(entry, SimulatedRebalance)  # noqa: S101 - the only other entry type
        rounds = [
            {
                "generation": r.generation,
                "leader": r.leader,
                "assignor": r.assignor,
                "protocols": {m: p.name for m, p in sorted(r.protocols.items())},
                "members": {
                    m: {"owns": _strs(r.assignment[m]), "revoked": _strs(r.revoked[m]), "added": _strs(r.added[m])}
                    for m in sorted(r.assignment)
                },
                "unowned": _strs(r.unowned),
                "rejoin": list(r.rejoin),
            }
            for r in entry.rounds
        ]
        out.append({"at": entry.at, "rebalance": entry.cause, "rounds": rounds})
    return out
