"""An exact oracle for weighted-sticky on small groups: two MILPs (HiGHS through ``scipy.optimize.milp``) per group.

1. **The optimal weighted balance**: the least possible heaviest load of any valid assignment (minimize ``z``
   subject to each partition going to one subscriber and every member's load ``<= z``). weighted-sticky does not
   promise it (it is NP-hard: bin packing); the figures say how far from it the result is.
2. **The minimal movement under the guarantee**: the fewest partitions taken from their owners by any valid
   assignment that satisfies condition C (for every member ``u``, partition ``p`` of positive weight that ``u``
   holds and subscriber ``v`` of ``p``'s topic: ``L_u - L_v <= w_p + tol``; linear with a big-M on ``x[p, u]``).

``python tests/weighted/oracle.py [N]`` prints the figures for the first N groups of the corpus (default 500).
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from assignors import Cluster, RebalanceProtocol, TopicPartition, WeightedStickyAssignor
from assignors._classic.rounds import RoundMember, run_rounds

TP = TopicPartition
WEIGHTS = (0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 20.0, 50.0)


@dataclass(frozen=True)
class Case:
    """One corpus group: cluster, subscriptions, weights, tolerance, and what each member owned before."""

    number: int
    cluster: Cluster
    topics: dict[str, tuple[str, ...]]
    weights: dict[TP, float]
    tolerance: float
    owned: dict[str, tuple[TP, ...]]

    def partitions(self) -> list[TP]:
        """The partitions of the subscribed topics."""
        subscribed = {t for ts in self.topics.values() for t in ts}
        return [tp for t in sorted(subscribed) for tp in self.cluster.partitions(t)]

    def subscribers(self, tp: TP) -> list[str]:
        return [m for m in sorted(self.topics) if tp.topic in self.topics[m]]

    def absolute_tolerance(self) -> float:
        subscribed = {t for ts in self.topics.values() for t in ts}
        eligible = [m for m, ts in self.topics.items() if any(self.cluster.partition_count(t) for t in ts)]
        total = math.fsum(w for tp, w in self.weights.items() if tp.topic in subscribed)
        return self.tolerance * total / len(eligible) if eligible else 0.0


def corpus(count: int) -> list[Case]:
    """``count`` fixed groups: 2-5 members, 1-3 topics of 1-7 partitions, identical or mixed subscriptions,
    skewed weights, a previous owner for most partitions (members joining and leaving), tolerance 0 or 0.1."""
    cases = []
    for number in range(count):
        rng = random.Random(number)  # noqa: S311 - seeded: the same corpus every run
        topics = {f"t{i}": rng.randint(1, 7) for i in range(rng.randint(1, 3))}
        names = sorted(topics)
        members = [f"c{i}" for i in range(rng.randint(2, 5))]
        identical = rng.random() < 0.5
        subscriptions = {
            m: tuple(names) if identical else tuple(sorted(rng.sample(names, rng.randint(1, len(names)))))
            for m in members
        }
        cluster = Cluster(topics)
        weights = {tp: rng.choice(WEIGHTS) for t in names for tp in cluster.partitions(t)}
        before = [*members, "gone"]  # a member that has left owned some
        owned: dict[str, list[TP]] = {m: [] for m in members}
        for tp in weights:
            owner = rng.choice([*before, None])
            if owner in owned and tp.topic in subscriptions[owner]:
                owned[owner].append(tp)
        if rng.random() < 0.3:
            owned[members[-1]] = []
        case = Case(
            number, cluster, subscriptions, weights, rng.choice((0.0, 0.1)), {m: tuple(p) for m, p in owned.items()}
        )
        cases.append(case)
    return cases


def settle(case: Case) -> dict[str, tuple[TP, ...]]:
    """weighted-sticky's settled assignment under COOPERATIVE, every member with its own instance."""
    members = []
    for m in sorted(case.topics):
        instance = WeightedStickyAssignor(case.weights, tolerance=case.tolerance)
        members.append(
            RoundMember(
                member_id=m,
                topics=case.topics[m],
                assignors={instance.name: instance},
                protocol=RebalanceProtocol.COOPERATIVE,
                owned=case.owned[m],
                generation=1,
            )
        )
    rounds = run_rounds(members, case.cluster, 1)
    return {m: a.partitions for m, a in rounds[-1].assignment.items()}


def _variables(case: Case) -> list[tuple[TP, str]]:
    return [(tp, m) for tp in case.partitions() for m in case.subscribers(tp)]


def optimal_max_load(case: Case) -> float:
    """The least heaviest load over every valid assignment (MILP 1)."""
    pairs = _variables(case)
    members = sorted(case.topics)
    n = len(pairs) + 1  # x[p, m] ..., z
    cost = np.zeros(n)
    cost[-1] = 1.0
    rows: list[np.ndarray[Any, Any]] = []
    lower: list[float] = []
    upper: list[float] = []
    for tp in case.partitions():
        row = np.zeros(n)
        for k, (p, _) in enumerate(pairs):
            if p == tp:
                row[k] = 1
        if row.any():
            rows.append(row)
            lower.append(1)
            upper.append(1)
    for m in members:
        row = np.zeros(n)
        for k, (p, owner) in enumerate(pairs):
            if owner == m:
                row[k] = case.weights[p]
        row[-1] = -1
        rows.append(row)
        lower.append(-np.inf)
        upper.append(0)
    integrality = np.ones(n)
    integrality[-1] = 0
    bounds = Bounds(np.zeros(n), np.concatenate([np.ones(n - 1), [np.inf]]))
    result = milp(cost, constraints=LinearConstraint(np.array(rows), lower, upper), integrality=integrality,
                  bounds=bounds, options={"mip_rel_gap": 0})  # fmt: skip
    if not result.success:  # pragma: no cover - every corpus group has a valid assignment
        msg = f"case {case.number}: {result.message}"
        raise RuntimeError(msg)
    return float(result.x[-1])


def _condition_c_pairs(case: Case) -> list[tuple[TP, str, str]]:
    """Every (p, u, v) condition C constrains: p of positive weight, u and v two subscribers of its topic."""
    return [
        (tp, u, v)
        for tp in case.partitions()
        if case.weights[tp] > 0
        for u in case.subscribers(tp)
        for v in case.subscribers(tp)
        if u != v
    ]


def _condition_c_rows(
    case: Case, n: int, index: Mapping[tuple[TP, str], int], load_at: Mapping[str, int]
) -> list[np.ndarray[Any, Any]]:
    """``L_u - L_v + big x[p, u]``, one row per (p, u, v): at most ``w_p + tol + big`` (the bounds below)."""
    big = _big(case)
    rows = []
    for tp, u, v in _condition_c_pairs(case):
        row = np.zeros(n)
        row[load_at[u]] = 1
        row[load_at[v]] = -1
        row[index[tp, u]] = big
        rows.append(row)
    return rows


def _condition_c_bounds(case: Case) -> list[float]:
    tol, big = case.absolute_tolerance(), _big(case)
    return [case.weights[tp] + tol + big + 1e-9 for tp, _, _ in _condition_c_pairs(case)]


def _big(case: Case) -> float:
    return math.fsum(case.weights.values()) + case.absolute_tolerance() + 1


def fewest_moves(case: Case) -> int:
    """The fewest partitions taken from their owners by a valid assignment satisfying condition C (MILP 2)."""
    pairs = _variables(case)
    members = sorted(case.topics)
    index = {pair: k for k, pair in enumerate(pairs)}
    load_at = {m: len(pairs) + i for i, m in enumerate(members)}
    n = len(pairs) + len(members)
    owner = {tp: m for m, parts in case.owned.items() for tp in parts}
    cost = np.zeros(n)
    for tp, m in owner.items():
        if (tp, m) in index:
            cost[index[tp, m]] = -1.0  # maximize the kept ones
    rows: list[np.ndarray[Any, Any]] = []
    lower: list[float] = []
    upper: list[float] = []
    for tp in case.partitions():
        row = np.zeros(n)
        for m in case.subscribers(tp):
            row[index[tp, m]] = 1
        rows.append(row)
        lower.append(1)
        upper.append(1)
    for m in members:
        row = np.zeros(n)
        for (p, holder), k in index.items():
            if holder == m:
                row[k] = case.weights[p]
        row[load_at[m]] = -1
        rows.append(row)
        lower.append(0)
        upper.append(0)
    rows += _condition_c_rows(case, n, index, load_at)
    lower += [-np.inf] * (len(rows) - len(lower))
    upper += _condition_c_bounds(case)
    integrality = np.concatenate([np.ones(len(pairs)), np.zeros(len(members))])
    bounds = Bounds(np.zeros(n), np.concatenate([np.ones(len(pairs)), np.full(len(members), np.inf)]))
    result = milp(cost, constraints=LinearConstraint(np.array(rows), lower, upper), integrality=integrality,
                  bounds=bounds, options={"mip_rel_gap": 0})  # fmt: skip
    if not result.success:  # pragma: no cover - the LPT order satisfies C, so one always exists
        msg = f"case {case.number}: {result.message}"
        raise RuntimeError(msg)
    kept = sum(1 for tp, m in owner.items() if (tp, m) in index and result.x[index[tp, m]] > 0.5)
    return sum(1 for tp, m in owner.items() if (tp, m) in index) - kept


def moves(case: Case, result: Mapping[str, tuple[TP, ...]]) -> int:
    """Partitions taken from an owner still in the group that subscribes to their topic."""
    holder = {tp: m for m, parts in result.items() for tp in parts}
    return sum(1 for m, parts in case.owned.items() for tp in parts if holder.get(tp) != m)


@dataclass(frozen=True)
class Figures:
    groups: int
    exact_balance: int  # our heaviest load equals the optimum
    worst_ratio: float  # max over groups of our heaviest / the optimum (groups with a positive optimum)
    mean_ratio: float
    minimal_moves: int  # groups moving exactly the fewest
    extra_moves: int  # total partitions moved beyond the fewest, over all groups
    worst_extra: int


def figures(count: int) -> Figures:
    """Run the corpus's first ``count`` groups against both MILPs."""
    exact = minimal = extra = worst_extra = 0
    ratios: list[float] = []
    cases = corpus(count)
    for case in cases:
        result = settle(case)
        heaviest = max(math.fsum(case.weights[tp] for tp in parts) for parts in result.values())
        best = optimal_max_load(case)
        if heaviest <= best + 1e-9:
            exact += 1
        if best > 0:
            ratios.append(heaviest / best)
        ours, fewest = moves(case, result), fewest_moves(case)
        if ours <= fewest:
            minimal += 1
        extra += max(0, ours - fewest)
        worst_extra = max(worst_extra, ours - fewest)
    return Figures(len(cases), exact, round(max(ratios), 4), round(math.fsum(ratios) / len(ratios), 4), minimal,
                   extra, worst_extra)  # fmt: skip


if __name__ == "__main__":
    print(figures(int(sys.argv[1]) if len(sys.argv) > 1 else 500))  # noqa: T201 - the script's output
