"""The durations behind the pause cost: how long a rebalance round stops a group, the heartbeat interval."""

from __future__ import annotations

from dataclasses import dataclass

from assignors.metrics import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_REBALANCE_SECONDS

__all__ = ["DEFAULT_TIMING", "PauseTiming"]


@dataclass(frozen=True, slots=True)
class PauseTiming:
    """The durations behind ``pause_partition_seconds`` (see :func:`assignors.metrics.pause_partition_seconds`)."""

    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS


DEFAULT_TIMING = PauseTiming()
