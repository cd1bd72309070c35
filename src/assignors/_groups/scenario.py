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
restart takes optional ``assignors`` and ``topics``. ``["consumer"]`` (``group.protocol=consumer``),
``["uniform"]`` or ``["consumer-range"]`` (also ``group.remote.assignor``) make a member speak
KIP-848's consumer protocol: an online upgrade when the group is classic.
"""

from __future__ import annotations

from dataclasses import dataclass

from assignors._classic.events import AddPartitions, Crash, Event, Join, Leave, Restart, Subscribe
from assignors._classic.timeline import Timeline
from assignors._core.json_input import (
    as_list,
    as_object,
    check_fields,
    fail,
    name,
    names,
    number,
    optional_name,
    partition_count,
)
from assignors._groups.simulator import GroupSimulator

__all__ = ["Scenario", "parse_scenario"]

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
        """Simulate the scenario from an empty group (on the consumer-protocol model once a member speaks it)."""
        return GroupSimulator(self.partitions, session_timeout_s=self.session_timeout_s).run(self.events)


def _event(raw: object, where: str) -> Event:
    event = as_object(raw, where)
    kinds = [kind for kind in _KINDS if kind in event]
    if len(kinds) != 1:
        fail(where, f"needs exactly one of {', '.join(_KINDS)}")
    kind = kinds[0]
    check_fields(event, where, allowed={"at", kind} | _FIELDS[kind])
    at = number(event.get("at"), f"{where}.at")
    subject = name(event[kind], f"{where}.{kind}")
    if kind == "join":
        strategy = {"assignors": names(event["assignors"], f"{where}.assignors")} if "assignors" in event else {}
        return Join(
            at,
            subject,
            names(event.get("topics"), f"{where}.topics"),
            instance_id=optional_name(event.get("instance_id"), f"{where}.instance_id"),
            rack=optional_name(event.get("rack"), f"{where}.rack"),
            **strategy,  # without it, Join's default: Kafka's (range)
        )
    if kind == "leave":
        return Leave(at, subject)
    if kind == "crash":
        return Crash(at, subject)
    if kind == "restart":
        return Restart(
            at,
            subject,
            number(event.get("downtime_s"), f"{where}.downtime_s"),
            assignors=None if event.get("assignors") is None else names(event["assignors"], f"{where}.assignors"),
            topics=None if event.get("topics") is None else names(event["topics"], f"{where}.topics"),
        )
    if kind == "subscribe":
        return Subscribe(at, subject, names(event.get("topics"), f"{where}.topics"))
    return AddPartitions(at, subject, partition_count(event.get("count"), f"{where}.count"))


def parse_scenario(data: object) -> Scenario:
    """Validate a scenario loaded from JSON.

    Raises:
        ScenarioError: naming the field, e.g. ``events[2].topics``.
    """
    root = as_object(data, "scenario")
    check_fields(root, "scenario", allowed={"session_timeout_s", "topics", "events"}, required={"topics", "events"})
    partitions = {
        name(topic, "topics"): partition_count(count, f"topics.{topic}")
        for topic, count in as_object(root["topics"], "topics").items()
    }
    timeout = number(root.get("session_timeout_s", 10.0), "session_timeout_s")
    if timeout <= 0:
        fail("session_timeout_s", "must be positive")
    events = as_list(root["events"], "events")
    return Scenario(partitions, timeout, tuple(_event(raw, f"events[{i}]") for i, raw in enumerate(events)))
