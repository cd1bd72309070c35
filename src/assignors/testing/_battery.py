"""The whole battery against any assignor: :func:`check_assignor`, and the multi-round checks it uses.

Each check returns a list of readable problems (empty = the invariant holds).
:func:`check_assignor` runs them under hypothesis over generated groups and raises
:class:`InvariantViolationError` with the invariant's name, the problems and the shrunk
group that shows them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Literal, TypeAlias

from assignors._core.interface import ConsumerPartitionAssignor
from assignors._core.metrics import check_assignment
from assignors._core.model import Assignment, Cluster, MemberId, RebalanceProtocol, Subscription, TopicPartition
from assignors.testing._checks import (
    InvariantViolationError,
    balance_problems,
    determinism_problems,
    per_topic_balance_problems,
    validity_problems,
)
from assignors.testing._strategies import Group, groups
from assignors.testing._types import DataObject, Decorators, SearchStrategy, Settings, testing_extra_module

__all__ = [
    "AssignorFactory",
    "check_assignor",
    "cooperative_safety_problems",
    "describe",
    "fixpoint_problems",
    "needless_movement_problems",
    "owning",
    "settle",
]

AssignorFactory: TypeAlias = Callable[[], ConsumerPartitionAssignor]


def owning(subscription: Subscription, partitions: tuple[TopicPartition, ...], generation: int) -> Subscription:
    """``subscription`` as its member sends it after owning ``partitions`` in ``generation``."""
    return Subscription(
        subscription.topics,
        owned_partitions=partitions,
        generation_id=generation,
        rack_id=subscription.rack_id,
        group_instance_id=subscription.group_instance_id,
    )


def settle(
    make: AssignorFactory,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    generation: int,
    *,
    max_rounds: int = 5,
) -> tuple[dict[MemberId, Assignment], int]:
    """Rebalance, feeding each result back as what the members own, until nothing is withheld.

    A round's result is final once every partition of a subscribed topic is assigned (a
    cooperative assignor withholds partitions that change owner until their owner has
    revoked them). Returns the final assignment and the number of rounds.

    Raises:
        InvariantViolationError: still withholding after ``max_rounds`` rounds.
    """
    subs = dict(subscriptions)
    for rounds in range(1, max_rounds + 1):
        result = make().assign(cluster, subs)
        if not any(v.kind == "unassigned" for v in check_assignment(cluster, subs, result)):
            return result, rounds
        subs = {m: owning(s, result[m].partitions, generation + rounds) for m, s in subs.items()}
    msg = f"cooperative convergence: still withholding partitions after {max_rounds} rounds"
    raise InvariantViolationError(msg)


def cooperative_safety_problems(
    subscriptions: Mapping[MemberId, Subscription], result: Mapping[MemberId, Assignment]
) -> list[str]:
    """A partition goes to a new owner only when no other member still owns (claims) it."""
    problems: list[str] = []
    for member in sorted(result):
        for tp in result[member].partitions:
            if tp in subscriptions[member].owned_partitions:
                continue  # not a new owner; a stale double claimer revokes it after this round
            others = sorted(m for m, s in subscriptions.items() if m != member and tp in s.owned_partitions)
            if others:
                problems.append(f"{tp} is given to {member!r} while {others} still own it")
    return problems


def fixpoint_problems(
    make: AssignorFactory,
    cluster: Cluster,
    subscriptions: Mapping[MemberId, Subscription],
    settled: Mapping[MemberId, Assignment],
    generation: int,
) -> list[str]:
    """Stickiness as a fixpoint: owning the settled assignment, the next rebalance changes nothing."""
    again_subs = {m: owning(s, settled[m].partitions, generation) for m, s in subscriptions.items()}
    again = make().assign(cluster, again_subs)
    return [
        f"{member!r} owned {sorted(map(str, settled[member].partitions))} but got "
        f"{sorted(map(str, again[member].partitions))} when nothing changed"
        for member in sorted(settled)
        if set(again[member].partitions) != set(settled[member].partitions)
    ]


def needless_movement_problems(
    survivors: Mapping[MemberId, Subscription], after: Mapping[MemberId, Assignment]
) -> list[str]:
    """After members leave, a partition moves between survivors only towards a lighter one, never both ways.

    ``survivors`` carry what each survivor owned before; ``after`` is the settled result.
    """
    holder = {tp: m for m, a in after.items() for tp in a.partitions}
    moves = {
        (m, holder[tp], tp.topic) for m, s in survivors.items() for tp in s.owned_partitions if holder.get(tp, m) != m
    }
    load = {m: len(a.partitions) for m, a in after.items()}
    problems: list[str] = []
    for giver, receiver, topic in sorted(moves):
        if (receiver, giver, topic) in moves and giver < receiver:
            problems.append(f"partitions of {topic!r} moved both ways between {giver!r} and {receiver!r}")
        if load[giver] < load[receiver] - 1:
            problems.append(f"{giver!r} gave a partition of {topic!r} to {receiver!r} and ended 2+ lighter")
    return problems


def describe(group: Group) -> str:
    """The group as a person reads it: topics with partition counts (and racks), members with what they send."""
    cluster = group.cluster
    lines = ["cluster: " + ", ".join(f"{t}={n}" for t, n in sorted(cluster.partitions_per_topic.items()))]
    racks = {str(tp): sorted(r) for tp, r in sorted(cluster.partition_racks.items())}
    if racks:
        lines.append(f"partition racks: {racks}")
    for member in sorted(group.subscriptions):
        s = group.subscriptions[member]
        extra = []
        if s.owned_partitions:
            extra.append(f"owns {[str(tp) for tp in s.owned_partitions]} (generation {s.generation_id})")
        if s.rack_id is not None:
            extra.append(f"rack {s.rack_id}")
        if s.group_instance_id is not None:
            extra.append(f"instance {s.group_instance_id}")
        lines.append(f"member {member}: topics {list(s.topics)}" + "".join(f"; {e}" for e in extra))
    return "\n  ".join(lines)


def as_factory(assignor: ConsumerPartitionAssignor | AssignorFactory) -> AssignorFactory:
    if isinstance(assignor, type):  # a class: a factory of fresh instances
        return assignor
    if isinstance(assignor, ConsumerPartitionAssignor):
        template = assignor
        return lambda: copy.deepcopy(template)
    return assignor


_SHOWN = 5


def _fail(invariant: str, problems: list[str], group: Group, then: str = "") -> None:
    if problems:
        more = f"\n  ... and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
        listed = "\n  ".join(problems[:_SHOWN]) + more
        msg = f"{invariant} violated:\n  {listed}\nshrunk counterexample:\n  {describe(group)}{then}"
        raise InvariantViolationError(msg)


Balance: TypeAlias = Literal["sticky", "per-topic"] | None


def check_assignor(  # noqa: PLR0913 - the battery's knobs, all keyword-only
    assignor: ConsumerPartitionAssignor | AssignorFactory,
    *,
    balance: Balance = "sticky",
    sticky: bool = False,
    cooperative: bool | None = None,
    max_rounds: int = 4,
    max_examples: int | None = None,
    group_strategy: SearchStrategy | None = None,
    hypothesis_settings: Settings | None = None,
) -> None:
    """Fuzz ``assignor`` against every invariant that applies; raise on the first broken one.

    Runs, on generated groups (members with stale and double claims, mixed subscriptions,
    static members, racks, topics without metadata):

    - validity: every partition of a subscribed topic goes to exactly one subscriber;
    - balance: ``"sticky"`` (sizes within one with identical subscriptions, else no partition
      could move to a subscriber holding two or more fewer) or ``"per-topic"`` (Range's
      guarantee), or None to skip;
    - determinism: fresh instances, and any insertion order of members and topics, give the same result;
    - with ``sticky``: the settled result is a fixpoint, and members leaving move nothing
      between survivors needlessly;
    - with ``cooperative`` (default: the assignor supports COOPERATIVE): no partition goes to
      a new owner while another member still owns it, rounds settle within ``max_rounds``,
      and validity and balance are checked on the settled result.

    Args:
        assignor: an assignor object (each run uses a deep copy) or a factory of fresh ones,
            such as the class.
        max_examples: groups to try (default: the active hypothesis profile's).
        group_strategy: groups to draw (default: :func:`~assignors.testing.groups` with owned
            partitions).
        hypothesis_settings: settings to start from, e.g. ``settings(derandomize=True)`` for a
            reproducible run (default: the active hypothesis profile).

    Raises:
        InvariantViolationError: naming the invariant, the problems, and the shrunk group.
    """
    hypothesis = testing_extra_module("hypothesis")
    given: Decorators = hypothesis.given
    settings: Decorators = hypothesis.settings
    st = testing_extra_module("hypothesis.strategies")

    make = as_factory(assignor)
    if cooperative is None:
        cooperative = RebalanceProtocol.COOPERATIVE in make().supported_protocols
    options = {"max_examples": max_examples} if max_examples is not None else {}
    strategy = group_strategy if group_strategy is not None else groups(owned=True)

    @settings(
        hypothesis_settings,
        suppress_health_check=[hypothesis.HealthCheck.too_slow],
        deadline=None,
        database=None,
        **options,
    )
    @given(group=strategy, data=st.data())
    def battery(group: Group, data: DataObject) -> None:
        _run_battery(make, group, data, balance=balance, sticky=sticky, cooperative=cooperative, max_rounds=max_rounds)

    battery()


def _run_battery(  # noqa: PLR0913 - the battery's options
    make: AssignorFactory,
    group: Group,
    data: DataObject,
    *,
    balance: Balance,
    sticky: bool,
    cooperative: bool,
    max_rounds: int,
) -> None:
    st = testing_extra_module("hypothesis.strategies")

    cluster, subs = group.cluster, group.subscriptions
    fresh = {m: owning(s, (), -1) for m, s in subs.items()}  # the same members, claiming nothing
    if cooperative:
        first = make().assign(cluster, subs)
        _fail("cooperative safety", cooperative_safety_problems(subs, first), group)
        try:
            result, _ = settle(make, cluster, subs, 4, max_rounds=max_rounds)
        except InvariantViolationError:
            _fail("cooperative convergence", [f"partitions still withheld after {max_rounds} rounds"], group)
            raise
    else:
        result = make().assign(cluster, subs)
    _fail("validity", validity_problems(cluster, fresh, result), group)
    if balance == "sticky":
        _fail("balance", balance_problems(fresh, result), group)
    elif balance == "per-topic":
        _fail("per-topic balance", per_topic_balance_problems(fresh, result), group)
    if sticky:
        _fail("stickiness (fixpoint)", fixpoint_problems(make, cluster, subs, result, 20), group)
        leaving = data.draw(st.sets(st.sampled_from(sorted(subs))), label="leaving") if subs else set()
        survivors = {m: owning(s, result[m].partitions, 30) for m, s in subs.items() if m not in leaving}
        if survivors:
            after, _ = settle(make, cluster, survivors, 30, max_rounds=max_rounds)
            problems = needless_movement_problems(survivors, after)
            _fail("stickiness (needless movement)", problems, group, f"\n  then {sorted(leaving)} leave")
    # Last: the shuffle's draws would otherwise stand between the group and the leavers when shrinking.
    other = group.shuffled(data.draw(st.randoms(use_true_random=False)))
    problems = determinism_problems(make, cluster, subs, other.subscriptions, reordered_cluster=other.cluster)
    _fail("determinism", problems, group)
