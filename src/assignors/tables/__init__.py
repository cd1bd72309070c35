"""The tables ``assignors collect`` writes and ``assignors evaluate`` reads and writes: their columns, in one home.

Each table is a tuple of ``(name, type)`` in Spark SQL's type names, as plain Python (no Spark needed);
``INT32_MAX`` is the largest value of an ``int`` column; :func:`is_topic_id` says whether a ``topic_id`` value
is a Kafka topic id.
"""

from assignors._core.model import INT32_MAX, is_topic_id
from assignors._core.tables import (
    ACTUAL_COLUMNS,
    ACTUAL_STRATEGY,
    ASSIGNMENT_TYPE,
    COLLECTED_TOPICS_COLUMNS,
    DETAIL_COLUMNS,
    ERROR_COLUMNS,
    HANDOVERS_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OPTIONAL_COLUMNS,
    OUTPUT_COLUMNS,
    PARAMETERS_COLUMNS,
    SELF_CHECK_COLUMNS,
    TOPIC_ID_COLUMN,
    TOPICS_COLUMNS,
    WEIGHTS_COLUMNS,
    Columns,
    column_names,
)

__all__ = [
    "ACTUAL_COLUMNS",
    "ACTUAL_STRATEGY",
    "ASSIGNMENT_TYPE",
    "COLLECTED_TOPICS_COLUMNS",
    "DETAIL_COLUMNS",
    "ERROR_COLUMNS",
    "HANDOVERS_COLUMNS",
    "INT32_MAX",
    "MEMBERSHIP_COLUMNS",
    "OPTIONAL_COLUMNS",
    "OUTPUT_COLUMNS",
    "PARAMETERS_COLUMNS",
    "SELF_CHECK_COLUMNS",
    "TOPICS_COLUMNS",
    "TOPIC_ID_COLUMN",
    "WEIGHTS_COLUMNS",
    "Columns",
    "column_names",
    "is_topic_id",
]
