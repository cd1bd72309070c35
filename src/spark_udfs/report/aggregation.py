"""The evaluation's summary, aggregated on Spark.

:func:`summarize` reduces the evaluation output (any size) to a :class:`Summary` small
enough for one HTML page: the ranked strategies, distributions as quantiles, a timeline
bucketed to at most ``MAX_POINTS`` points, a table of the groups and a drill-down into
the groups with the most pause cost. :func:`spark_udfs.report.html.render_html` draws it with
plotly; :func:`spark_udfs.report.text.render_text` prints the ranking.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Self, TypeVar

from assignors.tables import ACTUAL_STRATEGY
from spark_udfs.report.ranking import DEFAULT_RANK_BY, StrategySummary, parse_rank_by, rank
from spark_udfs.report.summary import (
    DISTRIBUTIONS,
    MAX_POINTS,
    PERCENTS,
    DrillDown,
    GroupBalance,
    GroupFigures,
    Quantiles,
    SelfCheckGroup,
    Summary,
    TimePoint,
    member_events,
    recommended,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pyspark.sql import Column, DataFrame, Row, SparkSession

_T = TypeVar("_T")
_NULL_AS = {"imbalance": 1.0, "imbalance_p95": 1.0, "worst_imbalance": 1.0}
"""A null aggregate means "nothing measured": 0 for counts and sums, 1.0 (even) for a load ratio."""
_CASTS: dict[str, Any] = {"int": int, "float": float, "bool": bool, "str": str}
_PER_REBALANCE = "per rebalance"
"""The scope of ``DISTRIBUTIONS`` over the later rebalances only; every other scope is over all error-free rows."""

__all__ = ["summarize"]


def _imbalance() -> Column:
    """Per row: the weighted max/mean ratio when present, else max_load / (assigned / members)."""
    from pyspark.sql import functions as sf

    plain = sf.when(sf.col("assigned") > 0, sf.col("max_load") * sf.col("members") / sf.col("assigned")).otherwise(
        sf.lit(1.0)
    )
    return sf.coalesce(sf.col("weighted_max_mean_ratio"), plain.cast("double"))


def summarize(  # noqa: PLR0913 - the report's options
    evaluation: DataFrame,
    membership: DataFrame | None = None,
    *,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    top: int = 5,
    group_limit: int = 2000,
    notes: Sequence[str] = (),
    self_check: DataFrame | None = None,
    weights_given: bool | None = None,
    balance_limit: int = 200,
) -> Summary:
    """Aggregate the evaluation output on Spark and collect the small result.

    Args:
        evaluation: the output of ``evaluate_history``.
        membership: its input, for the drill-down's member timelines (omitted: none).
        rank_by: the figures of the score, in order (see :mod:`spark_udfs.report.ranking`).
        top: how many groups the drill-down shows: the most pause cost under the recommended strategy
            (the cluster's own ``actual`` when the evaluation has it), never a sum over alternatives.
        group_limit: rows of the groups table (group x strategy, most pause cost first).
        notes: sentences shown under the report's title.
        self_check: the range/roundrobin self-check rows (``evaluate_actual``), for the match
            rate per group and the mismatches.
        weights_given: whether a weights table was given (the report says so only then).
        balance_limit: rows of the per-group balance table (the groups where the strategies differ most).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    keys = parse_rank_by(rank_by)
    # Every figure below is one more Spark job over the same rows: read once and kept in memory. The rows as read,
    # not a result of a shuffle: each job then sees them in the same partitions and order as it would read them,
    # so its sums and quantiles are the same to the last bit.
    cached = not evaluation.is_cached  # a frame the caller cached stays cached
    evaluation = evaluation.cache() if cached else evaluation
    ok = evaluation.where(sf.col("error").isNull()).withColumn("imbalance", _imbalance())
    first = sf.col("snapshot_ts") == sf.min("snapshot_ts").over(Window.partitionBy("group_id", "strategy"))
    ok = ok.withColumn("later_rebalance", sf.col("rebalanced") & ~first)
    try:
        return _summary(
            evaluation,
            ok,
            membership=membership,
            keys=keys,
            top=top,
            group_limit=group_limit,
            balance_limit=balance_limit,
            notes=notes,
            self_check=self_check,
            weights_given=weights_given,
        )
    finally:
        if cached:
            evaluation.unpersist()


def _summary(  # noqa: PLR0913 - summarize's options
    evaluation: DataFrame,
    ok: DataFrame,
    *,
    membership: DataFrame | None,
    keys: tuple[str, ...],
    top: int,
    group_limit: int,
    balance_limit: int,
    notes: Sequence[str],
    self_check: DataFrame | None,
    weights_given: bool | None,
) -> Summary:
    """:func:`summarize`'s figures from the evaluation and its error-free rows ``ok`` (with ``later_rebalance``)."""

    # per group and strategy, aggregated once for the groups table, the balance and the drill-down's leaders
    per_group = _per_group(ok).cache()
    try:
        with _Concurrently(evaluation.sparkSession) as run:
            # the collects that need nothing else, at once: each is its own Spark job over the same cached rows, so
            # each sees them in the same partitions and order as alone (the same figures to the bit), while the
            # driver's work between jobs and the jobs' one-task stages overlap
            first = run(lambda: _strategies(ok))
            counted = run(lambda: _groups(evaluation))
            listed = run(lambda: _group_table(per_group, group_limit))
            balanced = run(lambda: _balance_by_group(per_group, balance_limit))
            checked = run(lambda: _self_check(self_check) if self_check is not None else [])
            found, bounds, per_snapshot = first.result()
            strategies = rank(found, keys)
            ranked = Summary(0, 0, [], strategies)
            has_actual = any(s.strategy == ACTUAL_STRATEGY for s in strategies)
            reference = ACTUAL_STRATEGY if has_actual else recommended(ranked)
            timeline = run(lambda: _timeline(ok, bounds))
            distributions = run(lambda: _distributions(ok, per_snapshot))
            drilldown = run(lambda: _drilldown(ok, per_group, membership, top, reference))
            groups, snapshots, errors = counted.result()
            table, total = listed.result()
            balance, balance_count, worst = balanced.result()
            return Summary(
                groups=groups,
                snapshots=snapshots,
                error_groups=errors,
                strategies=strategies,
                rank_by=keys,
                timeline=timeline.result(),
                distributions=distributions.result(),
                group_table=table,
                group_count=total,
                drilldown=drilldown.result(),
                notes=list(notes),
                self_check=checked.result(),
                balance_by_group=balance,
                balance_group_count=balance_count,
                worst_balanced=worst,
                weights_given=weights_given,
            )
    finally:
        per_group.unpersist()


_R = TypeVar("_R")


class _Concurrently:
    """Runs calls on a few threads, each inheriting the caller's Spark job group and properties (PySpark's
    ``inheritable_thread_target``, for a local session and Spark Connect alike); leaving waits for all of them."""

    def __init__(self, session: SparkSession, workers: int = 4) -> None:
        from pyspark.util import inheritable_thread_target

        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="summarize")
        # given the session, it captures the job group, the local properties and the tags now, local or Connect
        self._wrap: Callable[[Callable[[], Any]], Callable[[], Any]] = inheritable_thread_target(session)

    def __call__(self, call: Callable[[], _R]) -> Future[_R]:
        return self._pool.submit(self._wrap(call))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)


def _groups(evaluation: DataFrame) -> tuple[int, int, list[tuple[str | None, str]]]:
    """The groups, the (group, snapshot) pairs and each group's first error (by group), in one Spark job.

    One row per group is collected: the counts are those of ``countDistinct("group_id")`` and
    ``countDistinct("group_id", "snapshot_ts")`` (a null group or time counts for neither), the errors ordered by
    group as Spark orders strings (by their UTF-8 bytes, which is Python's order of code points).
    """
    from pyspark.sql import functions as sf

    rows = (
        evaluation.groupBy("group_id")
        .agg(sf.countDistinct("snapshot_ts").alias("snapshots"), sf.min("error").alias("error"))
        .collect()
    )
    named = [r for r in rows if r["group_id"] is not None]
    errors = sorted(
        ((r["group_id"], r["error"]) for r in rows if r["error"] is not None),
        key=lambda e: (e[0] is not None, e[0] or ""),  # nulls first, as Spark's ascending order
    )
    return len(named), sum(int(r["snapshots"]) for r in named), errors


def _record(cls: type[_T], row: Row) -> _T:
    """A summary dataclass from an aggregated row whose columns are named as its fields (nulls as nothing measured)."""
    found = row.asDict()
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        if item.name not in found:
            continue
        value, kind = found[item.name], str(item.type)
        if value is None and kind in _CASTS:
            value = _NULL_AS.get(item.name, "" if kind == "str" else 0)
        values[item.name] = _CASTS[kind](value) if kind in _CASTS else value
    return cls(**values)


def _self_check(checks: DataFrame, per_group: int = 5) -> list[SelfCheckGroup]:
    """Per group: snapshots reproduced of those checked, and its first ``per_group`` mismatches (worst rate first)."""
    from pyspark.sql import functions as sf

    rates = (
        checks.groupBy("group_id")
        .agg(sf.sum(sf.col("matched").cast("int")).alias("matched"), sf.count(sf.lit(1)).alias("checked"))
        .collect()
    )
    missed = (
        checks.where(sf.col("matched").isNull() | ~sf.col("matched"))
        .select("group_id", "snapshot_ts", "generation", "assignor", "mismatches")
        .orderBy("group_id", "snapshot_ts")
        .collect()
    )
    mismatches: dict[str, list[tuple[dt.datetime | None, int | None, str | None, str]]] = {}
    for r in missed:
        listed = mismatches.setdefault(r["group_id"], [])
        if len(listed) < per_group:
            listed.append((r["snapshot_ts"], r["generation"], r["assignor"], "; ".join(r["mismatches"] or ())))
    groups = [
        SelfCheckGroup(r["group_id"], int(r["matched"] or 0), int(r["checked"]), mismatches.get(r["group_id"], []))
        for r in rates
    ]
    return sorted(groups, key=lambda g: (g.rate, g.group_id))


def _totals() -> list[Column]:
    """The totals the ranking and the groups table share: rebalances and pause cost."""
    from pyspark.sql import functions as sf

    return [
        sf.sum(sf.col("rebalanced").cast("int")).alias("rebalances"),
        sf.sum("pause_partition_seconds").alias("pause"),
    ]


def _strategies(
    ok: DataFrame,
) -> tuple[list[StrategySummary], tuple[int | None, int | None], dict[str, dict[str, Quantiles]]]:
    """Each strategy's figures, the first and last snapshot (epoch seconds, None without rows) and the quantiles of
    the distributions over all error-free rows (see :func:`_distributions`), in one job.

    The quantiles are aggregated beside the figures over the same rows: each gets them in the same partitions and
    order as from a job of its own, so its count and quantiles are the same to the last bit.
    """
    from pyspark.sql import functions as sf

    seconds = sf.col("snapshot_ts").cast("long")
    measures = [m for m, (scope, _) in DISTRIBUTIONS.items() if scope != _PER_REBALANCE]
    rows = (
        ok.groupBy("strategy")
        .agg(
            sf.first("protocol").alias("protocol"),
            *_totals(),
            sf.max("imbalance").alias("imbalance"),
            sf.percentile_approx("imbalance", 0.95, 10000).alias("imbalance_p95"),  # as the distributions are
            sf.sum("moved").alias("moved"),
            sf.sum("revoked").alias("revoked"),
            sf.sum("orphaned").alias("orphaned"),
            sf.max("topic_spread").alias("topic_spread"),
            sf.max("load_spread").alias("load_spread"),
            sf.sum("rounds").alias("rounds"),
            sf.sum((~sf.col("valid")).cast("int")).alias("invalid"),
            sf.sum("assign_ms").alias("assign_ms"),
            sf.max(sf.col("weighted_max_mean_ratio").isNotNull().cast("int")).alias("weighted"),
            # an evaluation written before the column existed has none: null, as without weights
            (sf.sum("moved_weight") if "moved_weight" in ok.columns else sf.lit(None).cast("double")).alias(
                "moved_weight"
            ),
            sf.min(seconds).alias("first_second"),
            sf.max(seconds).alias("last_second"),
            *_quantiles(measures),
        )
        .collect()
    )
    firsts = [int(r["first_second"]) for r in rows if r["first_second"] is not None]
    lasts = [int(r["last_second"]) for r in rows if r["last_second"] is not None]
    bounds = (min(firsts, default=None), max(lasts, default=None))
    return [_record(StrategySummary, r) for r in rows], bounds, _found_quantiles(rows, measures)


def _timeline(ok: DataFrame, bounds: tuple[int | None, int | None]) -> dict[str, list[TimePoint]]:
    """Per strategy, the figures bucketed in time between ``bounds`` (the first and last snapshot, epoch seconds)."""
    from pyspark.sql import functions as sf

    seconds = sf.col("snapshot_ts").cast("long")
    lo, hi = bounds
    if lo is None or hi is None:
        return {}
    bucket = max(1, math.ceil((hi - lo + 1) / MAX_POINTS))
    start = sf.timestamp_seconds(sf.floor(seconds / bucket) * bucket) if bucket > 1 else sf.col("snapshot_ts")
    rows = (
        ok.withColumn("ts", start)
        .groupBy("strategy", "ts")
        .agg(
            sf.sum("moved").alias("moved"),
            sf.sum("revoked").alias("revoked"),
            sf.sum("pause_partition_seconds").alias("pause"),
            sf.avg("load_spread").alias("load_spread"),
            sf.max("topic_spread").alias("topic_spread"),
            sf.avg("imbalance").alias("imbalance"),
        )
        .orderBy("strategy", "ts")
        .collect()
    )
    timeline: dict[str, list[TimePoint]] = {}
    for r in rows:
        timeline.setdefault(r["strategy"], []).append(_record(TimePoint, r))
    return timeline


def _distributions(ok: DataFrame, per_snapshot: dict[str, dict[str, Quantiles]]) -> dict[str, dict[str, Quantiles]]:
    """Per strategy and measure, 101 quantiles; per-rebalance measures leave out each group's first snapshot.

    The per-rebalance measures in one Spark job, all aggregated in it: each measure's count and quantiles are computed
    over the same rows, in the same order, as by a job of its own. The other scopes' quantiles are ``per_snapshot``,
    from :func:`_strategies`' job.
    """
    from pyspark.sql import functions as sf

    scopes: dict[str, list[str]] = {}
    for measure, (scope, _) in DISTRIBUTIONS.items():
        scopes.setdefault(scope, []).append(measure)
    found: dict[str, dict[str, Quantiles]] = {}
    for scope, measures in scopes.items():
        if scope == _PER_REBALANCE:
            rows = ok.where(sf.col("later_rebalance")).groupBy("strategy").agg(*_quantiles(measures)).collect()
            scoped = _found_quantiles(rows, measures)
        else:
            scoped = {s: {m: q for m, q in figures.items() if m in measures} for s, figures in per_snapshot.items()}
        for strategy, figures in scoped.items():
            for measure, quantiles in figures.items():
                found.setdefault(strategy, {})[measure] = quantiles
    # in the order the strategies came and DISTRIBUTIONS lists the measures, as one job per measure gave them
    order = list(found)
    return {s: {m: found[s][m] for m in DISTRIBUTIONS if m in found[s]} for s in order}


def _quantiles(measures: Sequence[str]) -> list[Column]:
    """Per measure ``i``: its count (``n{i}``) and 101 quantiles (``q{i}``, null without values), as aggregates."""
    from pyspark.sql import functions as sf

    percentages = _percentages()
    figures = []
    for i, measure in enumerate(measures):
        figures.append(sf.count(measure).alias(f"n{i}"))
        figures.append(sf.percentile_approx(sf.col(measure).cast("double"), percentages, 10000).alias(f"q{i}"))
    return figures


def _found_quantiles(rows: Sequence[Row], measures: Sequence[str]) -> dict[str, dict[str, Quantiles]]:
    """Per strategy (in the order of ``rows``, aggregated by :func:`_quantiles`), its measures that have values."""
    found: dict[str, dict[str, Quantiles]] = {}
    for r in rows:
        for i, measure in enumerate(measures):
            if r[f"q{i}"] is not None and r[f"n{i}"]:
                found.setdefault(r["strategy"], {})[measure] = Quantiles(int(r[f"n{i}"]), tuple(map(float, r[f"q{i}"])))
    return found


def _percentages() -> Column:
    """``PERCENTS`` as one array literal of doubles, built by one call: ``lit`` of a list makes a call to the JVM per
    element (101 a measure, some 2 s of a summary's 8 on a local session), a SQL literal one for all of them."""
    from pyspark.sql import functions as sf

    return sf.expr(f"array({', '.join(f'{p!r}D' for p in PERCENTS)})")


def _per_group(ok: DataFrame) -> DataFrame:
    """Per group and strategy, the columns of :class:`GroupFigures`: the totals and each figure's worst."""
    from pyspark.sql import functions as sf

    return ok.groupBy("group_id", "strategy").agg(
        *_totals(),
        sf.max("pause_partition_seconds").alias("worst_pause"),
        sf.max("moved").alias("worst_moved"),
        sf.max("revoked").alias("worst_revoked"),
        sf.max("load_spread").alias("worst_load_spread"),
        sf.max("topic_spread").alias("worst_topic_spread"),
        sf.max("imbalance").alias("worst_imbalance"),
    )


def _group_table(per_group: DataFrame, limit: int) -> tuple[list[GroupFigures], int]:
    """The ``limit`` rows of ``per_group`` (:func:`_per_group`) with the most pause cost, and how many there are."""
    from pyspark.sql import functions as sf

    total = per_group.count()
    rows = per_group.orderBy(sf.desc("pause"), "group_id", "strategy").limit(limit).collect()
    table = [_record(GroupFigures, r) for r in rows]
    return table, int(total)


def _balance_by_group(per_group: DataFrame, limit: int) -> tuple[list[GroupBalance], int, dict[str, int]]:
    """Per group, the strategy that leaves it worst balanced and the best one (groups where they differ).

    A strategy's balance in a group is its ``worst_imbalance`` in ``per_group`` (:func:`_per_group`), the cluster's
    own ``actual`` left out.

    Returns the ``limit`` groups where the strategies differ most, how many groups differ at all, and per
    strategy how many groups it leaves worst balanced (ties to the strategy name, deterministically).
    """
    from pyspark.sql import functions as sf

    per_strategy = per_group.where(sf.col("strategy") != ACTUAL_STRATEGY).select(
        "group_id", "strategy", sf.col("worst_imbalance").alias("worst")
    )
    by_group = (
        per_strategy.groupBy("group_id")
        .agg(
            sf.max(sf.struct(sf.col("worst"), sf.col("strategy"))).alias("hi"),
            sf.min(sf.struct(sf.col("worst"), sf.col("strategy"))).alias("lo"),
        )
        .where(sf.col("hi.worst") > sf.col("lo.worst"))
        .select(
            "group_id",
            sf.col("hi.strategy").alias("worst_strategy"),
            sf.col("hi.worst").alias("worst_imbalance"),
            sf.col("lo.strategy").alias("best_strategy"),
            sf.col("lo.worst").alias("best_imbalance"),
        )
        .cache()
    )
    counts = by_group.groupBy("worst_strategy").count().collect()
    worst = {r["worst_strategy"]: int(r["count"]) for r in counts}
    rows = (
        by_group.orderBy(sf.desc(sf.col("worst_imbalance") - sf.col("best_imbalance")), "group_id")
        .limit(limit)
        .collect()
    )
    by_group.unpersist()
    return [_record(GroupBalance, r) for r in rows], sum(worst.values()), worst


def _drilldown(
    ok: DataFrame, per_group: DataFrame, membership: DataFrame | None, top: int, strategy: str | None = None
) -> list[DrillDown]:
    """The ``top`` groups with the most pause cost under ``strategy`` (None: the sum, for a lone strategy).

    Under a strategy, a group's pause cost is its ``pause`` in ``per_group`` (:func:`_per_group`): the strategy's
    rows of the group, added in the same partitions and order as by a ``groupBy("group_id")`` of the strategy's rows
    (each partition's partial sum, then the partials in partition order), so the same to the last bit.
    """
    from pyspark.sql import functions as sf

    if top <= 0:
        return []
    if strategy is None:
        measured = ok.groupBy("group_id").agg(sf.sum("pause_partition_seconds").alias("pause"))
    else:
        measured = per_group.where(sf.col("strategy") == strategy).select("group_id", "pause")
    leaders = measured.orderBy(sf.desc("pause"), "group_id").limit(top).collect()
    names = [r["group_id"] for r in leaders]
    if not names:
        return []
    steps = (
        ok.where(sf.col("group_id").isin(names) & sf.col("rebalanced"))
        .select("group_id", "strategy", "snapshot_ts", "moved", "revoked", "pause_partition_seconds")
        .orderBy("group_id", "strategy", "snapshot_ts")
        .collect()
    )
    rebalances: dict[str, dict[str, list[tuple[dt.datetime, int, int, float]]]] = {}
    for r in steps:
        rebalances.setdefault(r["group_id"], {}).setdefault(r["strategy"], []).append(
            (r["snapshot_ts"], int(r["moved"] or 0), int(r["revoked"] or 0), float(r["pause_partition_seconds"] or 0))
        )
    members: dict[str, dict[str, list[tuple[dt.datetime, str]]]] = {}
    if membership is not None:
        rows = (
            membership.where(sf.col("group_id").isin(names))
            .select("group_id", "snapshot_ts", "member_id", "group_instance_id")
            .collect()
        )
        members = member_events([(r[0], r[1], r[2], r[3]) for r in rows])
    return [
        DrillDown(
            r["group_id"],
            float(r["pause"] or 0.0),
            members.get(r["group_id"], {}),
            rebalances.get(r["group_id"], {}),
            strategy or "",
        )
        for r in leaders
    ]
