"""A small weighted history where sticky stacks hot partitions: weighted-sticky's worked example in the evaluation.

One group ``g`` on one topic ``t`` of six partitions, observed four times, five minutes apart: ``t-0`` and ``t-2``
are hot (10), the rest weigh 1; ``t-4`` heats up to 8 at the second snapshot and ``t-0`` cools down to 1 at the
fourth. Members a and b, then c joins, then b leaves, then nothing changes but the weights. Plain tuples in the
tables' column order (no Spark or pandas import).
"""

from __future__ import annotations

import datetime as dt

__all__ = ["MEMBERSHIP", "STEP", "T0", "TOPIC_ROWS", "WEIGHT_ROWS"]

T0 = dt.datetime(2026, 1, 1, 12, 0)  # noqa: DTZ001 - Spark timestamps are naive (UTC)
STEP = dt.timedelta(minutes=5)
_MEMBERS = (("a", "b"), ("a", "b", "c"), ("a", "c"), ("a", "c"))
MEMBERSHIP = [("g", T0 + i * STEP, m, ["t"], None, None) for i, members in enumerate(_MEMBERS) for m in members]
"""``group_id, snapshot_ts, member_id, topics, group_instance_id, rack_id``."""
TOPIC_ROWS = [("t", 6, None)]
WEIGHT_ROWS = [
    ("t", None, 1.0, None),
    ("t", 0, 10.0, None),
    ("t", 2, 10.0, None),
    ("t", 4, 8.0, T0 + STEP),
    ("t", 0, 1.0, T0 + 3 * STEP),
]
"""``topic, partition, weight, valid_from``."""
