"""Spark wiring: the history evaluation per group, and pandas UDFs for SQL and DataFrames."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Literal, overload

from assignors import (
    AssignorError,
    Cluster,
    Subscription,
    TopicPartition,
    get_assignor,
    parse_topic_partition,
)
from assignors.metrics import (
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_REBALANCE_SECONDS,
    balance,
    movement,
    pause_partition_seconds,
)
from spark_udfs.costs import WEIGHTS_COLUMNS, PauseTiming, WeightHistory
from spark_udfs.replay import (
    DETAIL_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    STRATEGIES,
    TOPICS_COLUMNS,
    TopicHistory,
    ddl,
    replay_frame,
)

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ASSIGNMENT_TYPE",
    "SchemaError",
    "assign_snapshot",
    "assignment_balance",
    "assignment_movement",
    "evaluate_history",
    "register_udfs",
]

ASSIGNMENT_TYPE = "array<struct<member: string, partitions: array<string>>>"
SNAPSHOT_TYPE = (
    "struct<members: array<struct<member_id: string, topics: array<string>, group_instance_id: string, "
    "rack_id: string>>, topics: array<struct<topic: string, partitions: int>>>"
)
_ACCEPTED = {"int": {"int", "bigint"}, "double": {"double", "float", "int", "bigint"}}


class SchemaError(AssignorError, ValueError):
    """An input table lacks a column or has one of the wrong type."""


def check_schema(frame: DataFrame, expected: Sequence[tuple[str, str]], table: str) -> None:
    """Fail fast, listing the expected schema, when ``frame`` lacks a column or has a wrong type."""
    actual = {field.name: field.dataType.simpleString() for field in frame.schema.fields}
    problems = []
    for name, kind in expected:
        found = actual.get(name)
        if found is None:
            problems.append(f"missing column {name!r}")
        elif found != kind and found not in _ACCEPTED.get(kind, ()):
            problems.append(f"column {name!r} is {found}, expected {kind}")
    if problems:
        msg = f"{table} table: {'; '.join(problems)}. Expected schema: {ddl(expected)}"
        raise SchemaError(msg)


@overload
def evaluate_history(
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] = ...,
    detail: Literal[False] = ...,
    actual: DataFrame | None = ...,
    weights: DataFrame | None = ...,
    rebalance_seconds: float = ...,
    heartbeat_seconds: float = ...,
) -> DataFrame: ...


@overload
def evaluate_history(
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] = ...,
    detail: Literal[True],
    actual: DataFrame | None = ...,
    weights: DataFrame | None = ...,
    rebalance_seconds: float = ...,
    heartbeat_seconds: float = ...,
) -> tuple[DataFrame, DataFrame]: ...


def evaluate_history(  # noqa: PLR0913 - the evaluation's options
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] = STRATEGIES,
    detail: bool = False,
    actual: DataFrame | None = None,
    weights: DataFrame | None = None,
    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
) -> DataFrame | tuple[DataFrame, DataFrame]:
    """Replay every group's membership history under each strategy.

    Args:
        membership: ``group_id, snapshot_ts, member_id, topics, group_instance_id, rack_id``.
        topics: ``topic, partitions, valid_from`` (small: collected and shipped to the workers).
        strategies: assignor names, in output order.
        detail: also return the per-member assignments.
        actual: the recorded assignments (the ``actual`` table of ``assignors collect``): adds the
            strategy ``actual``, the cluster's own assignments measured the same way.
        weights: optional ``topic, partition, weight, valid_from`` (null partition: every
            partition of the topic; small: collected like ``topics``); without it the weighted
            columns are null.
        rebalance_seconds: how long one rebalance round stops a group, for ``pause_partition_seconds``.
        heartbeat_seconds: the consumer protocol's heartbeat interval (KIP-848), likewise.

    Returns:
        The evaluation (one row per group, snapshot and strategy; see the README for the
        columns), and with ``detail`` also ``group_id, snapshot_ts, strategy, member,
        partitions``.

    Raises:
        SchemaError: a table lacks a column or has a wrong type (nothing runs).
        UnknownAssignorError: a strategy name is not an assignor.
        InvalidWeightError: a weights row or a duration is not a finite number >= 0.
    """
    check_schema(membership, MEMBERSHIP_COLUMNS, "membership")
    check_schema(topics, TOPICS_COLUMNS, "topics")
    names = tuple(strategies)
    for name in names:
        get_assignor(name)  # fail fast on unknown names
    history = TopicHistory((r["topic"], r["partitions"], r["valid_from"]) for r in topics.collect())
    timing = PauseTiming(rebalance_seconds, heartbeat_seconds)
    pause_partition_seconds("EAGER", moved=0, survivors_owned=0, **asdict(timing))  # fail fast on bad durations
    table = None
    if weights is not None:
        check_schema(weights, WEIGHTS_COLUMNS, "weights")
        weight_columns = [name for name, _ in WEIGHTS_COLUMNS]
        table = WeightHistory(tuple(r[n] for n in weight_columns) for r in weights.select(*weight_columns).collect())
    columns = list(OUTPUT_COLUMNS)
    if detail:
        columns.append(("detail", "array<struct<member: string, partitions: array<string>>>"))

    def replay(frame: pd.DataFrame) -> pd.DataFrame:
        return replay_frame(frame, history, names, detail=detail, weights=table, timing=timing)

    # Spread the groups over the shuffle partitions: adaptive execution would otherwise
    # coalesce a small input into one partition, and the replay is CPU-bound. Read from the
    # session's SQL conf, so it works over Spark Connect (no SparkContext).
    parallelism = max(int(membership.sparkSession.conf.get("spark.sql.shuffle.partitions") or 8), 1)
    selected = membership.select(*(name for name, _ in MEMBERSHIP_COLUMNS)).repartition(parallelism, "group_id")
    output = selected.groupBy("group_id").applyInPandas(replay, schema=ddl(columns))
    if actual is not None:
        from spark_udfs.offsets import evaluate_actual

        recorded, _ = evaluate_actual(membership, topics, actual, weights=table, timing=timing)
        if detail:
            recorded = recorded.selectExpr("*", f"CAST(NULL AS {columns[-1][1]}) AS detail")
        output = output.unionByName(recorded)
    if not detail:
        return output
    output = output.cache()
    # SQL expressions rather than pyspark.sql.functions: the same code serves classic and Connect sessions.
    members = output.selectExpr("group_id", "snapshot_ts", "strategy", "explode(detail) AS d").selectExpr(
        "group_id", "snapshot_ts", "strategy", "d.member AS member", "d.partitions AS partitions"
    )
    return output.drop("detail"), members.select(*(name for name, _ in DETAIL_COLUMNS))


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
        result = get_assignor(strategy).assign(Cluster(counts), subscriptions)
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
