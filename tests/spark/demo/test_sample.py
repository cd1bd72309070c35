"""The demo's generated history: deterministic, and it holds what each metric of the report needs."""

from __future__ import annotations

import random

from spark_udfs.demo import sample
from spark_udfs.demo.sample import HOT_KBPS, START, STEP, generate_history


def test_the_same_arguments_give_the_same_history() -> None:
    assert generate_history(20, 8, seed=5) == generate_history(20, 8, seed=5)
    assert generate_history(20, 8, seed=5) != generate_history(20, 8, seed=6)


def test_a_rolling_restart_restarts_every_member_once() -> None:
    """Each planned restart names its member, so a dynamic member that rejoins is not restarted twice."""
    rnd = random.Random(1)  # noqa: S311 - a seeded simulation
    group = sample._Group("g", "classic", False, ["t", "u"], {"t": 6, "u": 6}, [])
    group.members = [sample._new_member(group, rnd, ["t"]) for _ in range(4)]
    original = [m.member_id for m in group.members]
    planned = [f"restart:{member_id}" for member_id in original]
    for step, event in enumerate(planned):
        sample._apply(group, event, rnd, START + step * STEP, sample.History())
        now = [m.member_id for m in group.members]
        assert now[step + 1 :] == original[step + 1 :]  # members not yet restarted are untouched, in place
        assert now[step] != original[step]
    assert not set(original) & {m.member_id for m in group.members}
    assert len(group.members) == 4


def test_static_restart_keeps_the_instance_id() -> None:
    rnd = random.Random(2)  # noqa: S311 - a seeded simulation
    group = sample._Group("g", "classic", True, ["t", "u"], {"t": 6, "u": 6}, [])
    group.members = [sample._new_member(group, rnd, ["t"]) for _ in range(2)]
    before = [(m.member_id, m.instance) for m in group.members]
    sample._apply(group, f"restart:{before[0][0]}", rnd, START, sample.History())
    assert group.members[0].instance == before[0][1]
    assert group.members[0].member_id != before[0][0]
    assert (group.members[1].member_id, group.members[1].instance) == before[1]


def test_the_history_has_hot_and_cold_topics_scale_outs_and_long_lived_static_members() -> None:
    history = generate_history(40, 24, seed=7)
    topic_weights = {t: w for t, p, w, since in history.weights if p is None and since is None}
    assert set(topic_weights) == {t for t, _, _ in history.topics}  # every topic has a weight
    assert any(w in HOT_KBPS for w in topic_weights.values())
    assert any(w < min(HOT_KBPS) for w in topic_weights.values())
    assert any(p is not None for _, p, _, _ in history.weights)  # a hot partition
    assert any(since is not None for _, _, _, since in history.weights)  # traffic that changes
    # Scale-out groups: orders is hot, payments cold, and they grow past their first size.
    scale_out = {g for g, *_ in history.membership if f"{g}.orders" in topic_weights}
    assert scale_out
    for group in scale_out:
        assert topic_weights[f"{group}.orders"] > topic_weights[f"{group}.payments"]
    sizes: dict[str, dict[object, int]] = {}
    for g, ts, *_ in history.membership:
        if g in scale_out:
            sizes.setdefault(g, {}).setdefault(ts, 0)
            sizes[g][ts] += 1
    assert any(max(s.values()) > s[START] for s in sizes.values())
    # Static-core groups: some instance ids are present in every snapshot of their group.
    stamps: dict[str, set[object]] = {}
    core: dict[tuple[str, str], set[object]] = {}
    for g, ts, _, _, instance, _ in history.membership:
        stamps.setdefault(g, set()).add(ts)
        if instance is not None and "-core-" in instance:
            core.setdefault((g, instance), set()).add(ts)
    assert core
    assert all(seen == stamps[g] for (g, _), seen in core.items())
