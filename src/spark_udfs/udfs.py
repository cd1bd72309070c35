"""Pandas UDFs for Spark SQL and DataFrames: assign a snapshot, measure an assignment's balance and movement.

The history evaluation, :func:`evaluate_history`, lives in :mod:`spark_udfs.jobs.history`; it and
:class:`SchemaError` are also importable from here, as they always were.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assignors import (
    AssignorError,
    Cluster,
    Subscription,
    TopicPartition,
    parse_topic_partition,
)
from assignors.metrics import balance, movement
from assignors.tables import ASSIGNMENT_TYPE
from spark_udfs.jobs.history import evaluate_history
from spark_udfs.replay.group_replay import strategy_assignor
from spark_udfs.tables.schemas import SchemaError, check_schema

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import SparkSession

__all__ = [
    "ASSIGNMENT_TYPE",
    "SchemaError",
    "assign_snapshot",
    "assignment_balance",
    "assignment_movement",
    "check_schema",
    "evaluate_history",
    "register_udfs",
]

SNAPSHOT_TYPE = (
    "struct<members: array<struct<member_id: string, topics: array<string>, group_instance_id: string, "
    "rack_id: string>>, topics: array<struct<topic: string, partitions: int>>>"
)


# --- pandas UDFs -----------------------------------------------------------------------


def _assign_one(strategy: str, snapshot: Any) -> dict[str, Any]:
    try:
        counts = {t["topic"]: int(t["partitions"]) for t in snapshot["topics"]}
        subscriptions = {
            m["member_id"]: Subscription(
                list(m["topics"] if m["topics"] is not None else ()),
                group_instance_id=m["group_instance_id"],
                rack_id=m["rack_id"] or None,
            )
            for m in snapshot["members"]
        }
        result = strategy_assignor(strategy).assign(Cluster(counts), subscriptions)
    except (AssignorError, KeyError, TypeError, ValueError) as error:
        return {"assignment": None, "error": f"{type(error).__name__}: {error}"}
    assignment = [{"member": m, "partitions": [str(tp) for tp in a.partitions]} for m, a in result.items()]
    return {"assignment": assignment, "error": None}


def assign_snapshot_pandas(strategy: pd.Series, snapshot: pd.DataFrame) -> pd.DataFrame:
    """The body of :func:`assign_snapshot` (usable without Spark)."""
    import pandas as pd

    rows = [
        _assign_one(name, {"members": members, "topics": topics})
        for name, members, topics in zip(strategy, snapshot["members"], snapshot["topics"], strict=True)
    ]
    return pd.DataFrame(rows, columns=["assignment", "error"])


def _as_assignment(value: Any) -> dict[str, list[TopicPartition]]:
    if value is None:
        return {}
    return {entry["member"]: [parse_topic_partition(p) for p in entry["partitions"]] for entry in value}


def assignment_balance_pandas(assignment: pd.Series) -> pd.DataFrame:
    """The body of :func:`assignment_balance`."""
    import pandas as pd

    rows = []
    for value in assignment:
        b = balance(_as_assignment(value))
        rows.append([b.members, b.partitions, b.min_load, b.max_load, b.spread, b.stddev])
    return pd.DataFrame(rows, columns=["members", "partitions", "min_load", "max_load", "load_spread", "load_stddev"])


def assignment_movement_pandas(before: pd.Series, after: pd.Series) -> pd.DataFrame:
    """The body of :func:`assignment_movement`: members present are those of ``after``."""
    import pandas as pd

    rows = []
    for old, new in zip(before, after, strict=True):
        m = movement(_as_assignment(old), _as_assignment(new))
        rows.append([m.moved, m.orphaned, m.retained, m.released])
    return pd.DataFrame(rows, columns=["moved", "orphaned", "retained", "released"])


_BALANCE_TYPE = (
    "struct<members: int, partitions: int, min_load: int, max_load: int, load_spread: int, load_stddev: double>"
)
_MOVEMENT_TYPE = "struct<moved: int, orphaned: int, retained: int, released: int>"
_ASSIGN_TYPE = f"struct<assignment: {ASSIGNMENT_TYPE}, error: string>"


def _pandas_udf(body: Any, return_type: str, arguments: Sequence[str], frames: Sequence[str] = ()) -> Any:
    """``body`` as a pandas UDF; its hints are set here, as pyspark reads them at run time."""
    import pandas as pd
    from pyspark.sql.pandas.functions import pandas_udf

    def udf(*columns: Any) -> Any:
        return body(*columns)

    udf.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in arguments]
    )
    hints: dict[str, Any] = {name: pd.DataFrame if name in frames else pd.Series for name in arguments}
    udf.__annotations__ = {**hints, "return": pd.DataFrame}
    udf.__name__ = body.__name__.removesuffix("_pandas")
    return pandas_udf(udf, returnType=return_type)  # type: ignore[call-overload]


def assign_snapshot() -> Any:
    """pandas UDF ``(strategy string, snapshot SNAPSHOT_TYPE) -> struct<assignment, error>``."""
    return _pandas_udf(assign_snapshot_pandas, _ASSIGN_TYPE, ["strategy", "snapshot"], frames=["snapshot"])


def assignment_balance() -> Any:
    """pandas UDF ``(assignment ASSIGNMENT_TYPE) -> struct<members, partitions, min_load, ...>``."""
    return _pandas_udf(assignment_balance_pandas, _BALANCE_TYPE, ["assignment"])


def assignment_movement() -> Any:
    """pandas UDF ``(before, after ASSIGNMENT_TYPE) -> struct<moved, orphaned, retained, released>``."""
    return _pandas_udf(assignment_movement_pandas, _MOVEMENT_TYPE, ["before", "after"])


def register_udfs(spark: SparkSession) -> None:
    """Register ``assign_snapshot``, ``assignment_balance`` and ``assignment_movement`` for Spark SQL."""
    spark.udf.register("assign_snapshot", assign_snapshot())
    spark.udf.register("assignment_balance", assignment_balance())
    spark.udf.register("assignment_movement", assignment_movement())
