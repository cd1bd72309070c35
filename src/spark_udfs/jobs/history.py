"""The history evaluation on Spark: every group's membership history replayed under each strategy.

:func:`evaluate_history` checks the tables' schemas, ships the small tables (topics, weights) to
the workers and runs :func:`spark_udfs.replay.frames.replay_table` once per group
(``groupBy("group_id").applyInArrow``), on a local session, a cluster or Spark Connect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from assignors import ConfigurationError
from assignors.consumer_group import KAFKA_VERSION
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.kafka_java import kafka_classpath
from assignors.metrics import InvalidWeightError, PauseModel
from assignors.tables import (
    ACTUAL_COLUMNS,
    ASSIGNMENT_TYPE,
    COLLECTED_TOPICS_COLUMNS,
    DETAIL_COLUMNS,
    HANDOVERS_COLUMNS,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    TOPICS_COLUMNS,
    WEIGHTS_COLUMNS,
    column_names,
)
from spark_udfs.jobs.actual import evaluate_actual, observe_handovers, observe_timing
from spark_udfs.replay.actual import derived_model
from spark_udfs.replay.frames import replay_table
from spark_udfs.replay.group_replay import (
    TopicHistory,
    check_weighted,
    default_strategies,
    strategy_assignor,
)
from spark_udfs.replay.timing import (
    PINNED_KAFKA,
    PauseTiming,
    TimingParameter,
    parameter_rows,
    pause_model,
    timing_model,
)
from spark_udfs.replay.weights import WeightHistory
from spark_udfs.tables.csv_checks import bad_values
from spark_udfs.tables.schemas import check_schema, ddl, with_optional_columns

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["Evaluation", "evaluate", "evaluate_history"]


def _checked_inputs(
    membership: DataFrame, topics: DataFrame
) -> tuple[list[tuple[Any, Any, Any, Any]], dict[str, str], dict[str | None, str]]:
    """The topics' rows, the topics with a bad row (and its message) and the groups with a bad membership row.

    The topics table is small: collected to the driver once, its bad values found in what was collected.
    """
    collected = topics.collect()
    invalid_topics: dict[str, str] = {}
    for bad in bad_values(topics, TOPICS_COLUMNS, "topics", "topic", collected=collected):
        if bad.key is not None:
            invalid_topics.setdefault(bad.key, bad.message)
    rows = [(r["topic"], r["partitions"], r["valid_from"], r["topic_id"]) for r in collected]
    errors: dict[str | None, str] = {}
    for bad in bad_values(membership, MEMBERSHIP_COLUMNS, "membership", "group_id"):
        errors.setdefault(bad.key, bad.message)
    return rows, invalid_topics, errors


def _checked_strategies(
    strategies: Sequence[str] | None,
    kafka_version: str | None = None,
    *,
    weighted: bool,
    kafka_jars: Sequence[str] | None = None,
) -> tuple[str, ...]:
    """The strategy names (None: the default, :func:`default_strategies`), each an assignor and listed once (twice
    would double its rows and its ranking), ``weighted-sticky`` only with weights.

    The server strategies are built as the broker of ``kafka_version`` runs them: a version they are not
    modelled for fails here, before Spark runs; so does a Java strategy without ``kafka_jars`` (with them, the
    default adds :data:`~spark_udfs.replay.group_replay.JAVA_STRATEGIES`).
    """
    java = bool(kafka_jars)
    names = default_strategies(weighted=weighted, java=java) if strategies is None else tuple(strategies)
    check_weighted(names, weighted=weighted)
    for name in names:
        # fail fast on unknown names, versions and jars (a Java assignor starts no JVM until it assigns)
        strategy_assignor(name, kafka_version=kafka_version, kafka_jars=kafka_jars)
        if names.count(name) > 1:
            msg = f"strategy {name!r} is listed twice; list each strategy once"
            raise ConfigurationError(msg)
    return names


def _parameters(
    model: PauseModel, names: Sequence[str], kafka_version: str | None, kafka_source: str | None
) -> tuple[TimingParameter, ...]:
    """The parameters table's rows: the model's, then the Kafka version the server strategies replay as."""
    version = KAFKA_VERSION if kafka_version is None else kafka_version
    source = kafka_source or (PINNED_KAFKA if kafka_version is None else "given")
    if not any(name in SERVER_STRATEGIES for name in names):
        source += " (no server strategy was replayed)"
    return tuple(parameter_rows(model, version, source))


@overload
def evaluate_history(
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] | None = ...,
    detail: Literal[False] = ...,
    actual: DataFrame | None = ...,
    handovers: DataFrame | None = ...,
    weights: DataFrame | None = ...,
    rebalance_seconds: float | None = ...,
    heartbeat_seconds: float | None = ...,
    pause_model: PauseModel | None = ...,
    kafka_version: str | None = ...,
    kafka_jars: str | Sequence[str] | None = ...,
) -> DataFrame: ...


@overload
def evaluate_history(
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] | None = ...,
    detail: Literal[True],
    actual: DataFrame | None = ...,
    handovers: DataFrame | None = ...,
    weights: DataFrame | None = ...,
    rebalance_seconds: float | None = ...,
    heartbeat_seconds: float | None = ...,
    pause_model: PauseModel | None = ...,
    kafka_version: str | None = ...,
    kafka_jars: str | Sequence[str] | None = ...,
) -> tuple[DataFrame, DataFrame]: ...


def evaluate_history(  # noqa: PLR0913 - the evaluation's options
    membership: DataFrame,
    topics: DataFrame,
    *,
    strategies: Sequence[str] | None = None,
    detail: bool = False,
    actual: DataFrame | None = None,
    handovers: DataFrame | None = None,
    weights: DataFrame | None = None,
    rebalance_seconds: float | None = None,
    heartbeat_seconds: float | None = None,
    pause_model: PauseModel | None = None,
    kafka_version: str | None = None,
    kafka_jars: str | Sequence[str] | None = None,
) -> DataFrame | tuple[DataFrame, DataFrame]:
    """Replay every group's membership history under each strategy.

    Args:
        membership: ``group_id, snapshot_ts, member_id, topics, group_instance_id, rack_id``.
        topics: ``topic, partitions, valid_from, topic_id`` (small: collected and shipped to the workers).
            ``group_instance_id``, ``rack_id`` and ``valid_from`` may be left out: null.
        strategies: strategy names, in output order; by default (None) ``ALL_STRATEGIES``, as ``assignors
            evaluate``: the classic four, and KIP-848's ``uniform`` and ``consumer-range`` (protocol ``CONSUMER``),
            then with ``weights`` also ``weighted-sticky`` (COOPERATIVE), which needs them.
        detail: also return the per-member assignments.
        actual: the recorded assignments (the ``actual`` table of ``assignors collect``): adds the
            strategy ``actual``, the cluster's own assignments measured the same way.
        handovers: the KIP-848 hand-overs ``assignors collect`` recorded beside ``actual`` (its ``handovers``
            table; only ``actual``'s groups are read): ``consumer_move_heartbeats`` and
            ``consumer_orphan_heartbeats`` are derived from them where they are enough. It needs ``actual``.
        weights: optional ``topic, partition, weight, valid_from`` (null partition: every
            partition of the topic; small: collected like ``topics``); without it the weighted
            columns are null.
        rebalance_seconds: the classic consumers' heartbeat interval in seconds (``heartbeat.interval.ms``), which
            paces a classic rebalance in the pause model (it priced one rebalance round before the model was
            measured); sets ``pause_model``'s ``heartbeat_seconds``.
        heartbeat_seconds: KIP-848's heartbeat interval in seconds (the broker's
            ``group.consumer.heartbeat.interval.ms``); sets ``pause_model``'s ``consumer_heartbeat_seconds``.
        pause_model: what prices ``pause_partition_seconds`` (:func:`assignors.metrics.rebalance_pause`; default
            :data:`assignors.metrics.DEFAULT_PAUSE_MODEL`, measured by ``make calibrate``). With ``actual``, its
            measured factors the cluster's records show often enough are replaced by what they show.
        kafka_version: the broker's Kafka version ``uniform`` and ``consumer-range`` replay as (default
            :data:`assignors.consumer_group.KAFKA_VERSION`, the project's pinned Kafka).
        kafka_jars: Kafka's client jars (a Kafka installation, its ``libs``, a classpath or its listing:
            :func:`assignors.kafka_java.kafka_classpath`), readable where the workers run: adds the strategies
            ``java-sticky`` and ``java-cooperative-sticky``, Kafka's own Java classes (what Java consumers run),
            each replayed beside this project's ``sticky`` and ``cooperative-sticky``.

    Returns:
        The evaluation (one row per group, snapshot and strategy; docs/evaluation.md
        defines the columns), and with ``detail`` also ``group_id, snapshot_ts, strategy, member,
        partitions``.

    Raises:
        SchemaError: a table lacks a column or has a wrong type (nothing runs).
        UnknownAssignorError: a strategy name is not an assignor.
        ConfigurationError: a strategy is listed twice, ``weighted-sticky`` without ``weights``, ``handovers``
            without ``actual``, or ``kafka_version`` is not a version the server strategies are modelled for.
        InvalidWeightError: a weights row or a duration is not a finite number >= 0.

    A membership or topics value that did not parse (a CSV typo, see :mod:`spark_udfs.tables.csv_checks`)
    is its group's ``error`` (a topics row: the error of each group subscribing to the topic).
    """
    options = {"rebalance_seconds": rebalance_seconds, "heartbeat_seconds": heartbeat_seconds}
    timing = timing_model(pause_model, options)
    result = evaluate(
        membership,
        topics,
        strategies,
        timing,
        actual=actual,
        handovers=handovers,
        weights=weights,
        detail=detail,
        kafka_version=kafka_version,
        kafka_source=None if kafka_version is None else "your option kafka_version",
        kafka_jars=kafka_jars,
    )
    return result.output if result.detail is None else (result.output, result.detail)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation, every part computed once: what :func:`evaluate_history` returns, the self-check of
    ``actual`` and the membership as evaluated (every column of its table), for the report; the timing
    parameters it priced the pause with (and the Kafka version), each with its source, and what ``actual``'s
    records allowed to derive (sentences)."""

    output: DataFrame
    detail: DataFrame | None
    self_check: DataFrame | None
    membership: DataFrame
    parameters: tuple[TimingParameter, ...] = ()
    timing_notes: tuple[str, ...] = field(default=())


def _derived(
    model: PauseModel, membership: DataFrame, actual: DataFrame | None, handovers: DataFrame | None
) -> tuple[PauseModel, list[str]]:
    """``model`` with the factors the cluster's records allow (the actual table's, and the handovers table's when
    given), and the notes saying what was derived or kept; without ``actual``, ``model`` as it is.

    Raises:
        ConfigurationError: ``handovers`` without ``actual``.
    """
    if actual is None:
        if handovers is not None:
            msg = "handovers needs actual: the hand-overs are the recorded groups' own"
            raise ConfigurationError(msg)
        return model, []
    observed = observe_timing(membership, actual)
    if handovers is not None:
        handovers = with_optional_columns(handovers, HANDOVERS_COLUMNS)
        check_schema(handovers, HANDOVERS_COLUMNS, "handovers")
        recorded = actual.select("group_id").distinct()  # the groups evaluated, not every group collected
        observed.update(observe_handovers(handovers.join(recorded, "group_id", "left_semi")))
    return derived_model(model, observed, handovers=handovers is not None)


def evaluate(  # noqa: PLR0913 - the evaluation's options
    membership: DataFrame,
    topics: DataFrame,
    strategies: Sequence[str] | None,
    timing: PauseModel | PauseTiming,
    *,
    actual: DataFrame | None,
    weights: DataFrame | None,
    handovers: DataFrame | None = None,
    detail: bool = False,
    kafka_version: str | None = None,
    kafka_source: str | None = None,
    kafka_jars: str | Sequence[str] | None = None,
) -> Evaluation:
    """:func:`evaluate_history`'s work, with the self-check of ``actual`` (None without it) kept beside.

    Each input's optional columns are added here, once; the topics table is collected once; the actual
    strategy is measured once (its rows join the output, its self-check is returned). With ``actual`` the
    model's measured factors are first derived from the cluster's records where they allow
    (:func:`spark_udfs.jobs.actual.observe_timing`, :func:`spark_udfs.replay.actual.derived_model`).
    ``kafka_source`` says where ``kafka_version`` came from (default: the project's pinned Kafka when it is None,
    else "given").
    """
    membership = with_optional_columns(membership, MEMBERSHIP_COLUMNS)
    topics = with_optional_columns(topics, COLLECTED_TOPICS_COLUMNS)  # topic_id too (optional)
    check_schema(membership, MEMBERSHIP_COLUMNS, "membership")
    check_schema(topics, COLLECTED_TOPICS_COLUMNS, "topics")
    if actual is not None:
        actual = with_optional_columns(actual, ACTUAL_COLUMNS)
        check_schema(actual, ACTUAL_COLUMNS, "actual")
    jars = kafka_classpath(kafka_jars) if kafka_jars else None
    names = _checked_strategies(strategies, kafka_version, weighted=weights is not None, kafka_jars=jars)
    model = pause_model(timing)  # fails fast on bad durations
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

    model, notes = _derived(model, membership, actual, handovers)
    parameters = _parameters(model, names, kafka_version, kafka_source)

    session = membership.sparkSession
    time_zone = str(session.conf.get("spark.sql.session.timeZone") or "UTC")

    def replay(group: pa.Table) -> pa.Table:
        return replay_table(
            group,
            history,
            names,
            detail=detail,
            weights=table,
            timing=model,
            errors=errors,
            kafka_version=kafka_version,
            kafka_jars=jars,
            time_zone=time_zone,
        )

    # Spread the groups over the shuffle partitions: adaptive execution would otherwise
    # coalesce a small input into one partition, and the replay is CPU-bound. Read from the
    # session's SQL conf, so it works over Spark Connect (no SparkContext).
    parallelism = max(int(session.conf.get("spark.sql.shuffle.partitions") or 8), 1)
    selected = membership.select(*column_names(MEMBERSHIP_COLUMNS)).repartition(parallelism, "group_id")
    # Arrow in and out (replay_table): pandas frames and Spark's conversions of them cost a worker about a fifth of
    # its time on the demo's history (replay_frame is the same replay on pandas frames)
    output = selected.groupBy("group_id").applyInArrow(replay, schema=ddl(columns))
    checks = None
    if actual is not None:
        # the recorded assignments are measured on the topics as recorded: a bad topics row is the replay's error
        recorded, checks = evaluate_actual(membership, actual, TopicHistory(topic_rows), weights=table, timing=model)
        if detail:
            recorded = recorded.selectExpr("*", f"CAST(NULL AS {columns[-1][1]}) AS detail")
        output = output.unionByName(recorded)
    if not detail:
        return Evaluation(output, None, checks, membership, parameters, tuple(notes))
    output = output.cache()
    # SQL expressions rather than pyspark.sql.functions: the same code serves classic and Connect sessions.
    members = output.selectExpr("group_id", "snapshot_ts", "strategy", "explode(detail) AS d").selectExpr(
        "group_id", "snapshot_ts", "strategy", "d.member AS member", "d.partitions AS partitions"
    )
    details = members.select(*column_names(DETAIL_COLUMNS))
    return Evaluation(output.drop("detail"), details, checks, membership, parameters, tuple(notes))
