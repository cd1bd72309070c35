"""Property-based testing for any assignor (its strategies, state machines and battery need the ``testing`` extra:
Hypothesis; the package imports without it).

Strategies that draw clusters and whole consumer groups, and invariant checks that
return readable reports, usable against any object that satisfies
:class:`assignors.ConsumerPartitionAssignor`.
"""

from assignors.testing._battery import (
    check_assignor,
    cooperative_safety_problems,
    describe,
    fixpoint_problems,
    needless_movement_problems,
    owning,
    settle,
)
from assignors.testing._checks import (
    InvariantViolationError,
    balance_problems,
    determinism_problems,
    per_topic_balance_problems,
    rack_aware,
    rack_locality_problems,
    simulation_problems,
    validity_problems,
)
from assignors.testing._consumer import consumer_group_problems, consumer_group_state_machine
from assignors.testing._groups import MemberProcess, MemberSpec, Observation, settle_group
from assignors.testing._kafka import DEFAULT_KAFKA_VERSION, KafkaBroker, KafkaBrokerError, kafka_classpath
from assignors.testing._machine import group_state_machine
from assignors.testing._optimality import (
    StickyScore,
    current_owners,
    load_squares,
    optimality_problems,
    sticky_score,
    topic_spread,
    topic_spread_problems,
)
from assignors.testing._strategies import (
    Group,
    assignments,
    clusters,
    event_sequences,
    groups,
    subscriptions,
    topic_names,
)

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "Group",
    "InvariantViolationError",
    "KafkaBroker",
    "KafkaBrokerError",
    "MemberProcess",
    "MemberSpec",
    "Observation",
    "StickyScore",
    "assignments",
    "balance_problems",
    "check_assignor",
    "clusters",
    "consumer_group_problems",
    "consumer_group_state_machine",
    "cooperative_safety_problems",
    "current_owners",
    "describe",
    "determinism_problems",
    "event_sequences",
    "fixpoint_problems",
    "group_state_machine",
    "groups",
    "kafka_classpath",
    "load_squares",
    "needless_movement_problems",
    "optimality_problems",
    "owning",
    "per_topic_balance_problems",
    "rack_aware",
    "rack_locality_problems",
    "settle",
    "settle_group",
    "simulation_problems",
    "sticky_score",
    "subscriptions",
    "topic_names",
    "topic_spread",
    "topic_spread_problems",
    "validity_problems",
]
