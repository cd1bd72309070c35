"""The assignors on Spark: replay membership histories per group and measure each strategy.

Needs the ``spark`` extra (pyspark, pandas, pyarrow), imported only when Spark is used. The tables
are in :mod:`spark_udfs.schemas`; the pure replay of one group is :mod:`spark_udfs.group_replay`
and runs without a JVM, :mod:`spark_udfs.frames` wraps it for pandas; :func:`evaluate_history`
(:mod:`spark_udfs.evaluation`) runs it on Spark (a local session, a cluster or Spark Connect),
:func:`register_udfs` adds the SQL UDFs and :func:`get_session` gives a session.
"""

from spark_udfs.evaluation import evaluate_history
from spark_udfs.frames import replay_frame
from spark_udfs.group_replay import STRATEGIES, GroupDataError, MemberRow, TopicHistory, replay_group
from spark_udfs.schemas import DETAIL_COLUMNS, MEMBERSHIP_COLUMNS, OUTPUT_COLUMNS, TOPICS_COLUMNS, SchemaError
from spark_udfs.session import SessionError, get_session
from spark_udfs.udfs import register_udfs

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
