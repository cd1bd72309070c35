"""The assignors on Spark: replay membership histories per group and measure each strategy.

Needs the ``spark`` extra (pyspark, pandas, pyarrow). The pure replay lives in
:mod:`spark_udfs.replay` and runs without a JVM; :func:`evaluate_history` runs it on Spark.
"""

from spark_udfs.replay import (
    DETAIL_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    STRATEGIES,
    TOPICS_COLUMNS,
    MemberRow,
    TopicHistory,
    replay_frame,
    replay_group,
)

__all__ = [
    "DETAIL_COLUMNS",
    "MEMBERSHIP_COLUMNS",
    "OUTPUT_COLUMNS",
    "STRATEGIES",
    "TOPICS_COLUMNS",
    "MemberRow",
    "TopicHistory",
    "replay_frame",
    "replay_group",
]
