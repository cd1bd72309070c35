"""The assignors on Spark: replay membership histories per group and measure each strategy.

Needs the ``spark`` extra (pyspark, pandas, pyarrow), imported only when Spark is used. The tables
are in :mod:`spark_udfs.tables.schemas`; the pure replay of one group is :mod:`spark_udfs.replay.group_replay`
and runs without a JVM, :mod:`spark_udfs.replay.frames` wraps it for pandas; :func:`evaluate_history`
(:mod:`spark_udfs.jobs.history`) runs it on Spark (a local session, a cluster or Spark Connect),
:func:`register_udfs` adds the SQL UDFs and :func:`get_session` gives a session.
"""

from assignors.tables import DETAIL_COLUMNS, MEMBERSHIP_COLUMNS, OUTPUT_COLUMNS, TOPICS_COLUMNS
from spark_udfs.jobs.history import evaluate_history
from spark_udfs.replay.frames import replay_frame
from spark_udfs.replay.group_replay import STRATEGIES, GroupDataError, MemberRow, TopicHistory, replay_group
from spark_udfs.session import SessionError, get_session
from spark_udfs.tables.schemas import SchemaError
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
