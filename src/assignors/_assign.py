"""``assignors assign``: one snapshot, one strategy, as the group ends up; a report rendered as text or JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assignors._builtin.registry import get_assignor
from assignors._classic.rebalance import rebalance
from assignors._classic.rules import preferred_protocol
from assignors._core.metrics import Balance, Movement, balance, movement, owners
from assignors._core.model import RebalanceProtocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._core.model import Assignment, MemberId
    from assignors._core.snapshot import Snapshot

__all__ = ["StrategyReport", "assign_snapshot"]


@dataclass(frozen=True, slots=True)
class StrategyReport:
    """One strategy's result for a snapshot.

    Attributes:
        strategy: the assignor's name.
        protocol: the protocol it runs under (its preferred one).
        rounds: rounds until the group settles (1, or more under COOPERATIVE).
        assignment: where the group settles, per member.
        balance: the settled assignment's balance.
        movement: the settled assignment against what the members said they owned.
        first_round: the first round's assignment when more rounds followed, else None.
        withheld: partitions the first round withheld because they change owner.
    """

    strategy: str
    protocol: RebalanceProtocol
    rounds: int
    assignment: dict[MemberId, Assignment]
    balance: Balance
    movement: Movement
    first_round: dict[MemberId, Assignment] | None
    withheld: int

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (partitions as ``"topic-partition"`` strings, sorted)."""
        b, m = self.balance, self.movement
        data: dict[str, Any] = {
            "strategy": self.strategy,
            "protocol": self.protocol.name,
            "rounds": self.rounds,
            "assignment": _names(self.assignment),
            "balance": {
                "min_load": b.min_load,
                "max_load": b.max_load,
                "spread": b.spread,
                "stddev": round(b.stddev, 4),
            },
            "movement": {
                "moved": m.moved,
                "retained": m.retained,
                "released": m.released,
                "revoked": m.revoked(self.protocol),
            },
        }
        if self.first_round is not None:
            data["first_round"] = {"assignment": _names(self.first_round), "withheld": self.withheld}
        return data

    def render(self) -> str:
        """The report as text: a heading, a line per member (partitions sorted), balance and movement."""
        settles = "" if self.rounds == 1 else f", settles in {self.rounds} rounds"
        lines = [f"== {self.strategy} ({self.protocol.name}{settles})"]
        width = max((len(member) for member in self.assignment), default=0)
        for member, assigned in self.assignment.items():
            names = " ".join(str(tp) for tp in sorted(assigned.partitions)) or "-"
            lines.append(f"  {member:<{width}}  {len(assigned.partitions):>4}  {names}")
        b, m = self.balance, self.movement
        revoked = m.revoked(self.protocol)
        lines.append(
            f"  balance: min {b.min_load}, max {b.max_load}, spread {b.spread}, stddev {round(b.stddev, 4):.3f}"
            f"  |  vs owned: kept {m.retained}, moved {m.moved}, released {m.released}, revoked {revoked}"
        )
        if self.first_round is not None:
            lines.append(
                f"  round 1 withheld the {self.withheld} partition(s) that change owner;"
                " their owners revoked them and the group rejoined"
            )
        return "\n".join(lines)


def _names(assignment: Mapping[str, Assignment]) -> dict[str, list[str]]:
    return {member: [str(tp) for tp in sorted(a.partitions)] for member, a in assignment.items()}


def assign_snapshot(snapshot: Snapshot, strategy: str) -> StrategyReport:
    """One strategy's result for the snapshot, as the group ends up.

    The first round gets the snapshot's subscriptions exactly as given. Under COOPERATIVE, a
    partition that changes owner is withheld in that round, so the members' follow-up rounds
    run too (through :func:`assignors.rebalance.rebalance`) and the report shows where the
    group settles, how many rounds it took and what the first round withheld.
    """
    assignor = get_assignor(strategy)
    protocol = preferred_protocol(assignor)
    cluster, subscriptions = snapshot.cluster, snapshot.subscriptions
    previous = {member: s.owned_partitions for member, s in subscriptions.items()}
    first = assignor.assign(cluster, subscriptions)
    final, rounds, withheld = first, 1, 0
    if protocol is RebalanceProtocol.COOPERATIVE:
        now = owners(first)
        # Partitions, not claims: one partition two members claim is withheld once.
        withheld = len({tp for member, owned in previous.items() for tp in owned if now.get(tp) != member})
        if withheld:
            generation = max(max((s.generation_id for s in subscriptions.values()), default=0), 0) + 1
            holding = {member: a.partitions for member, a in first.items()}
            follow_up = rebalance(assignor, cluster, subscriptions, holding, generation=generation, protocol=protocol)
            final, rounds = follow_up.assignment, 1 + len(follow_up.rounds)
    return StrategyReport(
        strategy=strategy,
        protocol=protocol,
        rounds=rounds,
        assignment=final,
        balance=balance(final),
        movement=movement(previous, final),
        first_round=first if rounds > 1 else None,
        withheld=withheld,
    )
