"""KIP-848, the consumer group protocol (``group.protocol=consumer``): the broker assigns.

- :class:`UniformAssignor` (``"uniform"``, the default) and :class:`RangeAssignor`
  (``"range"``): the built-in server-side assignors, as the broker of ``kafka_version``
  (default :data:`KAFKA_VERSION`) runs them. Their input's ``owned_partitions`` is each
  member's previous *target* assignment. :class:`EvenUniformAssignor` (``"uniform-even"``)
  is Kafka's uniform with mixed subscriptions evened out further: no broker runs it.
  ``uniform`` goes through the members as the coordinator's ``HashMap`` of member ids does
  (:func:`coordinator_member_order`; in a group's history, put in the order of the coordinator's own table of
  members, :class:`CoordinatorTable`) and, given :attr:`assignors.Cluster.topic_ids`, through the topics as its
  ``HashSet`` of topic ids does: with the broker's ids it is the broker's target.
- :func:`next_member_state` and :func:`check_member_epoch`: reconciliation and fencing
  (Kafka's ``CurrentAssignmentBuilder``), over :class:`MemberAssignmentState` records;
  :func:`static_leave` (epoch -2, the target kept) and :func:`static_rejoin` (a new member
  id inherits it).
- :func:`replay_step`: one snapshot change of a group for the evaluation (the new target,
  ``revoked``, ``moved`` and the heartbeats until every member is stable); the strategies
  ``"uniform"`` and ``"consumer-range"`` (:data:`STRATEGIES`); :func:`rebalance_target` is
  the same step with :func:`assignors.rebalance.rebalance`'s arguments, as the Spark replay calls it.
- :class:`ConsumerGroupSimulator`: a heartbeat-level model of a whole group, driven by
  :mod:`assignors.rebalance`'s events, with the online upgrade from a classic group.
"""

from assignors.consumer_group._common import CONSUMER_PROTOCOL, KAFKA_VERSION, ServerAssignor
from assignors.consumer_group._heterogeneous import MAX_ITERATION_COUNT
from assignors.consumer_group._java_order import CoordinatorTable, coordinator_member_order
from assignors.consumer_group._range import RangeAssignor
from assignors.consumer_group._reconcile import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    FencedMemberEpochError,
    MemberAssignmentState,
    MemberState,
    check_member_epoch,
    next_member_state,
    static_leave,
    static_rejoin,
)
from assignors.consumer_group._replay import (
    STRATEGIES,
    ReplayStep,
    TargetRebalance,
    rebalance_target,
    replay_step,
    server_assignor,
    server_strategy,
)
from assignors.consumer_group._simulator import ConsumerGroupSimulator
from assignors.consumer_group._timeline import ConsumerTimeline, Instant, remote_assignor
from assignors.consumer_group._uniform import (
    EVEN_UNIFORM_ASSIGNOR_NAME,
    UNIFORM_ASSIGNOR_NAME,
    EvenUniformAssignor,
    UniformAssignor,
)

__all__ = [
    "CONSUMER_PROTOCOL",
    "EVEN_UNIFORM_ASSIGNOR_NAME",
    "KAFKA_VERSION",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "MAX_ITERATION_COUNT",
    "STRATEGIES",
    "UNIFORM_ASSIGNOR_NAME",
    "ConsumerGroupSimulator",
    "ConsumerTimeline",
    "CoordinatorTable",
    "EvenUniformAssignor",
    "FencedMemberEpochError",
    "Instant",
    "MemberAssignmentState",
    "MemberState",
    "RangeAssignor",
    "ReplayStep",
    "ServerAssignor",
    "TargetRebalance",
    "UniformAssignor",
    "check_member_epoch",
    "coordinator_member_order",
    "next_member_state",
    "rebalance_target",
    "remote_assignor",
    "replay_step",
    "server_assignor",
    "server_strategy",
    "static_leave",
    "static_rejoin",
]
