"""Negative cycles of a weighted directed graph (Bellman-Ford): the search of the sticky exchange phase.

:mod:`assignors._builtin.sticky.exchange` builds the residual graph of an assignment and cancels the
cycles found here until none is left. A graph is its node count and its arcs; an arc is ``(tail, head,
weight, payload)`` (the payload, the exchange's move, is not read here); a cycle is the indices of its
arcs in order.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Arc", "negative_cycle"]

Arc = tuple[int, int, int, object]
"""Tail node, head node, weight and a payload the search does not read."""


def negative_cycle(count: int, arcs: Sequence[Arc]) -> list[int] | None:
    """The arcs of a negative cycle, or None: Bellman-Ford from every node at once, queue-driven.

    A node whose shortest path so far has ``count`` arcs lies after a negative cycle of
    the predecessor graph; walking back ``count`` steps lands on it.
    """
    out: list[list[int]] = [[] for _ in range(count)]
    for index, arc in enumerate(arcs):
        out[arc[0]].append(index)
    distance = [0] * count
    length = [0] * count
    via = [-1] * count
    queued = [True] * count
    queue = deque(range(count))
    while queue:
        tail = queue.popleft()
        queued[tail] = False
        base = distance[tail]
        for index in out[tail]:
            head, weight = arcs[index][1], arcs[index][2]
            if base + weight < distance[head]:
                distance[head] = base + weight
                via[head] = index
                length[head] = length[tail] + 1
                if length[head] >= count:
                    return _cycle_through(head, count, arcs, via) or _bellman_ford_cycle(count, arcs)
                if not queued[head]:
                    queued[head] = True
                    queue.append(head)
    return None


def _bellman_ford_cycle(count: int, arcs: Sequence[Arc]) -> list[int] | None:
    """The plain Bellman-Ford search for a negative cycle (the fallback of :func:`negative_cycle`)."""
    distance = [0] * count
    via = [-1] * count
    last = -1
    for _ in range(count):
        last = -1
        for index, (tail, head, weight, _) in enumerate(arcs):
            if distance[tail] + weight < distance[head]:
                distance[head] = distance[tail] + weight
                via[head] = index
                last = head
        if last == -1:
            return None
    return _cycle_through(last, count, arcs, via)


def _cycle_through(start: int, count: int, arcs: Sequence[Arc], via: list[int]) -> list[int] | None:
    """The cycle of the predecessor graph reached by walking back from ``start``, as arc indices."""
    at = start
    for _ in range(count):
        if via[at] == -1:
            return None
        at = arcs[via[at]][0]
    cycle: list[int] = []
    first = at
    while len(cycle) <= count:
        index = via[at]
        cycle.append(index)
        at = arcs[index][0]
        if at == first:
            cycle.reverse()
            return cycle if sum(arcs[i][2] for i in cycle) < 0 else None
    return None
