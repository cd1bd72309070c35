"""One short calibration scenario per protocol on a real broker: a member of three leaves (LeaveGroup).

Kafka's own Java consumers (dev.assignors.member.GroupHost), classic with Kafka's CooperativeStickyAssignor and
KIP-848 with the broker's uniform assignor; measured from the members (calibration.measure) and replayed through
the evaluation's engine (calibration.predict): moved, orphaned and revoked agree, and the orphaned partitions are
the ones that paused. ``make calibrate`` runs the full set (docs/calibration.md).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from calibration.measure import observe
from calibration.predict import predict
from calibration.report import model_for
from calibration.runner import play
from calibration.scenarios import STRATEGIES, Scenario, Settings

from assignors.metrics import DEFAULT_PAUSE_MODEL
from assignors.testing import KafkaBroker
from helpers.kafka_jvm import classpath, kafka_version

pytestmark = [pytest.mark.integration, pytest.mark.kafka]

SETTINGS = Settings(partitions=(("a", 6),), quiet_s=1.5, settle_timeout_s=45.0, initial_delay_ms=0)
LEAVE = Scenario(
    "leave-short",
    "one of 3 members leaves",
    tuple(("start", f"m{i}", "a", "") for i in range(3)),
    ((("stop", "m2"),),),
)


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    with KafkaBroker(classpath=classpath()[1:], config=SETTINGS.broker_config()) as running:
        yield running


@pytest.mark.parametrize("label", ["java cooperative-sticky", "java consumer uniform"])
def test_a_leave_measured_and_predicted(broker: KafkaBroker, label: str) -> None:
    strategy = next(s for s in STRATEGIES if s.label == label)
    with tempfile.TemporaryDirectory(prefix="calibrate-test-") as work:
        (run,) = play(
            LEAVE,
            [strategy],
            bootstrap=broker.bootstrap_servers,
            settings=SETTINGS,
            work=Path(work),
            kafka_version=kafka_version(),
            log=lambda _text: None,
        )
    recorded = run.to_json()
    assert recorded["failures"] == []
    (observed,) = observe(recorded, interval=SETTINGS.produce_interval_s)
    (predicted,) = predict(recorded, model_for(recorded_settings(), DEFAULT_PAUSE_MODEL))
    assert observed.settled
    # m2 held 2 of the 6 partitions; both protocols hand them to the others and move nothing else
    assert (observed.moved, observed.orphaned, observed.revoked) == (0, 2, 0)
    assert (predicted.moved, predicted.orphaned, predicted.revoked) == (0, 2, 0)
    assert predicted.rebalanced
    # the orphaned partitions waited; the others did not stop long enough to count
    assert observed.paused_partitions >= 2
    assert observed.pause > 0.0
    assert predicted.pause_after > 0.0


def recorded_settings() -> dict[str, float]:
    return {
        "heartbeat_ms": SETTINGS.heartbeat_ms,
        "session_ms": SETTINGS.session_ms,
        "broker_heartbeat_ms": SETTINGS.broker_heartbeat_ms,
        "broker_session_ms": SETTINGS.broker_session_ms,
    }
