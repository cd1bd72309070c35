"""The assignors on Spark: replay membership histories per group and measure each strategy.

Needs the ``spark`` extra (pyspark, pandas, pyarrow), imported only when Spark is used. The pure
replay lives in :mod:`spark_udfs.replay` and runs without a JVM; :func:`evaluate_history` runs it
on Spark (a local session, a cluster or Spark Connect), :func:`register_udfs` adds the SQL UDFs
and :func:`get_session` gives a session.
"""

from spark_udfs.replay import (
    DETAIL_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    STRATEGIES,
    TOPICS_COLUMNS,
    GroupDataError,
    MemberRow,
    TopicHistory,
    replay_frame,
    replay_group,
)
from spark_udfs.session import SessionError, get_session
from spark_udfs.udfs import SchemaError, evaluate_history, register_udfs

__all__ = [
    "DETAIL_COLUMNS",
    "MEMBERSHIP_COLUMNS",
    "OUTPUT_COLUMNS",
    "STRATEGIES",
    "TOPICS_COLUMNS",
    "GroupDataError",
    "MemberRow",
    "SchemaError",
    "SessionError",
    "TopicHistory",
    "evaluate_history",
    "get_session",
    "register_udfs",
    "replay_frame",
    "replay_group",
]
