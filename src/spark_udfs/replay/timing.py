"""The timing behind the pause cost: the pause model the evaluation prices with, and where each parameter came from.

Every row's ``pause_partition_seconds`` is :func:`assignors.metrics.rebalance_pause` under a
:class:`assignors.metrics.PauseModel` (``make calibrate`` measured its factors; docs/calibration.md). The model's
intervals are Kafka's defaults unless the user's options, or the cluster's own records (``--actual``), say
otherwise; :func:`timing_model` builds it from those and records each value's source, and
:func:`parameter_rows` is what the evaluation writes beside its output (``assignors.tables.PARAMETERS_COLUMNS``)
and the report prints ("Timing parameters").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assignors import ConfigurationError
from assignors.consumer_group import KAFKA_VERSION, server_assignor
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.metrics import DEFAULT_HEARTBEAT_SECONDS, DEFAULT_PAUSE_MODEL, DEFAULT_REBALANCE_SECONDS, PauseModel

if TYPE_CHECKING:
    from assignors.collect import ClusterVersion

__all__ = [
    "DEFAULT_TIMING",
    "KAFKA_VERSION_PARAMETER",
    "OPTION_FIELDS",
    "PINNED_KAFKA",
    "SETTINGS",
    "PauseTiming",
    "TimingParameter",
    "cluster_kafka_version",
    "parameter_rows",
    "parameters_text",
    "pause_model",
    "timing_model",
]

PINNED_KAFKA = "the project's pinned Kafka"
"""The Kafka version's source when neither ``--kafka-version`` nor the collected tables give one."""
_KAFKA_18688_RELEASE = "4.0"  # the one release whose patches replay uniform differently (4.0.0 against 4.0.1+)
KAFKA_VERSION_PARAMETER = "kafka_version"
"""The parameters table's row naming the broker version ``uniform`` and ``consumer-range`` were replayed as."""

SETTINGS: Mapping[str, str] = {
    "heartbeat_seconds": "heartbeat.interval.ms (classic consumers)",
    "session_seconds": "session.timeout.ms (classic consumers)",
    "consumer_heartbeat_seconds": "group.consumer.heartbeat.interval.ms (broker, KIP-848)",
    "consumer_session_seconds": "group.consumer.session.timeout.ms (broker, KIP-848)",
    "eager_heartbeats": "classic heartbeats an EAGER rebalance stops the survivors' partitions",
    "cooperative_heartbeats": "classic heartbeats a COOPERATIVE move waits (two rounds)",
    "cooperative_orphan_heartbeats": "classic heartbeats a departed member's partition waits (COOPERATIVE)",
    "consumer_move_heartbeats": "KIP-848 heartbeats a moved partition waits (revoke, then assign)",
    "consumer_orphan_heartbeats": "KIP-848 heartbeats a departed member's partition waits",
    "fetch_seconds": "seconds until a partition's new owner fetches",
    KAFKA_VERSION_PARAMETER: "the broker version uniform and consumer-range replay as",
}
"""What each parameter is: the Kafka setting an interval stands for, or what a measured factor counts."""

OPTION_FIELDS: Mapping[str, str] = {
    "rebalance_seconds": "heartbeat_seconds",
    "heartbeat_seconds": "consumer_heartbeat_seconds",
    "heartbeat_interval_ms": "heartbeat_seconds",
    "session_timeout_ms": "session_seconds",
    "consumer_heartbeat_interval_ms": "consumer_heartbeat_seconds",
    "consumer_session_timeout_ms": "consumer_session_seconds",
}
"""Each timing option (the CLI's ``--x-y``, ``evaluate_history``'s ``x_y``) and the model interval it sets.

``--rebalance-seconds`` (``rebalance_seconds``) priced one classic rebalance round before the model was measured;
in the model a classic rebalance is paced by the consumers' heartbeat interval, which it now sets.
``--heartbeat-seconds`` was and is KIP-848's heartbeat interval. The ``*_ms`` options take Kafka's settings as
written, in milliseconds.
"""


@dataclass(frozen=True, slots=True)
class PauseTiming:
    """The two durations the pause cost took before the measured model; still accepted wherever a model is.

    As a model (:func:`pause_model`): ``rebalance_seconds`` is the classic consumers' heartbeat interval (what
    paces a classic rebalance) and ``heartbeat_seconds`` KIP-848's (``group.consumer.heartbeat.interval.ms``);
    every other parameter is :data:`assignors.metrics.DEFAULT_PAUSE_MODEL`'s.
    """

    rebalance_seconds: float = DEFAULT_REBALANCE_SECONDS
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS


DEFAULT_TIMING = PauseTiming()


def pause_model(timing: PauseModel | PauseTiming) -> PauseModel:
    """``timing`` as the pause model the replay prices with (a model is returned as it is).

    Raises:
        InvalidWeightError: a duration that is not a finite number >= 0, naming it.
    """
    if isinstance(timing, PauseModel):
        return timing
    return DEFAULT_PAUSE_MODEL.with_settings(
        "PauseTiming", heartbeat_seconds=timing.rebalance_seconds, consumer_heartbeat_seconds=timing.heartbeat_seconds
    )


def timing_model(
    base: PauseModel | None = None, options: Mapping[str, float | None] | None = None, *, cli: bool = False
) -> PauseModel:
    """``base`` (default :data:`~assignors.metrics.DEFAULT_PAUSE_MODEL`) with the timing options given (not None).

    ``options`` maps an option of :data:`OPTION_FIELDS` to its value (seconds, or milliseconds for ``*_ms``);
    each value set is recorded with the source ``your option --rebalance-seconds`` (``cli``) or ``your option
    rebalance_seconds`` (Python). Two options that set one interval with different values are refused.

    Raises:
        ConfigurationError: an unknown option, or two options giving one interval different values.
        InvalidWeightError: a value that is not a finite number >= 0, naming it.
    """
    model = DEFAULT_PAUSE_MODEL if base is None else base
    chosen: dict[str, tuple[float, str]] = {}
    for option, value in (options or {}).items():
        if option not in OPTION_FIELDS:
            msg = f"unknown timing option {option!r}; the options are {', '.join(OPTION_FIELDS)}"
            raise ConfigurationError(msg)
        if value is None:
            continue
        name = "--" + option.replace("_", "-") if cli else option
        seconds = float(value) / 1000.0 if option.endswith("_ms") else float(value)
        field = OPTION_FIELDS[option]
        if field in chosen and chosen[field][0] != seconds:
            msg = f"{chosen[field][1]} and {name} both set {field} ({SETTINGS[field]}) and disagree; give one"
            raise ConfigurationError(msg)
        chosen[field] = (seconds, name)
    for field, (seconds, name) in chosen.items():
        model = model.with_settings(f"your option {name}", **{field: seconds})
    return model


@dataclass(frozen=True, slots=True)
class TimingParameter:
    """One row of the parameters table: a pause-model parameter (or the Kafka version), its value and source."""

    parameter: str
    value: float | None
    text: str
    source: str
    setting: str

    def row(self) -> dict[str, object]:
        """As a row of ``assignors.tables.PARAMETERS_COLUMNS``."""
        return {
            "parameter": self.parameter,
            "value": self.value,
            "text": self.text,
            "source": self.source,
            "setting": self.setting,
        }


def parameter_rows(
    model: PauseModel, kafka_version: str = KAFKA_VERSION, kafka_source: str = PINNED_KAFKA
) -> list[TimingParameter]:
    """Every parameter of ``model`` in field order, then the Kafka version: value, value as text, source."""
    rows = [
        TimingParameter(name, value, f"{value:g}", source, SETTINGS.get(name, ""))
        for name, (value, source) in model.parameters().items()
    ]
    rows.append(
        TimingParameter(KAFKA_VERSION_PARAMETER, None, kafka_version, kafka_source, SETTINGS[KAFKA_VERSION_PARAMETER])
    )
    return rows


def parameters_text(parameters: Sequence[TimingParameter]) -> list[str]:
    """The parameters as aligned text lines: name, value, source (the text report's "Timing parameters")."""
    width = max((len(p.parameter) for p in parameters), default=0)
    values = max((len(p.text) for p in parameters), default=0)
    return [f"  {p.parameter:<{width}}  {p.text:>{values}}  {p.source}" for p in parameters]


def cluster_kafka_version(cluster: ClusterVersion, where: str, strategies: Sequence[str]) -> tuple[str | None, str]:
    """The Kafka version the server strategies replay as for a cluster ``assignors collect`` read, and its source.

    The release's newest patch (:data:`assignors.collect.NEWEST_PATCH`) when the replay models that release for
    every server strategy in ``strategies``; else None (the pinned Kafka: what an upgrade would run), with the
    source saying why. ``where`` names the cluster file.
    """
    read = f"the cluster's own answer ({cluster.describe()}; {where})"
    version = cluster.kafka_version
    refused = None
    if version is not None:
        for name in strategies:
            try:
                if name in SERVER_STRATEGIES:
                    server_assignor(name, kafka_version=version)
            except ConfigurationError as error:
                refused = str(error)
                break
    if version is None or refused is not None:
        why = refused or "a release this replay does not model"
        return None, f"{PINNED_KAFKA}, what an upgrade would run: {read} is {why}"
    patch = f"{version}, the newest {cluster.release} patch"
    if cluster.release == _KAFKA_18688_RELEASE:
        patch += " (4.0.0 replays uniform before KAFKA-18688: --kafka-version 4.0.0 if your brokers run it)"
    return version, f"{read}: {patch}"
