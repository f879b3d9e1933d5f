"""The tagger evaluation: metrics, label mapping, the command, the k-fold reference, the disk cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from evals.embed_cache import CachedEmbedder
from evals.metrics import auroc, f1_table
from evals.tagger import main as eval_main
from evals.tagger import predict, read_set
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tagger_eval"
ROOT = Path(__file__).resolve().parents[2]
# ../shared/data/dev beside the repository (or beside the worktrees folder of a worktree).
DEV = next(
    (p for p in (ROOT.parent / "shared/data/dev", ROOT.parent.parent / "shared/data/dev") if p.exists()), ROOT / "-"
)


def test_f1_is_over_the_gold_classes() -> None:
    table = f1_table(["a", "a", "b", "b"], ["a", "c", "b", "b"])
    assert set(table["per_class"]) == {"a", "b"}  # type: ignore[arg-type]
    assert table["macro"] == pytest.approx((2 / 3 + 1.0) / 2)
    assert f1_table([], [])["macro"] == 0.0


def test_auroc_handles_ties_and_degenerate_labels() -> None:
    assert auroc(np.array([True, False]), np.array([1.0, 0.0])) == 1.0
    assert auroc(np.array([True, False]), np.array([0.5, 0.5])) == 0.5
    assert np.isnan(auroc(np.array([True, True]), np.array([0.1, 0.2])))


def test_eval_command_on_fixture_sets(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["--data", str(FIXTURES), "--head", "none", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    by = {(r["set"], r["metric"]): r for r in results}
    assert by[("dailydialog", "intent_macro_f1")]["macro_f1"] == pytest.approx(1.0)
    assert by[("meld", "stress_auroc")]["auroc"] == pytest.approx(1.0)
    assert by[("cped", "intent_macro_f1")]["n"] == 5  # the commitment_candidate turn is left out


def test_eval_reports_missing_sets_and_prints_targets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["--data", str(tmp_path), "--head", "none"]) == 0
    captured = capsys.readouterr()
    assert "[skip]" in captured.err
    assert eval_main(["--data", str(FIXTURES), "--head", "none", "--sets", "dailydialog"]) == 0
    assert "target ≥ 0.65" in capsys.readouterr().out


def test_recallflow_eval_tagger_alias() -> None:
    from flows.cli import app

    result = CliRunner().invoke(app, ["eval", "tagger", "--data", str(FIXTURES), "--head", "none"])
    assert result.exit_code == 0, result.output
    assert "intent_macro_f1" in result.output


def test_kfold_reference_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evals.embed_cache
    from evals.kfold import kfold_reports

    monkeypatch.setattr(evals.embed_cache, "CACHE_DIR", tmp_path)
    rows = read_set(FIXTURES / "cped")
    preds = predict(rows, load_lexicon(), None, TagConfig())
    reports = kfold_reports({"cped": (rows, preds)}, folds=2, embedder_kind="static")
    metrics = {r["metric"] for r in reports}
    assert any("kfold head + lexicon" in str(m) for m in metrics)
    assert any(str(m).startswith("stress_auroc") for m in metrics)


def test_disk_cache_round_trips(tmp_path: Path, static_embedder) -> None:
    first = CachedEmbedder(static_embedder, tmp_path)
    a = first.passage(["你好", "hello"])
    first.save()
    second = CachedEmbedder(static_embedder, tmp_path)
    assert np.allclose(second.passage(["hello", "你好"]), a[::-1])
    assert second.passage([]).shape == (0, static_embedder.dim)
    assert np.allclose(second.query(["hi"]), static_embedder.query(["hi"]))


def test_two_runs_sharing_the_cache_keep_each_others_vectors(tmp_path: Path, static_embedder) -> None:
    first, second = CachedEmbedder(static_embedder, tmp_path), CachedEmbedder(static_embedder, tmp_path)
    first.passage(["only the first run saw this"])
    second.passage(["only the second run saw this"])
    first.save()
    second.save()
    assert not list(tmp_path.glob("*.tmp.npz"))
    (saved,) = tmp_path.glob("*.npz")
    with np.load(saved) as z:
        assert len(z.files) == 2


@pytest.mark.skipif(not (DEV / "dailydialog").exists(), reason="dev data not present (../shared/data/dev)")
def test_lexicon_beats_keyword_rules_on_a_dev_slice() -> None:
    rows = read_set(DEV / "dailydialog")[:600]
    preds = predict(rows, load_lexicon(), None, TagConfig())
    gold = [r.labels["intent"] for r in rows]
    mapped = [{"clarify": "question", "refuse": "commitment"}.get(p, p) for p in preds.labels]
    assert f1_table(gold, mapped)["macro"] > 0.55
