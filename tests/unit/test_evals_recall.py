"""The evaluation harness pieces: honest baselines, the end-to-end scenario loader, the gate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evals.baselines import Turn, TurnBaselines, rrf
from evals.gate import compare
from evals.scenarios_e2e import DATA, HALVES, Tally, checks, extra_files, load, with_held_out_all
from sinks.models.embedders import load_embedder


def test_rrf_fuses_ranks() -> None:
    assert rrf([["a", "b"], ["b", "c"]], 3) == ["b", "a", "c"]


def test_baselines_see_one_users_earlier_turns_only() -> None:
    turns = [
        Turn("1", "u1", 100.0, "Customer", "my parcel is late"),
        Turn("2", "u2", 100.0, "Customer", "my parcel is late"),
        Turn("3", "u1", 900.0, "Customer", "my parcel is late again"),
    ]
    emb = load_embedder("static")
    ranked = TurnBaselines(turns, emb).rank("parcel late", emb.query(["parcel late"])[0], "u1", 500.0, 3)
    assert ranked == {"dense": ["1"], "bm25": ["1"], "rrf": ["1"]}


@pytest.mark.parametrize("half", HALVES)
def test_the_scenario_files_hold_what_their_readme_promises(half: str) -> None:
    cases, events = load(DATA / f"{half}.yaml", half)
    assert len(cases) >= 40
    assert sum(1 for c in cases if not c.expect) >= 10
    texts = {str(e["text"]) for e in events if e["user_id"] in {c.user for c in cases}}
    for c in cases:
        assert all(any(x in t for t in texts) for x in c.expect), c.sid
    assert len({c.user for c in cases}) == len(cases)


def test_the_diagnostic_batches_are_found_and_kept_out_of_both() -> None:
    assert {"diagnostic", "diagnostic_2"} <= set(extra_files())
    assert not set(extra_files()) & set(HALVES)


@pytest.mark.parametrize("name", extra_files())
def test_the_diagnostic_scenarios_have_answers_in_their_turns_and_users_of_their_own(name: str) -> None:
    cases, events = load(DATA / f"{name}.yaml", name)
    texts = {str(e["text"]) for e in events}
    for c in cases:
        assert all(any(x in t for t in texts) for x in c.expect), c.sid
    others = {
        c.user
        for half in (*HALVES, *(n for n in extra_files() if n != name))
        for c in load(DATA / f"{half}.yaml", half)[0]
    }
    assert len({c.user for c in cases}) == len(cases)
    assert not {c.user for c in cases} & others


def test_a_scenario_of_another_tenant_is_written_and_asked_there(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "- {id: x, kind: none, lang: en, user: u, tenant: bank, sessions: [{at: 2025-01-01 10:00, turns: [[c, hi]]}],"
        " others: [{user: v, sessions: [{at: 2025-01-01 11:00, turns: [[c, hello]]}]}],"
        " ask: {at: 2025-01-02 10:00, text: q}, expect: []}\n"
        "- {id: y, kind: none, lang: en, user: w, sessions: [{at: 2025-01-01 10:00, turns: [[c, hi]]}],"
        " ask: {at: 2025-01-02 10:00, text: q}, expect: []}\n",
        encoding="utf-8",
    )
    cases, events = load(path, "tuning")
    assert [c.tenant for c in cases] == ["bank", "shop"]
    assert {e["user_id"]: e["tenant_id"] for e in events} == {"u": "bank", "v": "bank", "w": "shop"}


def test_a_bad_scenario_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text(
        "- {id: x, kind: none, lang: en, user: u, sessions: [{at: 2025-01-01 10:00, turns: [[z, hi]]}],"
        " ask: {at: 2025-01-02 10:00, text: q}, expect: []}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="role"):
        load(bad, "tuning")
    bad.write_text("a: 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="list of scenarios"):
        load(bad, "tuning")


def test_the_checks_read_the_figures() -> None:
    ours, base = Tally(), Tally()
    ours.p1, ours.hit3, ours.abstained_none = [True] * 10, [True] * 10, [True, True, False]
    base.p1, base.hit3 = [True] * 7 + [False] * 3, [True] * 10
    figures = {
        "held_out": {
            "recallflow": ours.summary(),
            "dense": base.summary(),
            "bm25": base.summary(),
            "rrf": base.summary(),
        }
    }
    verdicts = checks(figures, "held_out")
    assert all(v for k, v in verdicts.items() if "0.80" not in k)
    assert not verdicts["held_out: nothing-relevant cases without a cue >= 0.80"]
    assert np.isnan(Tally().summary()["precision_at_1"])


def test_the_gate_fails_on_a_drop_or_a_missing_figure() -> None:
    recorded = {"e2e.p1": 0.9, "locomo.r5": 0.7}
    assert compare({"e2e.p1": 0.89, "locomo.r5": 0.65}, recorded, ["e2e"], 0.02) == []
    assert compare({"e2e.p1": 0.87}, recorded, ["e2e"], 0.02) == ["e2e.p1: 0.8700 < recorded 0.9000 - 0.02"]
    assert compare({}, recorded, ["locomo"], 0.02) == ["locomo.r5: recorded 0.7000 but not measured"]


def test_the_held_out_batches_are_also_scored_together() -> None:
    first, second = Tally(), Tally()
    first.p1, first.hit3, first.abstained_none, first.leaks = [True, False], [True, True], [True], 0
    second.p1, second.hit3, second.abstained_none, second.leaks = [True], [False], [False, False, True], 1
    first.by_kind["again"].append(True)
    second.by_kind["again"].append(False)
    halves = with_held_out_all(
        {"tuning": {"recallflow": Tally()}, "held_out": {"recallflow": first}, "held_out_2": {"recallflow": second}}
    )
    together = halves["held_out_all"]["recallflow"]
    assert together.p1 == [True, False, True]
    assert together.hit3 == [True, True, False]
    assert together.abstained_none == [True, False, False, True]
    assert together.leaks == 1
    assert together.by_kind["again"] == [True, False]
    assert first.p1 == [True, False]  # the batches themselves are left as they were
    assert "held_out_all" not in with_held_out_all({"held_out": {"recallflow": first}})
