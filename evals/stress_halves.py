"""Calibrate the stress scorer's few weights on one half of each dev set, report the other half.

    python -m evals.stress_halves --data ../shared/data/dev                      # shipped weights
    python -m evals.stress_halves --data DIR --grid negated_relief=1,0,-0.5 --grid intensified=1,1.3

A set's dialogues are split in two halves by a hash of the session id (whole dialogues, so the
tagger's context stays intact): `A` calibrates, `B` is held out. For every combination of the
`--grid` values (stress-dimension fields of the lexicon, overriding `state/tagging/resources/tagging.yaml`)
it prints stress AUROC against negative sentiment on A, B and the full set, then the combination
best on A per set and what it scores on B, and the one combination best on A over all the sets
(mean AUROC: the lexicon holds one value for both languages) with what it scores on B and full.
Runs the same write-time stage as `evals.tagger` (tagging, entropy cut, each unit's emotion with
the default head's and the carry). Weights chosen here are a handful of blend factors written
back into the lexicon by hand; nothing is trained.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np

from evals.metrics import auroc
from evals.tagger import STRESS_SETS, Predictions, Row, iter_sets, predict
from state.tagging.lexicon import TagLexicon, load_lexicon
from state.tagging.tagger import TagConfig

SCOPE_FIELDS = ("negated_relief", "negated_raise", "intensified")
DIM_FIELDS = ("valence_neg", "valence_pos", "base", "carry_weight", "carry_memory")


def half_of(session: str) -> int:
    """0 (calibration) or 1 (held out), stable across runs and machines.

    >>> half_of("meld-dev/0") in (0, 1)
    True
    """
    return int(hashlib.sha1(session.encode("utf-8")).hexdigest()[:8], 16) % 2  # noqa: S324 - a split, not security


def with_stress(lex: TagLexicon, overrides: dict[str, float]) -> TagLexicon:
    """The lexicon with the stress dimension's fields (or its cue scope's) replaced."""
    stress = lex.emotions[0]
    scope = stress.scope
    for key, value in overrides.items():
        if key in SCOPE_FIELDS:
            scope = replace(scope, **{key: value})  # type: ignore[arg-type]  # float fields, names checked above
        elif key in DIM_FIELDS:
            stress = replace(stress, **{key: value})  # type: ignore[arg-type]
    return replace(lex, emotions=(replace(stress, scope=scope), *lex.emotions[1:]))


def scores(rows: list[Row], preds: Predictions) -> dict[str, float]:
    y = np.array([row.labels.get("sentiment") == "negative" for row in rows])
    s = np.array(preds.stress)
    half = np.array([half_of(row.session) for row in rows])
    return {"A": auroc(y[half == 0], s[half == 0]), "B": auroc(y[half == 1], s[half == 1]), "full": auroc(y, s)}


def parse_grid(specs: list[str]) -> list[dict[str, float]]:
    axes: list[list[tuple[str, float]]] = []
    for spec in specs:
        key, _, values = spec.partition("=")
        if key not in SCOPE_FIELDS + DIM_FIELDS or not values:
            raise SystemExit(f"--grid {spec!r}: expected FIELD=v1,v2 with FIELD in {SCOPE_FIELDS + DIM_FIELDS}")
        axes.append([(key, float(v)) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [{}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.stress_halves", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder holding the dev sets")
    parser.add_argument("--grid", action="append", default=[], help="FIELD=v1,v2,... (repeatable)")
    parser.add_argument("--sets", default=",".join(STRESS_SETS), help="comma-separated")
    args = parser.parse_args(argv)
    from evals.embed_cache import CachedEmbedder
    from evals.heads import head_for
    from sinks.models.embedders import load_embedder
    from sinks.models.tagger_model import EmbeddingHead

    head = head_for("default")
    if isinstance(head, EmbeddingHead):
        cached = CachedEmbedder(load_embedder(head.embedder_kind, head.embedder_model))
        head.bind(cached)
    base = load_lexicon()
    grid = parse_grid(args.grid)
    by_combo: dict[str, dict[str, dict[str, float]]] = {}
    for name, rows in iter_sets(args.data, tuple(n for n in args.sets.split(",") if n)):
        best: tuple[float, dict[str, float], dict[str, float]] | None = None
        for overrides in grid:
            got = scores(rows, predict(rows, with_stress(base, overrides), head, TagConfig()))
            label = " ".join(f"{k}={v:g}" for k, v in overrides.items()) or "shipped"
            by_combo.setdefault(label, {})[name] = got
            print(f"{name:<6} {label:<60} A {got['A']:.4f}  B {got['B']:.4f}  full {got['full']:.4f}", flush=True)
            if best is None or got["A"] > best[0]:
                best = (got["A"], overrides, got)
        if best is not None and len(grid) > 1:
            _, overrides, got = best
            label = " ".join(f"{k}={v:g}" for k, v in overrides.items())
            print(f"{name:<6} best on A: {label}  →  B {got['B']:.4f}  full {got['full']:.4f}")
    if len(grid) > 1 and by_combo:
        label, per_set = max(by_combo.items(), key=lambda kv: float(np.mean([g["A"] for g in kv[1].values()])))
        shown = "  ".join(f"{n} B {g['B']:.4f} full {g['full']:.4f}" for n, g in per_set.items())
        print(f"all    best mean on A: {label}  →  {shown}")
    if isinstance(head, EmbeddingHead):
        cached.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
