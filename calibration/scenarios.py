"""The scripted membership histories and the strategies they are played with (``make calibrate``).

A scenario is a set-up (members started before anything is measured) and steps; each step is a list of actions
done at once, after which the group must settle (every partition held once, no listener call for a while). The
step is what one snapshot of the membership table is to the evaluation: the replay sees the group before and
after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assignors.metrics import CALIBRATION_SETTINGS

__all__ = ["SCENARIOS", "SETTINGS", "STRATEGIES", "Action", "Scenario", "Settings", "Strategy"]


@dataclass(frozen=True)
class Strategy:
    """One way to run a group: the client, its protocol and assignor, and the strategy the evaluation replays."""

    label: str
    product: str
    """The evaluation's strategy name that predicts this group."""
    client: str
    """``java`` (Kafka's own KafkaConsumer), ``kafka-python`` or ``aiokafka`` (with this project's assignors)."""
    protocol: str
    """``classic`` or ``consumer`` (KIP-848)."""
    setting: str
    """The Java member's strategy or remote assignor, or our assignor's name for the Python clients."""
    implementation: str
    """Whose assignor the group runs."""


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("java range", "range", "java", "classic", "range", "Kafka's RangeAssignor"),
    Strategy("java roundrobin", "roundrobin", "java", "classic", "roundrobin", "Kafka's RoundRobinAssignor"),
    Strategy("java sticky", "sticky", "java", "classic", "sticky", "Kafka's StickyAssignor"),
    Strategy(
        "java cooperative-sticky",
        "cooperative-sticky",
        "java",
        "classic",
        "cooperative-sticky",
        "Kafka's CooperativeStickyAssignor",
    ),
    Strategy("java consumer uniform", "uniform", "java", "consumer", "uniform", "the broker's UniformAssignor"),
    Strategy("java consumer range", "consumer-range", "java", "consumer", "range", "the broker's RangeAssignor"),
    Strategy(
        "kafka-python cooperative-sticky",
        "cooperative-sticky",
        "kafka-python",
        "classic",
        "cooperative-sticky",
        "ours (assignors.kafka_python)",
    ),
    Strategy("aiokafka sticky", "sticky", "aiokafka", "classic", "sticky", "ours (assignors.aiokafka)"),
)


def _ms(field: str) -> int:
    """One interval of the calibration, in ms: ``assignors.metrics.CALIBRATION_SETTINGS`` holds them (the measured
    factors of ``PauseModel`` are in units of these)."""
    return round(CALIBRATION_SETTINGS[field] * 1000)


@dataclass(frozen=True)
class Settings:
    """The timing settings of a calibration run: every group and the broker run with these."""

    session_ms: int = _ms("session_seconds")
    """Classic ``session.timeout.ms`` (Kafka's default: ``KAFKA_DEFAULT_SETTINGS``)."""
    heartbeat_ms: int = _ms("heartbeat_seconds")
    """Classic ``heartbeat.interval.ms``."""
    metadata_ms: int = 5_000
    """The clients' ``metadata.max.age.ms`` (default 300,000): when a classic leader sees added partitions."""
    broker_heartbeat_ms: int = _ms("consumer_heartbeat_seconds")
    """The broker's ``group.consumer.heartbeat.interval.ms`` (KIP-848)."""
    broker_session_ms: int = _ms("consumer_session_seconds")
    """The broker's ``group.consumer.session.timeout.ms`` (KIP-848)."""
    initial_delay_ms: int = 3_000
    """The broker's ``group.initial.rebalance.delay.ms`` (default 3,000): only an empty group's first join waits it."""
    assignment_interval_ms: int = 0
    """The broker's ``group.consumer.assignment.interval.ms`` (Kafka 4.3+; default 1,000): 0 computes a group's new
    target at the heartbeat that changed it, as the replay does (one target per membership change); the default
    batches the changes of one second into one target, which the pause model does not price yet."""
    produce_interval_s: float = 0.1
    """A record to every partition this often."""
    partitions: tuple[tuple[str, int], ...] = (("a", 16), ("b", 8))
    """Each group's topics (suffixes of its own topic names) and their partitions."""
    quiet_s: float = 2.0
    """A group is settled when every partition is held once and no listener call came for this long."""
    settle_timeout_s: float = 75.0

    def broker_config(self) -> dict[str, str]:
        return {
            "group.initial.rebalance.delay.ms": str(self.initial_delay_ms),
            "group.consumer.heartbeat.interval.ms": str(self.broker_heartbeat_ms),
            "group.consumer.session.timeout.ms": str(self.broker_session_ms),
            "group.consumer.assignment.interval.ms": str(self.assignment_interval_ms),
            "num.partitions": "1",
            # Kafka's default (the test broker fsyncs every record: its stalls would be every partition's pauses)
            "log.flush.interval.messages": str(2**63 - 1),
        }


SETTINGS = Settings()

Action = tuple[str, ...]
"""``("start", name, topics[, instance[, "solo"]])``, ``("stop", name)``, ``("crash", name)``,
``("subscribe", name, topics)``, ``("grow", topic, count)``, ``("sleep", seconds)``; topics comma-separated
suffixes (``a,b``)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    setup: tuple[Action, ...]
    steps: tuple[tuple[Action, ...], ...]
    notes: str = ""
    tags: tuple[str, ...] = field(default=())


def _base(count: int, topics: str = "a,b", *, static: bool = False, solo: tuple[str, ...] = ()) -> tuple[Action, ...]:
    found: list[Action] = []
    for i in range(count):
        name = f"m{i}"
        action: tuple[str, ...] = ("start", name, topics, f"s{i}" if static else "")
        if name in solo:
            action = (*action, "solo")
        found.append(action)
    return tuple(found)


MEMBERS = 6
REPEATS = 3
"""How many times a scenario of one kind of event plays its event (one step each): a single event's pause is a draw
from a wide distribution (the members learn of a rebalance on their own heartbeats, from together to a heartbeat
apart; an orphan waits from the departure to the next heartbeat's rejoin), so a row sums several draws."""

SPACED_QUIET_S = (3, 6, 9)
"""The ``spaced`` scenario's seconds of quiet before each join (the other scenarios' steps follow each other by the
settle's quiet, 3-5 s from one rebalance to the next; the crash's 13-14 s)."""

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "join",
        f"{MEMBERS} members join one by one",
        (),
        tuple(((("start", f"m{i}", "a,b", ""),)) for i in range(MEMBERS)),
    ),
    Scenario(
        "spaced",
        f"3 members join {MEMBERS} after rising quiet: 3, 6, then 9 s since the last rebalance settled",
        _base(MEMBERS),
        tuple(((("sleep", str(quiet)), ("start", f"n{i}", "a,b", ""))) for i, quiet in enumerate(SPACED_QUIET_S)),
        notes="the other scenarios' events follow each other within 3-5 s, while a production group's follow minutes "
        "apart: right after a rebalance the classic members heartbeat in step and learn of the next one together; "
        "this scenario measures how long that lasts (the survivors' spread of learning and their wait, against the "
        "seconds since the rebalance before)",
    ),
    Scenario(
        "leave",
        f"{REPEATS} of {MEMBERS + REPEATS} members leave one by one (LeaveGroup)",
        _base(MEMBERS + REPEATS),
        tuple(((("stop", f"m{MEMBERS + REPEATS - 1 - i}"),)) for i in range(REPEATS)),
    ),
    Scenario(
        "crash",
        f"2 of {MEMBERS + 2} members crash one by one (SIGKILL; each session times out)",
        _base(MEMBERS + 2, solo=(f"m{MEMBERS}", f"m{MEMBERS + 1}")),
        ((("crash", f"m{MEMBERS + 1}"),), (("crash", f"m{MEMBERS}"),)),
    ),
    Scenario(
        "rolling",
        "rolling restart of 6 dynamic members: each stops, then its replacement starts",
        _base(MEMBERS),
        tuple(step for i in range(MEMBERS) for step in (((("stop", f"m{i}"),)), ((("start", f"r{i}", "a,b", ""),)))),
    ),
    Scenario(
        "static",
        "3 of 6 static members restart one by one within the session timeout (2 s down)",
        _base(MEMBERS, static=True),
        tuple(((("stop", f"m{i}"), ("sleep", "2"), ("start", f"m{i}", "a,b", f"s{i}"))) for i in range(3)),
        notes="a static member that comes back within the session timeout keeps its identity: no membership "
        "change and no rebalance; its partitions wait while it is down, priced by `restart_pause` for the seconds "
        "from its stop to its new start (the run's; a deployment knows its own) plus the client's measured rejoin",
    ),
    Scenario(
        "grow",
        "topic a grows three times by 4 partitions, from 16 to 28",
        _base(MEMBERS),
        tuple(((("grow", "a", str(16 + 4 * (i + 1))),)) for i in range(REPEATS)),
        notes="only the leader watches the metadata it assigned with (Kafka's `ConsumerCoordinator`): it rejoins at "
        "once, the others on their next heartbeat; the evaluation prices an average member's share as the leader's "
        "(`assignors.metrics.leader_share`): under EAGER it revokes them, under COOPERATIVE a client that stops "
        "fetching while it joins (kafka-python: its leader's kept partitions waited 1.14-1.28 s in the six steps "
        "of 2026-11-30's two runs, the others' fetch gaps 0.17-0.32 s) keeps them waiting",
    ),
    Scenario(
        "subscribe",
        "6 members subscribed to a add topic b in three steps: 3 of them at once, then 2, then the last",
        _base(MEMBERS, topics="a"),
        tuple(tuple(("subscribe", f"m{i}", "a,b") for i in chunk) for chunk in ((0, 1, 2), (3, 4), (5,))),
        notes="the members whose subscription changed rejoin at once, the others when their next heartbeat tells "
        "them (one rebalance: the changes land together); under EAGER the changed members' partitions wait, like a "
        "leaver's, for the others (`rebalance_pause(..., rejoined=...)`), the others' only for the rejoin; under "
        "COOPERATIVE a client that stops fetching while it joins (kafka-python) keeps what the changed members keep "
        "waiting for the others' heartbeat (`cooperative_kept_heartbeats`), Kafka's Java consumer goes on fetching it",
    ),
    Scenario(
        "wave",
        "two deploy waves: 3 of 6 members replaced at once, then the other 3",
        _base(MEMBERS),
        tuple(
            (*(("stop", f"m{i}") for i in half), *(("start", f"n{i}", "a,b", "") for i in half))
            for half in ((3, 4, 5), (0, 1, 2))
        ),
        notes="the membership table has one snapshot for the wave, replayed as one rebalance; the broker often sees "
        "the leaves first (a LeaveGroup is sent at close) and the joins after the new members' start-up, so it runs "
        "two or three, and in some runs one: replayed as the leaves then the joins (`predict(..., sequence=True)`) "
        "it scored 38 rows within 25% instead of 37 and matched moved and revoked in 2 fewer rows",
    ),
)
