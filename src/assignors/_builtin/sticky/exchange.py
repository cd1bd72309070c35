"""The sticky core's exact improvement phase: cycle cancelling on the exchange graph of small groups.

After a builder, the assignment is valid and as balanced as possible (level 2: the most
even member loads, :mod:`assignors._builtin.sticky.balance`). Levels 2 to 4 of the objective are a
convex-cost transportation problem: partitions to eligible members, each member's load
costing ``W2 x load**2`` and each placement ``W3 x [taken from its owner] + W4 x [off its
member's racks]``, and with racks ``W4' x [taken from an owner that held it off its
racks]`` (level 4's tie-break: such a partition is free to move at level 3, as in Kafka,
but a cooperative follow-up round must not move it for nothing, or the group would not
settle in two rounds). Level 5 (per-topic spread) enters as a convex proxy: the sum of
squared per-topic counts of every member, weighted below the other levels.

An assignment is optimal for such costs when its residual graph has no negative cycle.
The graph here has one node per member and one per (member, topic) *slot*; an arc from
slot ``(a, T)`` to slot ``(b, T)`` moves the cheapest partition of ``T`` from ``a`` to
``b``; arcs between a member and its slots change its count of ``T`` (the convex proxy).
Bellman-Ford finds a negative cycle (:mod:`assignors._builtin.sticky.cycles`); moving
partitions along it lowers the cost; this repeats until none is left (each cycle lowers an
integer cost, so it ends).

Loads change along paths instead of cycles: a member passes one partition down a chain
to another member. A *sink* node joins such paths into cycles: an arc from a member to
the sink (it gains one) costs ``W2 x (2 x load + 1)``, one from the sink to a member (it
loses one) ``-W2 x (2 x load - 1)`` (with identical subscriptions the same, written as
"``N // M`` may gain, ``N // M + 1`` may lose"). A cycle through the sink that costs
nothing at level 2 moves a member's one extra partition to another member of the same
level of the most even vector: which member of a class carries the extra one is chosen
for the fewest partitions taken from their owners. So the phase is exact at levels 2, 3
and 4.

Without racks, last, swaps of two partitions between two members that cost nothing at
levels 3 and 4 and lower the per-topic spread itself (not its proxy) are made until none
is left. (With racks, a partition kept off its owner's racks is free to move in the next
round, where the proxy could undo such a swap: the fixpoint would break.)

The phase runs on small groups only (members x partitions up to :data:`LIMIT`, the size
of the oracle corpus's groups; with identical subscriptions and no racks, where the
builder is exact at levels 3 and 4, up to :data:`SHIFT_SPREAD`), and only when a
partition is new to its member or racks apply. It searches nothing when a certificate
shows the builder's result optimal: every topic's spread at most one (the proxy and level
5 at their minimum, whatever the loads), no rack mismatch, and each member keeping all it
could (with identical subscriptions its load or what it owns, the ``N // M + 1`` loads to
the members owning the most; with mixed subscriptions everything it owns of its topics).
Most rebalances of a Spark replay stop there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assignors._builtin.sticky.cycles import negative_cycle

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from assignors._builtin.sticky.claims import State
    from assignors._builtin.sticky.racks import RackInfo
    from assignors._core.model import MemberId, Topic, TopicPartition

logger = logging.getLogger(__name__)

__all__ = ["LIMIT", "SHIFT_SPREAD", "improve", "snapshot"]

LIMIT = 400  # members x partitions (6 x 40 in the oracle corpus, 8 x 48 the test kit's largest): above it
# the builders' result stands
SHIFT_SPREAD = 1_000  # identical subscriptions without racks: the phase runs up to this many members x partitions

# A move: the partition, its giver and its receiver. An arc: tail node, head node, weight
# and its move (None: an arc that only changes a count).
_Move = tuple["TopicPartition", "MemberId", "MemberId"]
_Arc = tuple[int, int, int, "_Move | None"]


def snapshot(
    valid: Mapping[MemberId, Sequence[TopicPartition]], partitions_per_topic: Mapping[Topic, int], eligible_count: int
) -> Mapping[MemberId, Sequence[TopicPartition]]:
    """The valid claims as they are before a builder trims its kept lists, when the phase may run (else empty)."""
    if sum(partitions_per_topic.values()) * eligible_count > max(LIMIT, SHIFT_SPREAD):
        return {}
    return {member: tuple(partitions) for member, partitions in valid.items()}


def improve(  # noqa: PLR0913, PLR0917 - the algorithm's whole state
    partitions_per_topic: Mapping[Topic, int],
    member_topics: Mapping[MemberId, frozenset[Topic]],
    members: Sequence[MemberId],
    claims: Mapping[MemberId, Sequence[TopicPartition]],
    racks: RackInfo,
    state: State,
    identical: bool,  # noqa: FBT001 - internal
) -> None:
    """Improve the builder's result in ``state`` at levels 3-5 (small groups; see the module docstring).

    ``claims``: each member's valid claims, the partitions it owns.
    """
    total = sum(partitions_per_topic.values())
    size = total * len(members)
    if len(members) < 2:  # noqa: PLR2004 - one member has no choice
        return
    if size > (SHIFT_SPREAD if identical and not racks.enabled else LIMIT):
        return  # identical without racks, the builder is exact at levels 3 and 4: only the spread could gain
    if not any(state.new[m] for m in members) and not racks.enabled:
        return  # everyone keeps what it owned: any move would revoke
    owners = {tp: member for member, partitions in claims.items() for tp in partitions}
    _Exchange(partitions_per_topic, member_topics, members, owners, racks, state, identical).run()


class _Exchange:
    """The holdings as per-slot lists, the arc costs and the cycle cancelling."""

    def __init__(  # noqa: PLR0913, PLR0917 - the algorithm's whole state
        self,
        partitions_per_topic: Mapping[Topic, int],
        member_topics: Mapping[MemberId, frozenset[Topic]],
        members: Sequence[MemberId],
        owners: Mapping[TopicPartition, MemberId],
        racks: RackInfo,
        state: State,
        identical: bool,  # noqa: FBT001 - internal
    ) -> None:
        self._state = state
        self._racks = racks
        self._identical = identical
        self._members = list(members)
        total = sum(partitions_per_topic.values())
        self._w_off = total * total + 1  # taken from an owner that held it off its racks
        self._w4 = self._w_off * (total + 1)
        self._w3 = self._w4 * (total + 1)
        self._w2 = self._w3 * (total + 1)  # one more in a member's squared load
        self._topics = sorted(partitions_per_topic)
        self._subscribers = {t: [m for m in members if t in member_topics[m]] for t in self._topics}
        self._member_topics = member_topics
        enabled = racks.enabled
        # An owner counts (level 3) only when the partition is on one of its racks.
        self._owner = {tp: o for tp, o in owners.items() if not enabled or racks.local(o, tp)}
        self._claimer = owners
        self._held: dict[tuple[MemberId, Topic], list[TopicPartition]] = {}
        for member in members:
            for topic in sorted(member_topics[member]):
                self._held[member, topic] = []
            for tp in (*state.kept[member], *state.new[member]):
                self._held[member, tp[0]].append(tp)
        self._load = {m: len(state.kept[m]) + len(state.new[m]) for m in members}
        self._floor, extra = divmod(total, len(members))
        self._ceiling = self._floor + (1 if extra else 0)
        self._start = {tp: m for (m, _), parts in self._held.items() for tp in parts}
        self._node = {m: i for i, m in enumerate(members)}
        self._slot = {key: len(members) + i for i, key in enumerate(self._held)}
        self._sink = len(members) + len(self._held)
        self._allowed = {topic: set(subscribers) for topic, subscribers in self._subscribers.items()}

    def _cost(self, tp: TopicPartition, member: MemberId) -> int:
        owner = self._owner.get(tp)
        cost = self._w3 if owner is not None and owner != member else 0
        if owner is None and self._racks.enabled:
            claimer = self._claimer.get(tp)
            if claimer is not None and claimer != member:
                cost += self._w_off
        if self._racks.enabled and not self._racks.local(member, tp):
            cost += self._w4
        return cost

    def _arcs(self, *, sink: bool) -> list[_Arc]:
        """The residual graph; with ``sink``, arcs through the sink change loads."""
        arcs = self._count_arcs()
        slot, held = self._slot, self._held
        for topic in self._topics:
            subscribers = self._subscribers[topic]
            for giver in subscribers:
                parts = held[giver, topic]
                if not parts:
                    continue
                classes = self._classes(giver, parts)
                for receiver in subscribers:
                    if receiver == giver:
                        continue
                    best = min((self._cost(tp, receiver) - base, tp) for base, tp in classes)
                    arcs.append((slot[giver, topic], slot[receiver, topic], best[0], (best[1], giver, receiver)))
        if sink:
            arcs.extend(self._sink_arcs())
        return arcs

    def _sink_arcs(self) -> list[_Arc]:
        """A member gains one (to the sink) or loses one (from it), at its level-2 cost."""
        arcs: list[_Arc] = []
        load, node, sink = self._load, self._node, self._sink
        if self._identical:
            if self._ceiling > self._floor:
                for member in self._members:
                    if load[member] == self._floor:
                        arcs.append((node[member], sink, 0, None))  # it may gain one
                    elif load[member] == self._ceiling:
                        arcs.append((sink, node[member], 0, None))  # it may lose one
            return arcs
        w2 = self._w2
        for member in self._members:
            arcs.append((node[member], sink, w2 * (2 * load[member] + 1), None))  # it gains one
            if load[member]:
                arcs.append((sink, node[member], -w2 * (2 * load[member] - 1), None))  # it loses one
        return arcs

    def _count_arcs(self) -> list[_Arc]:
        """Between each member and its slots: one more or one fewer of the topic (the convex proxy)."""
        arcs: list[_Arc] = []
        slot, node = self._slot, self._node
        for (member, topic), parts in self._held.items():
            count = len(parts)
            here = slot[member, topic]
            arcs.append((here, node[member], 2 * count + 1, None))
            if count:
                arcs.append((node[member], here, 1 - 2 * count, None))
        return arcs

    def _classes(self, member: MemberId, parts: list[TopicPartition]) -> list[tuple[int, TopicPartition]]:
        """One representative (the smallest) per class of partitions with the same costs everywhere."""
        seen: dict[tuple[MemberId | None, frozenset[str] | None], TopicPartition] = {}
        enabled, layout = self._racks.enabled, self._racks.layout
        for tp in parts:
            key = (self._claimer.get(tp), layout(tp) if enabled else None)
            current = seen.get(key)
            if current is None or tp < current:
                seen[key] = tp
        return [(self._cost(tp, member), tp) for tp in sorted(seen.values())]

    def run(self) -> None:
        even = self._even()
        settled = even and self._at_bound()  # the builder's result is provably optimal: no cycle to find
        cycles = 0 if settled else self._cancel()
        swaps = 0 if self._racks.enabled or (settled or self._even()) else self._even_spread()
        if cycles or swaps:
            self._write_back()
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("sticky exchange: %d cycles and %d swaps improved the assignment", cycles, swaps)

    def _even(self) -> bool:
        """Every topic's spread at most one: the proxy (and level 5) at its minimum, whatever the loads."""
        held = self._held
        for topic, subscribers in self._subscribers.items():
            counts = [len(held[m, topic]) for m in subscribers]
            if max(counts) - min(counts) > 1:
                return False
        return True

    def _at_bound(self) -> bool:
        """Nothing to win at levels 3 and 4: no rack mismatch, and each member keeps all it could keep.

        With identical subscriptions a member keeps at most its load and at most what it
        owns, and the loads ``N // M + 1`` go to those owning the most; with mixed
        subscriptions (loads may shift within the most even vectors) the bound is all it owns.
        """
        racks, owner, allowed = self._racks, self._owner, self._allowed
        owned = dict.fromkeys(self._members, 0)
        kept = dict.fromkeys(self._members, 0)
        for tp, member in owner.items():
            if member in owned and member in allowed[tp[0]]:
                owned[member] += 1
        for (member, _), parts in self._held.items():
            for tp in parts:
                if owner.get(tp) == member:
                    kept[member] += 1
                if racks.enabled and not racks.local(member, tp):
                    return False
        if self._identical:
            floor, extra = self._floor, len(self._start) % len(self._members)
            over = sum(1 for m in self._members if owned[m] > floor)
            return sum(kept.values()) == sum(min(n, floor) for n in owned.values()) + min(extra, over)
        return all(kept[m] == owned[m] for m in self._members)

    def _spread(self, topic: Topic) -> int:
        counts = [len(self._held[m, topic]) for m in self._subscribers[topic]]
        return max(counts) - min(counts)

    def _even_spread(self) -> int:
        """Swaps of two partitions between two members that lower the per-topic spread itself; returns how many.

        The proxy of the cycles is not the spread: a swap that evens two topics may add
        squares. A swap keeps every load, and is made only when it costs nothing at levels 3
        and 4 (no racks here: the cost is the owners alone). The first swap in the order
        (member, member, topic, topic) is made, then the search starts again.
        """
        swaps = 0
        while (swap := self._first_swap()) is not None:
            a, b, p, q = swap
            self._apply([(p, a, b), (q, b, a)])
            swaps += 1
        return swaps

    def _first_swap(self) -> tuple[MemberId, MemberId, TopicPartition, TopicPartition] | None:
        """The first swap (in member, member, topic, topic order) that lowers the spread and is free at level 3."""
        held, cost, members = self._held, self._cost, self._members
        for i, j, p_topic, q_topic in sorted(self._narrowing_swaps()):
            a, b = members[i], members[j]
            p = min(held[a, p_topic], key=lambda tp: (cost(tp, b) - cost(tp, a), tp))
            q = min(held[b, q_topic], key=lambda tp: (cost(tp, a) - cost(tp, b), tp))
            if cost(p, b) + cost(q, a) <= cost(p, a) + cost(q, b):
                return a, b, p, q
        return None

    def _narrowing_swaps(self) -> set[tuple[int, int, Topic, Topic]]:
        """Every swap (``a``'s index, ``b``'s, the topic ``a`` gives, the one ``b`` gives) that lowers the spread.

        A swap lowers the spread only when one of its topics passes from its only holder of
        the most or to its only holder of the fewest: the search starts from those members.
        """
        held, allowed = self._held, self._allowed
        stats: dict[Topic, tuple[int, int, int, int]] = {}
        for topic, subscribers in self._subscribers.items():
            counts = [len(held[m, topic]) for m in subscribers]
            high, low = max(counts), min(counts)
            stats[topic] = (high, counts.count(high), low, counts.count(low))
        found: set[tuple[int, int, Topic, Topic]] = set()
        for topic, subscribers in self._subscribers.items():
            high, highs, low, lows = stats[topic]
            if high - low < 2:  # noqa: PLR2004 - a spread of one cannot narrow
                continue
            for special in subscribers:
                count = len(held[special, topic])
                if not ((count == high and highs == 1) or (count == low and lows == 1)):
                    continue
                for other in subscribers:
                    giver, receiver = (special, other) if count == high else (other, special)
                    if other == special or receiver not in allowed[topic] or not held[giver, topic]:
                        continue
                    gain = self._narrowing(stats[topic], topic, giver, receiver)
                    found.update(self._swaps_back(stats, gain, topic, giver, receiver))
        return found

    def _swaps_back(
        self,
        stats: Mapping[Topic, tuple[int, int, int, int]],
        gain: int,
        topic: Topic,
        giver: MemberId,
        receiver: MemberId,
    ) -> Iterator[tuple[int, int, Topic, Topic]]:
        """The swaps in which ``receiver`` pays ``topic`` (changing the spread by ``gain``) back with another."""
        held, allowed, order = self._held, self._allowed, self._node
        for back in self._member_topics[receiver]:
            if back == topic or giver not in allowed[back] or not held[receiver, back]:
                continue
            if gain + self._narrowing(stats[back], back, receiver, giver) < 0:
                if order[giver] < order[receiver]:
                    yield order[giver], order[receiver], topic, back
                else:
                    yield order[receiver], order[giver], back, topic

    def _narrowing(self, stats: tuple[int, int, int, int], topic: Topic, giver: MemberId, receiver: MemberId) -> int:
        """How the spread of ``topic`` changes when ``giver`` passes one to ``receiver``.

        ``stats``: the topic's most and how many hold it, its fewest and how many hold that.
        """
        high, highs, low, lows = stats
        gives, gets = len(self._held[giver, topic]) - 1, len(self._held[receiver, topic]) + 1
        top = high + 1 if gets > high else high - 1 if gets < high and gives + 1 == high and highs == 1 else high
        bottom = low - 1 if gives < low else low + 1 if gives > low and gets - 1 == low and lows == 1 else low
        return top - bottom - high + low

    def _cancel(self) -> int:
        """Cancel negative cycles until none is left; returns how many."""
        cycles = 0
        while True:
            arcs = self._arcs(sink=True)
            cycle = negative_cycle(self._sink + 1, arcs)
            if cycle is None:
                return cycles
            self._apply(arcs[i][3] for i in cycle)
            cycles += 1

    def _apply(self, moves: Iterable[_Move | None]) -> list[_Move]:
        """Make the moves (None: an arc that moves nothing); returns the ones made."""
        done: list[_Move] = []
        for move in moves:
            if move is None:
                continue
            tp, giver, receiver = move
            self._held[giver, tp[0]].remove(tp)
            self._held[receiver, tp[0]].append(tp)
            self._load[giver] -= 1
            self._load[receiver] += 1
            done.append(move)
        return done

    def _write_back(self) -> None:
        """Moved partitions leave their lists; one back with its owner is kept, one taken from it unkept."""
        state = self._state
        holder = {tp: m for (m, _), parts in self._held.items() for tp in parts}
        arrivals: dict[MemberId, list[TopicPartition]] = {}
        for tp, member in holder.items():
            if self._start[tp] != member:
                arrivals.setdefault(member, []).append(tp)
        claimer = self._claimer.get
        for member in self._members:
            kept = state.kept[member]
            if any(holder[tp] != member for tp in kept):
                for tp in kept:
                    if holder[tp] != member:
                        state.unkept.setdefault(tp, member)
                kept = [tp for tp in kept if holder[tp] == member]
            new = [tp for tp in state.new[member] if holder[tp] == member]
            new.extend(sorted(arrivals.get(member, ())))
            kept.extend(tp for tp in new if claimer(tp) == member)
            state.kept[member] = kept
            state.new[member] = [tp for tp in new if claimer(tp) != member]
            state.load[member] = len(kept) + len(state.new[member])
