"""The pure-Python replay of one group, and its pandas frames and Arrow tables: the names in one import.

The code lives beside: :mod:`~spark_udfs.replay.group_input` (one group's rows checked into snapshots),
:mod:`~spark_udfs.replay.group_replay` (the replay under each strategy, no JVM),
:mod:`~spark_udfs.replay.frames` (the replay as the Spark job's body, on pandas frames or Arrow tables),
:mod:`~spark_udfs.replay.actual` (the cluster's recorded assignments measured alike),
:mod:`~spark_udfs.replay.weights` and :mod:`~spark_udfs.replay.timing` (what the weighted columns and the pause
cost read). The tables' columns are :mod:`assignors.tables`'; this package keeps the import path
``spark_udfs.replay`` users have always used.
"""

from __future__ import annotations

from assignors.tables import DETAIL_COLUMNS, MEMBERSHIP_COLUMNS, OUTPUT_COLUMNS, TOPICS_COLUMNS, WEIGHTS_COLUMNS
from spark_udfs.replay.frames import (
    member_rows,
    replay_frame,
    replay_table,
    rows_to_frame,
    rows_to_table,
    table_member_rows,
)
from spark_udfs.replay.group_replay import (
    ALL_STRATEGIES,
    STRATEGIES,
    WEIGHTED_STRATEGIES,
    GroupDataError,
    MemberRow,
    TopicHistory,
    default_strategies,
    replay_group,
    strategy_assignor,
)
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.weights import WeightHistory
from spark_udfs.tables.schemas import ddl

__all__ = [
    "ALL_STRATEGIES",
    "DETAIL_COLUMNS",
    "MEMBERSHIP_COLUMNS",
    "OUTPUT_COLUMNS",
    "STRATEGIES",
    "TOPICS_COLUMNS",
    "WEIGHTED_STRATEGIES",
    "WEIGHTS_COLUMNS",
    "GroupDataError",
    "MemberRow",
    "PauseTiming",
    "TopicHistory",
    "WeightHistory",
    "ddl",
    "default_strategies",
    "member_rows",
    "replay_frame",
    "replay_group",
    "replay_table",
    "rows_to_frame",
    "rows_to_table",
    "strategy_assignor",
    "table_member_rows",
]
