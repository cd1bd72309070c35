"""What a simulation did, and its two renderings: readable text and JSON.

Exported from :mod:`assignors.rebalance`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assignors._classic.rounds import Round
from assignors._core.model import MemberId, TopicPartition

__all__ = ["Note", "SimulatedRebalance", "SimulatedRound", "Timeline", "compact", "timeline_json"]

SimulatedRound = Round
"""The simulator's rounds are the engine's :class:`~assignors.rebalance.Round` (the old name stays)."""


@dataclass(frozen=True, slots=True)
class SimulatedRebalance:
    """A rebalance: when, why, and its rounds."""

    at: float
    cause: str
    rounds: tuple[Round, ...]

    @property
    def generation(self) -> int:
        return self.rounds[-1].generation

    @property
    def assignment(self) -> dict[MemberId, tuple[TopicPartition, ...]]:
        """What each member owns when the rebalance ends."""
        return {member: a.partitions for member, a in self.rounds[-1].assignment.items()}


@dataclass(frozen=True, slots=True)
class Note:
    """Something that happened without a rebalance (a member down, a static member back)."""

    at: float
    text: str


@dataclass(slots=True)
class Timeline:
    """Everything a simulation did, in time order: rebalances and notes."""

    entries: list[SimulatedRebalance | Note] = field(default_factory=list)

    @property
    def rebalances(self) -> list[SimulatedRebalance]:
        return [entry for entry in self.entries if isinstance(entry, SimulatedRebalance)]

    def to_json(self) -> list[dict[str, Any]]:
        """The timeline as JSON-ready objects (partitions as ``"topic-partition"`` strings)."""
        return timeline_json(self)

    def render(self) -> str:
        """A readable timeline: one block per rebalance, a line per note."""
        lines: list[str] = []
        for entry in self.entries:
            if isinstance(entry, Note):
                lines.append(f"t={entry.at:g}s  {entry.text}")
                continue
            lines.append(f"t={entry.at:g}s  rebalance: {entry.cause}")
            for number, r in enumerate(entry.rounds, 1):
                protocols = sorted({p.name for p in r.protocols.values()})
                lines.append(
                    f"  round {number}: generation {r.generation}, leader {r.leader}, assignor {r.assignor}, "
                    f"{'/'.join(protocols)}"
                )
                for member in sorted(r.assignment):
                    change = ""
                    if r.revoked.get(member):
                        change += f"  revoked {compact(r.revoked[member])}"
                    if r.added.get(member):
                        change += f"  added {compact(r.added[member])}"
                    lines.append(f"    {member}: {compact(r.assignment[member].partitions) or '-'}{change}")
                if r.unowned:
                    lines.append(f"    no consumer: {compact(r.unowned)}")
                if r.rejoin:
                    lines.append(f"    rejoin: {', '.join(r.rejoin)}")
        return "\n".join(lines)


def compact(partitions: Iterable[TopicPartition]) -> str:
    """``t[0-2,5] u[1]``: partitions per topic, runs collapsed."""
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    parts = []
    for topic, numbers in by_topic.items():
        runs: list[str] = []
        for _, run in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
            values = [number for _, number in run]
            runs.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
        parts.append(f"{topic}[{','.join(runs)}]")
    return " ".join(parts)


def _strs(partitions: Iterable[TopicPartition]) -> list[str]:
    return [str(tp) for tp in sorted(partitions)]


def timeline_json(timeline: Timeline) -> list[dict[str, Any]]:
    """The timeline as JSON-ready objects (partitions as ``"topic-partition"`` strings)."""
    out: list[dict[str, Any]] = []
    for entry in timeline.entries:
        if isinstance(entry, Note):
            out.append({"at": entry.at, "note": entry.text})
            continue
        rounds = [
            {
                "generation": r.generation,
                "leader": r.leader,
                "assignor": r.assignor,
                "protocols": {m: p.name for m, p in sorted(r.protocols.items())},
                "members": {
                    m: {
                        "owns": _strs(r.assignment[m].partitions),
                        "revoked": _strs(r.revoked[m]),
                        "added": _strs(r.added[m]),
                    }
                    for m in sorted(r.assignment)
                },
                "unowned": _strs(r.unowned),
                "rejoin": list(r.rejoin),
            }
            for r in entry.rounds
        ]
        out.append({"at": entry.at, "rebalance": entry.cause, "rounds": rounds})
    return out
