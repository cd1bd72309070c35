"""How strategies are ranked: each strategy's figures over the whole history, and a stated score.

The score is a tuple of figures compared in order, every one "lower is better"; the
strategy name breaks a complete tie, so the ranking is deterministic. By default:
pause cost, then worst imbalance, then moved partitions (``DEFAULT_RANK_BY``).
``revoked`` is not added to ``moved``: every protocol's ``revoked`` already contains
``moved``, so their sum counts each move twice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "COLUMN_DEFINITIONS",
    "DEFAULT_RANK_BY",
    "RANK_KEYS",
    "RankingError",
    "StrategySummary",
    "eager_apart_note",
    "parse_rank_by",
    "rank",
]


@dataclass(frozen=True, slots=True)
class StrategySummary:
    """One strategy over the whole history (rows without an input error).

    Attributes:
        strategy: the strategy's name.
        protocol: how it rebalances (EAGER, COOPERATIVE or CONSUMER).
        rebalances: snapshots that rebalanced.
        pause: total ``pause_partition_seconds``.
        imbalance: the worst max/mean load ratio of any snapshot: weighted when weights were
            given (``weighted_max_mean_ratio``), else in partitions (``max_load * members /
            assigned``); 1.0 is perfectly even.
        moved: total partitions moved between live members.
        revoked: total partitions revoked from live members (contains ``moved``).
        orphaned: total partitions whose owner had left.
        topic_spread: the worst ``topic_spread`` of any snapshot.
        load_spread: the worst ``load_spread`` of any snapshot.
        rounds: total rebalance rounds.
        invalid: snapshots whose assignment was not valid.
        assign_ms: total time in the assignor, in milliseconds.
        weighted: whether ``imbalance`` is weighted.
        imbalance_p95: the 95th percentile of the snapshots' max/mean load ratio (weighted likewise): the usual
            bad case, where the worst can be one partition heavier than the mean, which no assignment splits.
        moved_weight: the total weight of the partitions moved between live members, each at the weight in force
            at its snapshot (None without a weights table).
    """

    strategy: str
    protocol: str
    rebalances: int
    pause: float
    imbalance: float
    moved: int
    revoked: int
    orphaned: int
    topic_spread: int
    load_spread: int
    rounds: int
    invalid: int
    assign_ms: float
    weighted: bool = False
    imbalance_p95: float = 1.0
    moved_weight: float | None = None


RANK_KEYS: dict[str, str] = {
    "pause": "total partition-seconds not consumed because of rebalances (pause_partition_seconds)",
    "imbalance": "worst max/mean load ratio of any snapshot (weighted when weights are given; 1.0 = even)",
    "imbalance_p95": "95th percentile of the snapshots' max/mean load ratio (weighted likewise; 1.0 = even)",
    "moved": "total partitions moved from one live member to another",
    "moved_weight": "total weight of the partitions moved between live members, each at its snapshot's weight "
    "(with a weights table)",
    "revoked": "total partitions live members had to give up (contains moved)",
    "orphaned": "total partitions whose owner had left the group",
    "topic_spread": "worst per-topic spread of any snapshot (max - min of a topic's subscribers' counts)",
    "load_spread": "worst load spread of any snapshot (max - min partitions per member)",
    "rounds": "total rebalance rounds",
    "invalid": "snapshots whose assignment was not valid",
    "assign_ms": "total time spent in the assignor (ms)",
}
"""Every figure ``--rank-by`` accepts, with its one-line definition; lower is better for all."""

DEFAULT_RANK_BY: tuple[str, ...] = ("pause", "imbalance", "moved")

COLUMN_DEFINITIONS: dict[str, str] = {
    "rank": "position by the score; the strategy name breaks a complete tie",
    "strategy": "the assignor replayed",
    "protocol": "EAGER revokes everything; COOPERATIVE (KIP-429) and CONSUMER (KIP-848) only what moves",
    "rebalances": "snapshots where the group rebalanced",
    **RANK_KEYS,
}
"""The one-line definition of each column of the ranking table."""


class RankingError(ValueError):
    """A ``--rank-by`` that names no known figure; the message lists the known ones."""


def parse_rank_by(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"pause,moved"`` (or a sequence of names) as a tuple of known figure names, in order.

    Raises:
        RankingError: an empty list, an unknown or a repeated name.
    """
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else [n.strip() for n in text]
    names = [n for n in names if n]
    if not names:
        msg = f"--rank-by needs at least one of: {', '.join(RANK_KEYS)}"
        raise RankingError(msg)
    for name in names:
        if name not in RANK_KEYS:
            msg = f"--rank-by: unknown figure {name!r}; choose from {', '.join(RANK_KEYS)}"
            raise RankingError(msg)
    if len(set(names)) != len(names):
        msg = f"--rank-by names a figure twice: {','.join(names)}"
        raise RankingError(msg)
    return tuple(names)


def score(summary: StrategySummary, rank_by: Sequence[str]) -> tuple[float, ...]:
    """The figures ``rank_by`` names, in order: the score compared lexicographically (a figure a strategy does not
    have, ``moved_weight`` without weights, counts as infinite: last)."""
    values = (getattr(summary, name) for name in rank_by)
    return tuple(math.inf if value is None else float(value) for value in values)


def rank(strategies: Sequence[StrategySummary], rank_by: Sequence[str] = DEFAULT_RANK_BY) -> list[StrategySummary]:
    """The strategies best first: by :func:`score`, then by name."""
    keys = parse_rank_by(rank_by)
    return sorted(strategies, key=lambda s: (score(s, keys), s.strategy))


def eager_apart_note(
    strategies: Sequence[StrategySummary], *, heartbeat_seconds: float, together: float, apart: float
) -> str | None:
    """What the EAGER strategies' pause rests on, and what it would be if the members learned of a rebalance apart.

    The pause model prices an EAGER rebalance's surviving partitions at ``together`` heartbeats
    (``PauseModel.eager_heartbeats``: members that learn of it on the same heartbeat, as every calibrated Java
    group's did after joins and LeaveGroups) and a crash's at ``apart`` (``eager_crash_heartbeats``: up to a
    heartbeat apart). Each revoked partition of an EAGER row (``revoked``: every partition a survivor held) waiting
    ``apart`` instead adds ``(apart - together) * heartbeat_seconds``: an upper bound, since a member whose
    subscription changed is already priced apart. None when no row is EAGER or the bound adds nothing.

    >>> rows = [StrategySummary("range", "EAGER", 2, 10.0, 1.0, 0, 40, 0, 0, 0, 2, 0, 0.0),
    ...         StrategySummary("cooperative-sticky", "COOPERATIVE", 2, 30.0, 1.0, 5, 5, 0, 0, 0, 4, 0, 0.0)]
    >>> print(eager_apart_note(rows, heartbeat_seconds=3.0, together=0.1, apart=0.3))  # doctest: +NORMALIZE_WHITESPACE
    EAGER's pause assumes the members learn of each rebalance on the same heartbeat (eager_heartbeats 0.1, as
    the calibrated Java groups did after joins and LeaveGroups); were they up to a heartbeat apart (a slow poll
    loop, a long GC pause: eager_crash_heartbeats 0.3, as a crash's survivors), the EAGER strategies would pause
    at most: range 34 partition-seconds; the lowest pause would then be cooperative-sticky's.
    """
    eager = [s for s in strategies if s.protocol == "EAGER"]
    extra = max(0.0, apart - together) * heartbeat_seconds
    if not eager or extra == 0.0:
        return None
    shifted = {s.strategy: s.pause + s.revoked * extra if s.protocol == "EAGER" else s.pause for s in strategies}
    lowest = min(sorted(shifted), key=lambda name: shifted[name])
    bounds = ", ".join(f"{s.strategy} {shifted[s.strategy]:,.0f} partition-seconds" for s in eager)
    return (
        f"EAGER's pause assumes the members learn of each rebalance on the same heartbeat (eager_heartbeats "
        f"{together:g}, as the calibrated Java groups did after joins and LeaveGroups); were they up to a heartbeat "
        f"apart (a slow poll loop, a long GC pause: eager_crash_heartbeats {apart:g}, as a crash's survivors), the "
        f"EAGER strategies would pause at most: {bounds}; the lowest pause would then be {lowest}'s."
    )
