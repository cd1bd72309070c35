"""The history evaluation on Spark: every group's membership history replayed under each strategy.

:func:`evaluate_history` checks the tables' schemas, ships the small tables (topics, weights) to
the workers and runs :func:`spark_udfs.replay.frames.replay_frame` once per group
(``groupBy("group_id").applyInPandas``), on a local session, a cluster or Spark Connect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from assignors import ConfigurationError
from assignors.metrics import (
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_REBALANCE_SECONDS,
    InvalidWeightError,
    pause_partition_seconds,
)
from assignors.tables import (
    ACTUAL_COLUMNS,
    ASSIGNMENT_TYPE,
    DETAIL_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    TOPICS_COLUMNS,
    WEIGHTS_COLUMNS,
    column_names,
)
from spark_udfs.jobs.actual import evaluate_actual
from spark_udfs.replay.frames import replay_frame
from spark_udfs.replay.group_replay import TopicHistory, check_weighted, default_strategies, strategy_assignor
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.weights import WeightHistory
from spark_udfs.tables.csv_checks import bad_values
from spark_udfs.tables.schemas import check_schema, ddl, with_optional_columns

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = ["Evaluation", "evaluate", "evaluate_history"]


def _checked_inputs(
    membership: DataFrame, topics: DataFrame
) -> tuple[list[tuple[Any, Any, Any]], dict[str, str], dict[str | None, str]]:
    """The topics' rows, the topics with a bad row (and its message) and the groups with a bad membership row.

    The topics table is small: collected to the driver once, its bad values found in what was collected.
    """
    collected = topics.collect()
    invalid_topics: dict[str, str] = {}
    for bad in bad_values(topics, TOPICS_COLUMNS, "topics", "topic", collected=collected):
        if bad.key is not None:
            invalid_topics.setdefault(bad.key, bad.message)
    rows = [(r["topic"], r["partitions"], r["valid_from"]) for r in collected]
    errors: dict[str | None, str] = {}
    for bad in bad_values(membership, MEMBERSHIP_COLUMNS, "membership", "group_id"):
        errors.setdefault(bad.key, bad.message)
    return rows, invalid_topics, errors


def _checked_strategies(strategies: Sequence[str] | None, *, weighted: bool) -> tuple[str, ...]:
    """The strategy names (None: the default, :func:`default_strategies`), each an assignor and listed once (twice
    would double its rows and its ranking), ``weighted-sticky`` only with weights."""
    names = default_strategies(weighted=weighted) if strategies is None else tuple(strategies)
    check_weighted(names, weighted=weighted)
    for name in names:
        strategy_assignor(name)  # fail fast on unknown names
        if names.count(name) > 1:
            msg = f"strategy {name!r} is listed twice; list each strategy once"
            raise ConfigurationError(msg)
    return names


@overload
def evaluate_history(
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] | None = ...,
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
    strategies: Sequence[str] | None = ...,
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
    strategies: Sequence[str] | None = None,
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
            ``group_instance_id``, ``rack_id`` and ``valid_from`` may be left out: null.
        strategies: strategy names, in output order; by default (None) ``ALL_STRATEGIES``, as ``assignors
            evaluate``: the classic four, and KIP-848's ``uniform`` and ``consumer-range`` (protocol ``CONSUMER``),
            then with ``weights`` also ``weighted-sticky`` (COOPERATIVE), which needs them.
        detail: also return the per-member assignments.
        actual: the recorded assignments (the ``actual`` table of ``assignors collect``): adds the
            strategy ``actual``, the cluster's own assignments measured the same way.
        weights: optional ``topic, partition, weight, valid_from`` (null partition: every
            partition of the topic; small: collected like ``topics``); without it the weighted
            columns are null.
        rebalance_seconds: how long one rebalance round stops a group, for ``pause_partition_seconds``.
        heartbeat_seconds: the consumer protocol's heartbeat interval (KIP-848), likewise.

    Returns:
        The evaluation (one row per group, snapshot and strategy; docs/evaluation.md
        defines the columns), and with ``detail`` also ``group_id, snapshot_ts, strategy, member,
        partitions``.

    Raises:
        SchemaError: a table lacks a column or has a wrong type (nothing runs).
        UnknownAssignorError: a strategy name is not an assignor.
        ConfigurationError: a strategy is listed twice, or ``weighted-sticky`` without ``weights``.
        InvalidWeightError: a weights row or a duration is not a finite number >= 0.

    A membership or topics value that did not parse (a CSV typo, see :mod:`spark_udfs.tables.csv_checks`)
    is its group's ``error`` (a topics row: the error of each group subscribing to the topic).
    """
    timing = PauseTiming(rebalance_seconds, heartbeat_seconds)
    result = evaluate(membership, topics, strategies, timing, actual=actual, weights=weights, detail=detail)
    return result.output if result.detail is None else (result.output, result.detail)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation, every part computed once: what :func:`evaluate_history` returns, the self-check of
    ``actual`` and the membership as evaluated (every column of its table), for the report."""

    output: DataFrame
    detail: DataFrame | None
    self_check: DataFrame | None
    membership: DataFrame


def evaluate(  # noqa: PLR0913 - the evaluation's options
    membership: DataFrame,
    topics: DataFrame,
    strategies: Sequence[str] | None,
    timing: PauseTiming,
    *,
    actual: DataFrame | None,
    weights: DataFrame | None,
    detail: bool = False,
) -> Evaluation:
    """:func:`evaluate_history`'s work, with the self-check of ``actual`` (None without it) kept beside.

    Each input's optional columns are added here, once; the topics table is collected once; the actual
    strategy is measured once (its rows join the output, its self-check is returned).
    """
    membership = with_optional_columns(membership, MEMBERSHIP_COLUMNS)
    topics = with_optional_columns(topics, TOPICS_COLUMNS)
    check_schema(membership, MEMBERSHIP_COLUMNS, "membership")
    check_schema(topics, TOPICS_COLUMNS, "topics")
    if actual is not None:
        actual = with_optional_columns(actual, ACTUAL_COLUMNS)
        check_schema(actual, ACTUAL_COLUMNS, "actual")
    names = _checked_strategies(strategies, weighted=weights is not None)
    pause_partition_seconds("EAGER", moved=0, survivors_owned=0, **asdict(timing))  # fail fast on bad durations
    table = None
    if weights is not None:
        weights = with_optional_columns(weights, WEIGHTS_COLUMNS)
        check_schema(weights, WEIGHTS_COLUMNS, "weights")
        bad_weights = bad_values(weights, WEIGHTS_COLUMNS, "weights", "topic")
        if bad_weights:
            raise InvalidWeightError(bad_weights[0].message)
        weight_columns = column_names(WEIGHTS_COLUMNS)
        table = WeightHistory(tuple(r[n] for n in weight_columns) for r in weights.select(*weight_columns).collect())
    topic_rows, invalid_topics, errors = _checked_inputs(membership, topics)
    history = TopicHistory(topic_rows, invalid=invalid_topics)
    columns = list(OUTPUT_COLUMNS)
    if detail:
        columns.append(("detail", ASSIGNMENT_TYPE))

    def replay(frame: pd.DataFrame) -> pd.DataFrame:
        return replay_frame(frame, history, names, detail=detail, weights=table, timing=timing, errors=errors)

    # Spread the groups over the shuffle partitions: adaptive execution would otherwise
    # coalesce a small input into one partition, and the replay is CPU-bound. Read from the
    # session's SQL conf, so it works over Spark Connect (no SparkContext).
    parallelism = max(int(membership.sparkSession.conf.get("spark.sql.shuffle.partitions") or 8), 1)
    selected = membership.select(*column_names(MEMBERSHIP_COLUMNS)).repartition(parallelism, "group_id")
    output = selected.groupBy("group_id").applyInPandas(replay, schema=ddl(columns))
    checks = None
    if actual is not None:
        # the recorded assignments are measured on the topics as recorded: a bad topics row is the replay's error
        recorded, checks = evaluate_actual(membership, actual, TopicHistory(topic_rows), weights=table, timing=timing)
        if detail:
            recorded = recorded.selectExpr("*", f"CAST(NULL AS {columns[-1][1]}) AS detail")
        output = output.unionByName(recorded)
    if not detail:
        return Evaluation(output, None, checks, membership)
    output = output.cache()
    # SQL expressions rather than pyspark.sql.functions: the same code serves classic and Connect sessions.
    members = output.selectExpr("group_id", "snapshot_ts", "strategy", "explode(detail) AS d").selectExpr(
        "group_id", "snapshot_ts", "strategy", "d.member AS member", "d.partitions AS partitions"
    )
    return Evaluation(output.drop("detail"), members.select(*column_names(DETAIL_COLUMNS)), checks, membership)
