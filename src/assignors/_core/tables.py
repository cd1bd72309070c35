"""The one home of every table's columns: what ``assignors collect`` writes and the Spark evaluation reads and writes.

Each table is a tuple of ``(name, type)``, the type written as Spark SQL names it (``string``, ``int``,
``timestamp``, ``array<string>``...), as plain Python: the collector writes these tables without Spark, the
Spark layer turns them into its schemas. docs/evaluation.md defines each column.

- inputs: :data:`MEMBERSHIP_COLUMNS`, :data:`TOPICS_COLUMNS`, :data:`WEIGHTS_COLUMNS` (optional),
  :data:`ACTUAL_COLUMNS` (the recorded assignments, ``--actual``) and :data:`HANDOVERS_COLUMNS` (KIP-848's
  recorded hand-overs, beside them);
- outputs: :data:`OUTPUT_COLUMNS` (one row per group, snapshot and strategy), :data:`DETAIL_COLUMNS` (one row
  per member), :data:`PARAMETERS_COLUMNS` (the timing parameters the pause was priced with),
  :data:`SELF_CHECK_COLUMNS` (the range/roundrobin self-check of ``--actual``) and
  :data:`ERROR_COLUMNS` (a group's records that did not decode).
"""

from __future__ import annotations

from typing import Final

Columns = tuple[tuple[str, str], ...]

MEMBERSHIP_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("member_id", "string"),
    ("topics", "array<string>"),
    ("group_instance_id", "string"),
    ("rack_id", "string"),
)
"""The ``membership`` table: one row per member per snapshot."""

TOPICS_COLUMNS: Final[Columns] = (
    ("topic", "string"),
    ("partitions", "int"),
    ("valid_from", "timestamp"),
)
"""The ``topics`` table: a topic's partition count from ``valid_from`` on (null: from the beginning)."""

TOPIC_ID_COLUMN: Final = ("topic_id", "string")
"""An optional column of the ``topics`` table beyond :data:`TOPICS_COLUMNS`: the topic's Kafka id as Kafka prints it
(KIP-848's ``uniform`` goes through topics in their ids' ``HashSet`` order); ``assignors collect`` writes it."""

COLLECTED_TOPICS_COLUMNS: Final[Columns] = (*TOPICS_COLUMNS, TOPIC_ID_COLUMN)
"""The ``topics`` table as ``assignors collect`` writes it: :data:`TOPICS_COLUMNS` and :data:`TOPIC_ID_COLUMN`."""

WEIGHTS_COLUMNS: Final[Columns] = (
    ("topic", "string"),
    ("partition", "int"),
    ("weight", "double"),
    ("valid_from", "timestamp"),
)
"""The optional ``weights`` table: a partition's weight (null partition: every partition of the topic)."""

ACTUAL_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("generation", "int"),
    ("protocol", "string"),
    ("leader", "string"),
    ("member_id", "string"),
    ("group_instance_id", "string"),
    ("assigned", "array<string>"),
)
"""The ``actual`` table: one row per member per recorded snapshot, with what the cluster assigned it."""

HANDOVERS_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("assigned_ts", "timestamp"),
    ("member_id", "string"),
    ("partition", "string"),
    ("kind", "string"),
    ("seconds", "double"),
)
"""The optional ``handovers`` table (``assignors collect`` from a KIP-848 group's records): one row per partition
that changed members, when the member that got it recorded it, and the seconds since its member gave it up
(``consumer_move``: told to revoke it; ``consumer_orphan``: left the group)."""

OUTPUT_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("strategy", "string"),
    ("protocol", "string"),
    ("generation", "int"),
    ("rebalanced", "boolean"),
    ("members", "int"),
    ("partitions", "int"),
    ("assigned", "int"),
    ("min_load", "int"),
    ("max_load", "int"),
    ("load_spread", "int"),
    ("load_stddev", "double"),
    ("moved", "int"),
    ("orphaned", "int"),
    ("revoked", "int"),
    ("rounds", "int"),
    ("valid", "boolean"),
    ("error", "string"),
    ("assign_ms", "double"),
    ("topic_spread", "int"),
    ("topic_spread_sum", "int"),
    ("weighted_max_load", "double"),
    ("weighted_min_load", "double"),
    ("weighted_spread", "double"),
    ("weighted_max_mean_ratio", "double"),
    ("pause_partition_seconds", "double"),
    ("moved_weight", "double"),
)
"""The evaluation: one row per group, snapshot and strategy."""

DETAIL_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("strategy", "string"),
    ("member", "string"),
    ("partitions", "array<string>"),
)
"""The evaluation's detail: one row per group, snapshot, strategy and member."""

SELF_CHECK_COLUMNS: Final[Columns] = (
    ("group_id", "string"),
    ("snapshot_ts", "timestamp"),
    ("assignor", "string"),
    ("generation", "int"),
    ("matched", "boolean"),
    ("mismatches", "array<string>"),
)
"""The self-check of ``--actual``: a recorded range/roundrobin assignment against ours for the same snapshot."""

PARAMETERS_COLUMNS: Final[Columns] = (
    ("parameter", "string"),
    ("value", "double"),
    ("text", "string"),
    ("source", "string"),
    ("setting", "string"),
)
"""The evaluation's timing parameters: each pause-model parameter (``assignors.metrics.PauseModel``'s fields, in
seconds or heartbeats) and the Kafka version the server strategies replayed as (``kafka_version``: ``value`` null),
with its value as text, where it came from, and the Kafka setting it stands for."""

ERROR_COLUMNS: Final[Columns] = (("group_id", "string"), ("error", "string"))
"""A group's records that did not decode, one message a row."""

ASSIGNMENT_TYPE: Final = "array<struct<member: string, partitions: array<string>>>"
"""One assignment in a column: the evaluation's ``detail`` column, and the UDFs' argument and result."""

OPTIONAL_COLUMNS: Final = frozenset({"group_instance_id", "rack_id", "topic_id", "valid_from"})
"""Columns an input table may leave out (they are null then); every other column must be there."""

ACTUAL_STRATEGY: Final = "actual"
"""The strategy name of the cluster's own recorded assignments in the evaluation."""


def column_names(columns: Columns) -> tuple[str, ...]:
    """The names of a table's columns, in order."""
    return tuple(name for name, _ in columns)
