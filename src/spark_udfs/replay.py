"""The replay's names in one import: the tables, one group's pure replay, and its pandas frames.

The code lives in three modules: :mod:`spark_udfs.schemas` (column lists, DDL, schema check,
CSV typing), :mod:`spark_udfs.group_replay` (the pure replay of one group, no JVM) and
:mod:`spark_udfs.frames` (the replay as the Spark job's pandas body). This module keeps the
import path ``spark_udfs.replay`` that users and the job have always used.
"""

from __future__ import annotations

from spark_udfs.costs import PauseTiming, WeightHistory
from spark_udfs.frames import member_rows, replay_frame, rows_to_frame
from spark_udfs.group_replay import (
    ALL_STRATEGIES,
    STRATEGIES,
    GroupDataError,
    MemberRow,
    TopicHistory,
    replay_group,
    strategy_assignor,
)
from spark_udfs.schemas import (
    DETAIL_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    TOPICS_COLUMNS,
    WEIGHTS_COLUMNS,
    ddl,
)

__all__ = [
    "ALL_STRATEGIES",
    "DETAIL_COLUMNS",
    "MEMBERSHIP_COLUMNS",
    "OUTPUT_COLUMNS",
    "STRATEGIES",
    "TOPICS_COLUMNS",
    "WEIGHTS_COLUMNS",
    "GroupDataError",
    "MemberRow",
    "PauseTiming",
    "TopicHistory",
    "WeightHistory",
    "ddl",
    "member_rows",
    "replay_frame",
    "replay_group",
    "rows_to_frame",
    "strategy_assignor",
]
