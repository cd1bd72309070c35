"""Metrics of assignments: balance, movement between two assignments, validity, weighted load, pause cost.

These are pure functions over plain mappings; the tests, the benchmarks, the
simulator and the Spark evaluation all measure with them.

An assignment argument is a mapping of member id to either an
:class:`~assignors.Assignment` or any iterable of :class:`~assignors.TopicPartition`.
"""

from assignors._core.metrics import (
    CALIBRATION_SETTINGS,
    CLIENT_PAUSE_FACTORS,
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_PAUSE_MODEL,
    DEFAULT_REBALANCE_SECONDS,
    KAFKA_DEFAULT,
    KAFKA_DEFAULT_SETTINGS,
    MEASURED,
    AssignmentLike,
    Balance,
    InvalidWeightError,
    Movement,
    PartitionWeights,
    PauseModel,
    PauseProtocol,
    Violation,
    WeightedLoad,
    Weights,
    balance,
    check_assignment,
    leader_share,
    moved_weight,
    movement,
    owners,
    pause_partition_seconds,
    rebalance_pause,
    rejoined_partitions,
    restart_pause,
    topic_spreads,
    weighted_load,
)

__all__ = [
    "CALIBRATION_SETTINGS",
    "CLIENT_PAUSE_FACTORS",
    "DEFAULT_HEARTBEAT_SECONDS",
    "DEFAULT_PAUSE_MODEL",
    "DEFAULT_REBALANCE_SECONDS",
    "KAFKA_DEFAULT",
    "KAFKA_DEFAULT_SETTINGS",
    "MEASURED",
    "AssignmentLike",
    "Balance",
    "InvalidWeightError",
    "Movement",
    "PartitionWeights",
    "PauseModel",
    "PauseProtocol",
    "Violation",
    "WeightedLoad",
    "Weights",
    "balance",
    "check_assignment",
    "leader_share",
    "moved_weight",
    "movement",
    "owners",
    "pause_partition_seconds",
    "rebalance_pause",
    "rejoined_partitions",
    "restart_pause",
    "topic_spreads",
    "weighted_load",
]
