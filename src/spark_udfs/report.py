"""The evaluation's summary, aggregated on Spark; its HTML and plain-text forms.

:func:`summarize` reduces the evaluation output (any size) to a :class:`Summary` small
enough for one HTML page: the ranked strategies, distributions as quantiles, a timeline
bucketed to at most ``MAX_POINTS`` points, a table of the groups and a drill-down into
the groups with the most pause cost. :func:`render_html` (:mod:`spark_udfs.report_html`)
draws it with plotly; :func:`render_text` prints the ranking.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING

from spark_udfs.ranking import DEFAULT_RANK_BY, StrategySummary, parse_rank_by, rank
from spark_udfs.report_html import render_html
from spark_udfs.summary import (
    DISTRIBUTIONS,
    MAX_POINTS,
    PERCENTS,
    DrillDown,
    GroupFigures,
    Quantiles,
    Summary,
    TimePoint,
    member_events,
    render_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import Column, DataFrame

__all__ = [
    "DrillDown",
    "GroupFigures",
    "Quantiles",
    "StrategySummary",
    "Summary",
    "TimePoint",
    "render_html",
    "render_text",
    "summarize",
]


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
) -> Summary:
    """Aggregate the evaluation output on Spark and collect the small result.

    Args:
        evaluation: the output of ``evaluate_history``.
        membership: its input, for the drill-down's member timelines (omitted: none).
        rank_by: the figures of the score, in order (see :mod:`spark_udfs.ranking`).
        top: how many groups the drill-down shows (the most pause cost over all strategies).
        group_limit: rows of the groups table (group x strategy, most pause cost first).
        notes: sentences shown under the report's title.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    keys = parse_rank_by(rank_by)
    ok = evaluation.where(sf.col("error").isNull()).withColumn("imbalance", _imbalance())
    first = sf.col("snapshot_ts") == sf.min("snapshot_ts").over(Window.partitionBy("group_id", "strategy"))
    ok = ok.withColumn("later_rebalance", sf.col("rebalanced") & ~first)
    strategies = rank(_strategies(ok), keys)
    counts = evaluation.agg(
        sf.countDistinct("group_id").alias("groups"),
        sf.countDistinct("group_id", "snapshot_ts").alias("snapshots"),
    ).collect()[0]
    errors = (
        evaluation.where(sf.col("error").isNotNull())
        .groupBy("group_id")
        .agg(sf.min("error").alias("error"))
        .orderBy("group_id")
        .collect()
    )
    table, total = _group_table(ok, group_limit)
    return Summary(
        groups=int(counts["groups"]),
        snapshots=int(counts["snapshots"]),
        error_groups=[(r["group_id"], r["error"]) for r in errors],
        strategies=strategies,
        rank_by=keys,
        timeline=_timeline(ok),
        distributions=_distributions(ok),
        group_table=table,
        group_count=total,
        drilldown=_drilldown(ok, membership, top),
        notes=list(notes),
    )


def _strategies(ok: DataFrame) -> list[StrategySummary]:
    from pyspark.sql import functions as sf

    rows = (
        ok.groupBy("strategy")
        .agg(
            sf.first("protocol").alias("protocol"),
            sf.sum(sf.col("rebalanced").cast("int")).alias("rebalances"),
            sf.sum("pause_partition_seconds").alias("pause"),
            sf.max("imbalance").alias("imbalance"),
            sf.sum("moved").alias("moved"),
            sf.sum("revoked").alias("revoked"),
            sf.sum("orphaned").alias("orphaned"),
            sf.max("topic_spread").alias("topic_spread"),
            sf.max("load_spread").alias("load_spread"),
            sf.sum("rounds").alias("rounds"),
            sf.sum((~sf.col("valid")).cast("int")).alias("invalid"),
            sf.sum("assign_ms").alias("assign_ms"),
            sf.max(sf.col("weighted_max_mean_ratio").isNotNull().cast("int")).alias("weighted"),
        )
        .collect()
    )
    return [
        StrategySummary(
            strategy=r["strategy"],
            protocol=r["protocol"] or "",
            rebalances=int(r["rebalances"] or 0),
            pause=float(r["pause"] or 0.0),
            imbalance=float(r["imbalance"] or 1.0),
            moved=int(r["moved"] or 0),
            revoked=int(r["revoked"] or 0),
            orphaned=int(r["orphaned"] or 0),
            topic_spread=int(r["topic_spread"] or 0),
            load_spread=int(r["load_spread"] or 0),
            rounds=int(r["rounds"] or 0),
            invalid=int(r["invalid"] or 0),
            assign_ms=float(r["assign_ms"] or 0.0),
            weighted=bool(r["weighted"]),
        )
        for r in rows
    ]


def _timeline(ok: DataFrame) -> dict[str, list[TimePoint]]:
    from pyspark.sql import functions as sf

    seconds = sf.col("snapshot_ts").cast("long")
    bounds = ok.agg(sf.min(seconds).alias("lo"), sf.max(seconds).alias("hi")).collect()[0]
    if bounds["lo"] is None:
        return {}
    bucket = max(1, math.ceil((int(bounds["hi"]) - int(bounds["lo"]) + 1) / MAX_POINTS))
    start = sf.timestamp_seconds(sf.floor(seconds / bucket) * bucket) if bucket > 1 else sf.col("snapshot_ts")
    rows = (
        ok.withColumn("bucket", start)
        .groupBy("strategy", "bucket")
        .agg(
            sf.sum("moved").alias("moved"),
            sf.sum("revoked").alias("revoked"),
            sf.sum("pause_partition_seconds").alias("pause"),
            sf.avg("load_spread").alias("load_spread"),
            sf.max("topic_spread").alias("topic_spread"),
            sf.avg("imbalance").alias("imbalance"),
        )
        .orderBy("strategy", "bucket")
        .collect()
    )
    timeline: dict[str, list[TimePoint]] = {}
    for r in rows:
        timeline.setdefault(r["strategy"], []).append(
            TimePoint(
                r["bucket"],
                int(r["moved"] or 0),
                int(r["revoked"] or 0),
                float(r["pause"] or 0.0),
                float(r["load_spread"] or 0.0),
                int(r["topic_spread"] or 0),
                float(r["imbalance"] or 1.0),
            )
        )
    return timeline


def _distributions(ok: DataFrame) -> dict[str, dict[str, Quantiles]]:
    """Per strategy and measure, 101 quantiles; per-rebalance measures leave out each group's first snapshot."""
    from pyspark.sql import functions as sf

    result: dict[str, dict[str, Quantiles]] = {}
    for measure, (scope, _) in DISTRIBUTIONS.items():
        rows = ok.where(sf.col("later_rebalance")) if scope == "per rebalance" else ok
        collected = (
            rows.groupBy("strategy")
            .agg(
                sf.count(measure).alias("n"),
                sf.percentile_approx(sf.col(measure).cast("double"), list(PERCENTS), 10000).alias("q"),
            )
            .collect()
        )
        for r in collected:
            if r["q"] is not None and r["n"]:
                result.setdefault(r["strategy"], {})[measure] = Quantiles(int(r["n"]), tuple(map(float, r["q"])))
    return result


def _group_table(ok: DataFrame, limit: int) -> tuple[list[GroupFigures], int]:
    from pyspark.sql import functions as sf

    per_group = ok.groupBy("group_id", "strategy").agg(
        sf.sum(sf.col("rebalanced").cast("int")).alias("rebalances"),
        sf.sum("pause_partition_seconds").alias("pause"),
        sf.max("pause_partition_seconds").alias("worst_pause"),
        sf.max("moved").alias("worst_moved"),
        sf.max("revoked").alias("worst_revoked"),
        sf.max("load_spread").alias("worst_load_spread"),
        sf.max("topic_spread").alias("worst_topic_spread"),
        sf.max("imbalance").alias("worst_imbalance"),
    )
    total = per_group.count()
    rows = per_group.orderBy(sf.desc("pause"), "group_id", "strategy").limit(limit).collect()
    table = [
        GroupFigures(
            r["group_id"],
            r["strategy"],
            int(r["rebalances"] or 0),
            float(r["pause"] or 0.0),
            float(r["worst_pause"] or 0.0),
            int(r["worst_moved"] or 0),
            int(r["worst_revoked"] or 0),
            int(r["worst_load_spread"] or 0),
            int(r["worst_topic_spread"] or 0),
            float(r["worst_imbalance"] or 1.0),
        )
        for r in rows
    ]
    return table, int(total)


def _drilldown(ok: DataFrame, membership: DataFrame | None, top: int) -> list[DrillDown]:
    from pyspark.sql import functions as sf

    if top <= 0:
        return []
    leaders = (
        ok.groupBy("group_id")
        .agg(sf.sum("pause_partition_seconds").alias("pause"))
        .orderBy(sf.desc("pause"), "group_id")
        .limit(top)
        .collect()
    )
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
            r["group_id"], float(r["pause"] or 0.0), members.get(r["group_id"], {}), rebalances.get(r["group_id"], {})
        )
        for r in leaders
    ]
