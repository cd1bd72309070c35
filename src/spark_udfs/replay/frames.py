"""One group's replay as pandas frames: the body of the Spark job's ``applyInPandas``.

:func:`replay_frame` reads a group's membership rows from a pandas frame, runs
:func:`spark_udfs.replay.group_replay.replay_group` and returns its output rows typed as
``OUTPUT_COLUMNS`` (nullable integers and booleans).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.tables import OUTPUT_COLUMNS
from spark_udfs.replay.group_replay import STRATEGIES, MemberRow, Row, TopicHistory, replay_group
from spark_udfs.replay.timing import PauseTiming
from spark_udfs.replay.values import is_missing
from spark_udfs.replay.weights import WeightHistory

if TYPE_CHECKING:
    import pandas as pd

    from assignors.metrics import PauseModel

__all__ = ["member_rows", "replay_frame", "rows_to_frame"]

_PANDAS_TYPES = {"string": "object", "timestamp": "datetime64[ns]", "int": "Int64", "boolean": "boolean"}


def rows_to_frame(rows: list[Row], columns: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Rows as a pandas DataFrame with the columns' types (nullable integers and booleans)."""
    import pandas as pd

    data: dict[str, Any] = {}
    for name, kind in columns:
        values = [row[name] for row in rows]
        if kind == "double":
            data[name] = pd.Series([math.nan if v is None else v for v in values], dtype="float64")
        elif kind in _PANDAS_TYPES:
            data[name] = pd.Series(values, dtype=_PANDAS_TYPES[kind])
        else:
            data[name] = pd.Series(values, dtype="object")
    return pd.DataFrame(data, columns=[name for name, _ in columns])


def _value(value: Any) -> Any:
    return None if is_missing(value) else value


def _stamps(column: pd.Series[Any]) -> list[Any]:
    """The column's timestamps as ``datetime`` (None when missing), each distinct value converted once.

    A group's rows hold a few hundred timestamps for thousands of rows: a datetime64 column is factorized and only
    its distinct values become ``datetime`` (the same values the row-by-row loop gives, shared between rows).
    """
    import pandas as pd

    if column.dtype.kind != "M":  # not datetime64: row by row, as the values come
        return [None if is_missing(ts) else ts.to_pydatetime() for ts in column]
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    # code -1 (NaT) picks the None appended last
    converted: list[Any] = [None if is_missing(ts) else ts.to_pydatetime() for ts in uniques]
    converted.append(None)
    return [converted[code] for code in codes.tolist()]


def member_rows(frame: pd.DataFrame) -> list[MemberRow]:
    """The membership rows of a pandas frame with the ``MEMBERSHIP_COLUMNS``."""
    return [
        MemberRow(
            ts,
            _value(member_id),
            None if topics is None or (isinstance(topics, float) and math.isnan(topics)) else tuple(topics),
            _value(instance),
            _value(rack),
        )
        for ts, member_id, topics, instance, rack in zip(
            _stamps(frame["snapshot_ts"]),
            frame["member_id"].tolist(),
            frame["topics"].tolist(),
            frame["group_instance_id"].tolist(),
            frame["rack_id"].tolist(),
            strict=True,
        )
    ]


def replay_frame(  # noqa: PLR0913 - the replay's options
    frame: pd.DataFrame,
    history: TopicHistory,
    strategies: Sequence[str] = STRATEGIES,
    *,
    detail: bool = False,
    weights: WeightHistory | None = None,
    timing: PauseModel | PauseTiming = DEFAULT_PAUSE_MODEL,
    errors: Mapping[str | None, str] | None = None,
    kafka_version: str | None = None,
) -> pd.DataFrame:
    """The ``applyInPandas`` body: one group's membership rows in, its output rows out.

    With ``detail`` each output row also carries ``detail``: the per-member partitions of
    that snapshot and strategy, as a list of ``{"member", "partitions"}``. ``errors`` maps a
    group id to the fault found in its rows before the replay (its rows carry it).
    """
    import pandas as pd

    group_id = _value(frame["group_id"].iloc[0]) if len(frame) else None
    output, members = replay_group(
        group_id,
        member_rows(frame),
        history,
        strategies,
        detail=detail,
        weights=weights,
        timing=timing,
        input_error=(errors or {}).get(group_id),
        kafka_version=kafka_version,
    )
    result = rows_to_frame(output, OUTPUT_COLUMNS)
    if detail:
        nested: dict[tuple[Any, str], list[dict[str, Any]]] = {}
        for row in members:
            nested.setdefault((row["snapshot_ts"], row["strategy"]), []).append(
                {"member": row["member"], "partitions": row["partitions"]}
            )
        details: list[Any] = [nested.get((row["snapshot_ts"], row["strategy"]), []) for row in output]
        result["detail"] = pd.Series(details, dtype="object")
    return result
