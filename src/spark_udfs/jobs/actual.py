"""What the cluster did, measured on Spark like a strategy: the ``actual`` rows of the evaluation and the self-check.

:func:`evaluate_actual` runs :func:`spark_udfs.replay.actual.actual_rows` and
:func:`spark_udfs.replay.actual.self_check` once per group, its membership cogrouped with its recorded
assignments (``--actual``, the table ``assignors collect`` writes).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.tables import (
    ACTUAL_COLUMNS,
    ACTUAL_STRATEGY,
    MEMBERSHIP_COLUMNS,
    OUTPUT_COLUMNS,
    SELF_CHECK_COLUMNS,
    column_names,
)
from spark_udfs.replay.actual import HANDOVER_KINDS, ActualRow, actual_rows, observed_durations, self_check
from spark_udfs.replay.frames import member_rows, rows_to_frame
from spark_udfs.tables.schemas import ddl

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

    from assignors.metrics import PauseModel
    from spark_udfs.replay.group_input import TopicHistory
    from spark_udfs.replay.weights import WeightHistory

logger = logging.getLogger(__name__)

__all__ = ["evaluate_actual", "observe_handovers", "observe_timing"]

_OBSERVATION_COLUMNS = (("group_id", "string"), ("kind", "string"), ("seconds", "double"))


def _actual_rows_of(frame: pd.DataFrame) -> list[ActualRow]:
    import pandas as pd

    return [
        ActualRow(
            ts.to_pydatetime() if hasattr(ts, "to_pydatetime") else ts,
            None if pd.isna(generation) else int(generation),
            None if protocol is None or pd.isna(protocol) else str(protocol),
            str(member),
            None if instance is None or pd.isna(instance) else str(instance),
            tuple(assigned) if assigned is not None else (),
        )
        for ts, generation, protocol, member, instance, assigned in zip(
            frame["snapshot_ts"],
            frame["generation"],
            frame["protocol"],
            frame["member_id"],
            frame["group_instance_id"],
            frame["assigned"],
            strict=True,
        )
        if not pd.isna(ts) and member is not None
    ]


def evaluate_actual(
    members: DataFrame,
    recorded: DataFrame,
    history: TopicHistory,
    *,
    weights: WeightHistory | None = None,
    timing: PauseModel = DEFAULT_PAUSE_MODEL,
) -> tuple[DataFrame, DataFrame]:
    """The strategy ``actual``'s evaluation rows and the range/roundrobin self-check rows, per group on Spark.

    ``members`` is the evaluation's membership and ``recorded`` the table ``assignors collect`` writes
    (``actual``), each with every column of its table (:func:`spark_udfs.jobs.history.evaluate` made them so);
    ``history`` is the topics' history the replay uses, ``weights`` and ``timing`` the replay's, so the weighted
    columns and the pause cost are measured alike. Both results come from one ``cogroup().applyInPandas`` per
    output (Spark Connect safe); a group that fails gets an error row in the evaluation and a self-check row that
    says so (``matched`` false).
    """
    members = members.select(*column_names(MEMBERSHIP_COLUMNS))
    recorded = recorded.select(*column_names(ACTUAL_COLUMNS))

    def evaluation(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        group = str(right["group_id"].iloc[0]) if len(right) else str(left["group_id"].iloc[0])
        try:
            rows = (
                actual_rows(group, member_rows(left), _actual_rows_of(right), history, weights=weights, timing=timing)
                if len(right)
                else []
            )
        except Exception as error:  # one group must never fail the job (logged with its traceback)
            logger.warning("group %r: internal error while measuring the actual strategy", group, exc_info=True)
            rows = [{"group_id": group, "strategy": ACTUAL_STRATEGY, "error": f"{type(error).__name__}: {error}"}]
        return rows_to_frame(rows, OUTPUT_COLUMNS)

    def checks(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        group = str(right["group_id"].iloc[0]) if len(right) else ""
        try:
            rows = self_check(group, member_rows(left), _actual_rows_of(right), history) if len(right) else []
        except Exception as error:  # one group must never fail the job, nor vanish from the check (logged)
            logger.warning("group %r: internal error in the self-check; one row says so", group, exc_info=True)
            failed = f"self-check failed: {type(error).__name__}: {error}"
            rows = [dict.fromkeys(name for name, _ in SELF_CHECK_COLUMNS)]
            rows[0].update(group_id=group, matched=False, mismatches=[failed])
        return pd.DataFrame(rows, columns=[name for name, _ in SELF_CHECK_COLUMNS])

    cogrouped = members.groupBy("group_id").cogroup(recorded.groupBy("group_id"))
    rows = cogrouped.applyInPandas(evaluation, schema=ddl(OUTPUT_COLUMNS))
    checked = members.groupBy("group_id").cogroup(recorded.groupBy("group_id"))
    return rows, checked.applyInPandas(checks, schema=ddl(SELF_CHECK_COLUMNS))


def observe_timing(members: DataFrame, recorded: DataFrame) -> dict[str, tuple[int, float | None]]:
    """Per kind of :data:`spark_udfs.replay.actual.OBSERVED`: how many durations the records show, and their median.

    One ``cogroup().applyInPandas`` of :func:`spark_udfs.replay.actual.observed_durations` per group, then the
    count and the exact median (``percentile``) per kind, collected (a few rows). A group whose records fail
    gives no observation (logged).
    """
    members = members.select(*column_names(MEMBERSHIP_COLUMNS))
    recorded = recorded.select(*column_names(ACTUAL_COLUMNS))

    def durations(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        rows: list[dict[str, object]] = []
        if len(right):
            group = str(right["group_id"].iloc[0])
            try:
                rows = observed_durations(group, member_rows(left), _actual_rows_of(right))
            except Exception:  # one group must never fail the job (logged with its traceback)
                logger.warning("group %r: internal error while reading its timing; none observed", group, exc_info=True)
        return pd.DataFrame(rows, columns=[name for name, _ in _OBSERVATION_COLUMNS])

    cogrouped = members.groupBy("group_id").cogroup(recorded.groupBy("group_id"))
    observed = cogrouped.applyInPandas(durations, schema=ddl(_OBSERVATION_COLUMNS))
    from pyspark.sql import functions as sf

    totals = observed.groupBy("kind").agg(
        sf.count("seconds").alias("n"), sf.expr("percentile(seconds, 0.5)").alias("median")
    )
    return {
        row["kind"]: (int(row["n"]), None if row["median"] is None else float(row["median"]))
        for row in totals.collect()
    }


def observe_handovers(handovers: DataFrame) -> dict[str, tuple[int, float | None]]:
    """Per kind of the ``handovers`` table (``consumer_move``, ``consumer_orphan``): how many hand-overs it holds and
    their mean, for :func:`spark_udfs.replay.actual.derived_model`. The mean, not the median: a KIP-848 hand-over
    takes about one broker heartbeat or a fraction of one (the new member's next heartbeat comes soon or late), so
    the median lands on either mode; on ``make calibrate``'s run of 2026-11-29 the records' 694 hand-overs had a
    median of 1.85 s and a mean of 1.45 s, and the members measured a mean of 1.33 s (their revoke to the new
    member's first fetch), which the model's totals need."""
    from pyspark.sql import functions as sf

    totals = (
        handovers.where(sf.col("seconds").isNotNull() & (sf.col("seconds") >= 0))
        .groupBy("kind")
        .agg(sf.count("seconds").alias("n"), sf.avg("seconds").alias("mean"))
    )
    return {
        str(row["kind"]): (int(row["n"]), None if row["mean"] is None else float(row["mean"]))
        for row in totals.collect()
        if row["kind"] in HANDOVER_KINDS
    }
