"""EAGER/COOPERATIVE rebalance handling and a consumer-group simulator.

- :func:`choose_protocol`: a consumer's protocol from its configured assignors.
- :func:`select_assignor`: the coordinator's vote among the members' preferences.
- :func:`revoke_before_join` and :func:`receive_assignment`: the member side of both protocols.
- :func:`validate_cooperative_assignment`: the leader's check of a user's cooperative assignor.
- :func:`rebalance`: one rebalance of a group with one assignor, round by round (what the
  Spark evaluation replays).
- :class:`GroupSimulator`: a whole group driven by events (:class:`Join`, :class:`Leave`,
  :class:`Crash`, :class:`Restart`, :class:`Subscribe`, :class:`AddPartitions`), with
  Kafka's bytes on the wire and a :class:`Timeline` of every round; :func:`parse_scenario`
  reads the JSON scenarios of ``assignors simulate``.
"""

from assignors._group import (
    AddPartitions,
    Crash,
    Event,
    GroupSimulator,
    Join,
    Leave,
    Note,
    Restart,
    SimulatedRebalance,
    SimulatedRound,
    Subscribe,
    Timeline,
)
from assignors._rebalance import (
    BROKER_TIE_ORDER,
    MemberUpdate,
    RebalanceResult,
    Round,
    choose_protocol,
    rebalance,
    receive_assignment,
    revoke_before_join,
    select_assignor,
    validate_cooperative_assignment,
)
from assignors._scenario import Scenario, parse_scenario, timeline_json

__all__ = [
    "BROKER_TIE_ORDER",
    "AddPartitions",
    "Crash",
    "Event",
    "GroupSimulator",
    "Join",
    "Leave",
    "MemberUpdate",
    "Note",
    "RebalanceResult",
    "Restart",
    "Round",
    "Scenario",
    "SimulatedRebalance",
    "SimulatedRound",
    "Subscribe",
    "Timeline",
    "choose_protocol",
    "parse_scenario",
    "rebalance",
    "receive_assignment",
    "revoke_before_join",
    "select_assignor",
    "timeline_json",
    "validate_cooperative_assignment",
]
