"""EAGER/COOPERATIVE rebalance handling and a consumer-group simulator.

- :func:`choose_protocol` / :func:`preferred_protocol`: a consumer's protocol from its assignors.
- :func:`is_built_in`: whether an assignor is one of this library's classes (by type, not name).
- :func:`select_assignor`: the coordinator's vote among the members' preferences.
- :func:`revoke_before_join` and :func:`receive_assignment`: the member side of both protocols.
- :func:`validate_cooperative_assignment`: the leader's check of a user's cooperative assignor.
- :func:`run_round` / :func:`run_rounds`: the one JoinGroup/SyncGroup round engine, with
  Kafka's EAGER semantics (members report nothing owned; memory travels in user data).
- :func:`rebalance`: one rebalance of a group with one assignor, round by round (what the
  Spark evaluation replays and ``assignors assign`` shows).
- :class:`GroupSimulator`: a whole group driven by events (:class:`Join`, :class:`Leave`,
  :class:`Crash`, :class:`Restart`, :class:`Subscribe`, :class:`AddPartitions`), with
  Kafka's bytes on the wire and a :class:`Timeline` of every round; :func:`parse_scenario`
  reads the JSON scenarios of ``assignors simulate``.
"""

from assignors._builtin.registry import is_built_in
from assignors._classic.events import AddPartitions, AssignorSpec, Crash, Event, Join, Leave, Restart, Subscribe
from assignors._classic.rebalance import RebalanceResult, rebalance
from assignors._classic.rounds import Round, RoundMember, run_round, run_rounds
from assignors._classic.rules import (
    BROKER_TIE_ORDER,
    MemberUpdate,
    choose_protocol,
    preferred_protocol,
    receive_assignment,
    revoke_before_join,
    select_assignor,
    validate_cooperative_assignment,
)
from assignors._classic.timeline import Note, SimulatedRebalance, SimulatedRound, Timeline, timeline_json
from assignors._groups.scenario import Scenario, parse_scenario
from assignors._groups.simulator import GroupSimulator

__all__ = [
    "BROKER_TIE_ORDER",
    "AddPartitions",
    "AssignorSpec",
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
    "RoundMember",
    "Scenario",
    "SimulatedRebalance",
    "SimulatedRound",
    "Subscribe",
    "Timeline",
    "choose_protocol",
    "is_built_in",
    "parse_scenario",
    "preferred_protocol",
    "rebalance",
    "receive_assignment",
    "revoke_before_join",
    "run_round",
    "run_rounds",
    "select_assignor",
    "timeline_json",
    "validate_cooperative_assignment",
]
